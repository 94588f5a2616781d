//! The element → global DOF map and the colourings of its elements (no two elements of a
//! colour share a DOF), as assembly needs them.

use super::*;

/// Element → global DOF map with orientation signs: element `e`'s local DOF `I` is global DOF
/// `index[e·ne + I]` and enters with sign `sign[e·ne + I]` (`±1`).
///
/// Its sizes fit the kernels' 31-bit indices: the DOFs, the entries of `index` and the
/// `elements · P` entries of the element-matrix store ([`DofMap::ke_len`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DofMap {
    pub(super) elements: usize,
    pub(super) per_element: usize,
    pub(super) dofs: usize,
    pub(super) packed: usize,
    pub(super) index: Vec<u32>,
    pub(super) sign: Vec<i8>,
}

impl DofMap {
    /// A map of `index.len() / per_element` elements over DOFs `0..dofs`. Fails with
    /// [`Error::InvalidConfig`] when `per_element` or `dofs` is 0, there is no element, `index`
    /// is not whole elements, an index is not below `dofs`, a sign is not `±1` or one element
    /// names a global DOF twice; with [`Error::LengthMismatch`] when `sign` and `index` differ
    /// in length; with [`Error::TooLarge`] when a size exceeds the kernels' indices.
    pub fn new(dofs: usize, per_element: usize, index: Vec<u32>, sign: Vec<i8>) -> Result<DofMap> {
        let bad = |msg: String| Err(Error::InvalidConfig(msg));
        if per_element == 0 {
            return bad("a dof map needs at least one DOF per element; `per_element` is 0".into());
        }
        if dofs == 0 {
            return bad("a dof map needs at least one global DOF; `dofs` is 0".into());
        }
        if index.is_empty() {
            return bad("a dof map needs at least one element; `index` is empty".into());
        }
        if !index.len().is_multiple_of(per_element) {
            return bad(format!(
                "dof map `index` has {} entries, not a whole number of elements of `per_element` = {per_element} DOFs",
                index.len()
            ));
        }
        if sign.len() != index.len() {
            return Err(Error::LengthMismatch {
                what: "dof map `sign` (one per entry of `index`)".into(),
                expected: index.len(),
                found: sign.len(),
            });
        }
        let elements = index.len() / per_element;
        index32(|| format!("a dof map of {dofs} DOFs"), dofs)?;
        index32(|| format!("a dof map of {} entries", index.len()), index.len())?;
        let packed = per_element
            .checked_mul(per_element + 1)
            .map(|v| v / 2)
            .and_then(|p| p.checked_mul(elements).map(|all| (p, all)));
        let Some((packed, _)) = packed.filter(|&(_, all)| all <= MAX_INDEX) else {
            return Err(Error::TooLarge {
                what: format!("the element matrices of {elements} elements of {per_element} DOFs"),
                detail: format!(
                    "their packed lower triangles exceed the sparse kernels' 31-bit indices (at most {MAX_INDEX})"
                ),
            });
        };
        // `owner[d]` is the last element seen naming DOF `d`: a repeat within one element.
        let mut owner = vec![usize::MAX; dofs];
        for (e, (dofs_e, signs_e)) in index
            .chunks_exact(per_element)
            .zip(sign.chunks_exact(per_element))
            .enumerate()
        {
            for (local, (&d, &s)) in dofs_e.iter().zip(signs_e).enumerate() {
                let Some(slot) = owner.get_mut(d as usize) else {
                    return bad(format!(
                        "dof map: local DOF {local} of element {e} is global DOF {d}, but there are {dofs} DOFs"
                    ));
                };
                if *slot == e {
                    return bad(format!(
                        "dof map: element {e} names global DOF {d} twice (again as local DOF {local}); \
                         an element's DOFs must be distinct"
                    ));
                }
                *slot = e;
                if s != 1 && s != -1 {
                    return bad(format!(
                        "dof map: local DOF {local} of element {e} has sign {s}; signs must be 1 or -1"
                    ));
                }
            }
        }
        Ok(DofMap {
            elements,
            per_element,
            dofs,
            packed,
            index,
            sign,
        })
    }

    /// Number of elements.
    pub fn elements(&self) -> usize {
        self.elements
    }

    /// Local DOFs per element, `ne`.
    pub fn per_element(&self) -> usize {
        self.per_element
    }

    /// Number of global DOFs: the rows of the assembled matrix.
    pub fn dofs(&self) -> usize {
        self.dofs
    }

    /// The global DOFs, element after element.
    pub fn index(&self) -> &[u32] {
        &self.index
    }

    /// The signs (`±1`), one per entry of [`DofMap::index`].
    pub fn sign(&self) -> &[i8] {
        &self.sign
    }

    /// Entries of one element's packed lower triangle, `P = ne(ne+1)/2`.
    pub fn packed(&self) -> usize {
        self.packed
    }

