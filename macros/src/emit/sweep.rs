//! The sweep's stores: the swept field written in place, through the block's tile, or with
//! the strip schedule's ring of recent values.

/// `c_state[c] = v;`: the swept field's point, in global memory.
pub fn store_global(state: &str, value: &str) -> String {
    format!("{state}[c] = {value};")
}

/// `t_state[t] = v;`: the point in the block's tile in local memory.
pub fn store_tiled(tile: &str, value: &str) -> String {
    format!("{tile}[t] = {value};")
}

/// The strip schedule's store: the point in global memory and, where `ring` (a fixed boundary:
/// no clamped read can land on a point the ring does not hold), in the row's ring of recent
/// new values.
pub fn store_strip(state: &str, ty: &str, value: &str, ring: bool) -> String {
    if ring {
        format!(
            "{{ const {ty} sw_v = {value}; {state}[c] = sw_v; sw_ring[sw_row * SW_K + (sw_x & (SW_K - 1))] = sw_v; }}"
        )
    } else {
        store_global(state, value)
    }
}
