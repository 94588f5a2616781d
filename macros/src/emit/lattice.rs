//! The lattice rule's store: the site's new value, or its bit in the word of 32 sites of a
//! bit-packed state.

/// The store of a site's new `value`: into the state grid, or (`packed`) set as bit
/// `clforge_b` of the word `clforge_new`, branch-free (a `? :` here became a branch per site
/// on the H100).
pub fn store_site(state: &str, value: &str, packed: bool) -> String {
    if packed {
        format!("clforge_new |= (uint)(({value}) != 0) << clforge_b;")
    } else {
        format!("{state}[c] = {value};")
    }
}