    /// Entries of the element-matrix store, `elements · P`.
    pub fn ke_len(&self) -> usize {
        self.elements * self.packed
    }

    /// The global DOFs of element `e` (empty past the last element).
    pub fn element_dofs(&self, e: usize) -> &[u32] {
        self.index.chunks_exact(self.per_element).nth(e).unwrap_or_default()
    }

    /// The signs of element `e` (empty past the last element).
    pub fn element_signs(&self, e: usize) -> &[i8] {
        self.sign.chunks_exact(self.per_element).nth(e).unwrap_or_default()
    }
}

/// The elements of each DOF, as a CSR adjacency (`ptr[d]..ptr[d + 1]` into `list`).
pub(super) struct ElementsByDof {
    pub(super) ptr: Vec<usize>,
    pub(super) list: Vec<u32>,
}

impl ElementsByDof {
    pub(super) fn new(map: &DofMap) -> ElementsByDof {
        let mut ptr = vec![0usize; map.dofs + 1];
        for &d in &map.index {
            ptr[d as usize + 1] += 1;
        }
        for d in 0..map.dofs {
            ptr[d + 1] += ptr[d];
        }
        let mut next = ptr.clone();
        let mut list = vec![0u32; map.index.len()];
        // Element ids fit `u32`: `DofMap::new` bounds the entries of `index`.
        for (e, dofs) in (0u32..).zip(map.index.chunks_exact(map.per_element)) {
            for &d in dofs {
                list[next[d as usize]] = e;
                next[d as usize] += 1;
            }
        }
        ElementsByDof { ptr, list }
    }

    pub(super) fn of(&self, dof: usize) -> &[u32] {
        &self.list[self.ptr[dof]..self.ptr[dof + 1]]
    }
}

/// Greedy colouring: elements in order take the lowest colour that no element sharing one of
/// their DOFs has taken, so no two elements of one colour share a global DOF. Returns the
/// elements of each colour, in increasing order; every element is in exactly one colour.
///
/// ```
/// use clforge_runtime::fem::sparse::{colour, DofMap};
/// // A ring of three 2-DOF elements needs three colours.
/// let ring = DofMap::new(3, 2, vec![0, 1, 1, 2, 2, 0], vec![1; 6])?;
/// assert_eq!(colour(&ring), [vec![0], vec![1], vec![2]]);
/// # Ok::<(), clforge_runtime::Error>(())
/// ```
pub fn colour(map: &DofMap) -> Vec<Vec<u32>> {
    let by_dof = ElementsByDof::new(map);
    // `colour_of[f]` is element f's colour (`usize::MAX`: not yet coloured); `taken[c] == e`
    // marks colour c as used by a neighbour of element e.
    let mut colour_of = vec![usize::MAX; map.elements];
    let mut taken: Vec<usize> = Vec::new();
    let mut colours: Vec<Vec<u32>> = Vec::new();
    for (e, id) in (0..map.elements).zip(0u32..) {
        for &d in map.element_dofs(e) {
            for &f in by_dof.of(d as usize) {
                let c = colour_of[f as usize];
                if c != usize::MAX {
                    taken[c] = e;
                }
            }
        }
        let c = (0..colours.len()).find(|&c| taken[c] != e).unwrap_or(colours.len());
        if c == colours.len() {
            colours.push(Vec::new());
            taken.push(usize::MAX);
        }
        colours[c].push(id);
        colour_of[e] = c;
    }
    colours
}

/// Checks that `colours` holds every element of `map` exactly once and that no two elements of
/// one colour share a global DOF (what makes [`assemble`]'s launches race-free).
pub fn check_colours(map: &DofMap, colours: &[Vec<u32>]) -> Result<()> {
    let bad = |msg: String| Err(Error::InvalidConfig(msg));
    let mut seen = vec![false; map.elements];
    // `last[d]` = (colour, element) that last named DOF d.
    let mut last = vec![(usize::MAX, 0u32); map.dofs];
    for (c, members) in colours.iter().enumerate() {
        for &e in members {
            let Some(s) = seen.get_mut(e as usize) else {
                return bad(format!(
                    "colour {c} holds element {e}, but the dof map has {} elements",
                    map.elements
                ));
            };
            if *s {
                return bad(format!("element {e} is coloured twice (again in colour {c})"));
            }
            *s = true;
            for &d in map.element_dofs(e as usize) {
                let slot = &mut last[d as usize];
                if slot.0 == c {
                    return bad(format!(
                        "elements {} and {e} of colour {c} share global DOF {d}; elements of one colour \
                         must not share a DOF (use `colour`)",
                        slot.1
                    ));
                }
                *slot = (c, e);
            }
        }
    }
    if let Some(e) = seen.iter().position(|s| !s) {
        return bad(format!(
            "element {e} is in no colour; every element must be coloured once"
        ));
    }
    Ok(())
}
