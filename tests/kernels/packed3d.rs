use clforge::prelude::*;

/// A 3-D periodic update switched by a 1-bit mask read at the point and at neighbours, so the
/// tiled and march variants stage the mask (unpacked into their tiles).
#[stencil(boundary = periodic, packed(wall = 1))]
pub fn packed3d(u: &Grid3<f64>, wall: &Grid3<u8>, s: f64) -> f64 {
    if wall.at(0, 0, 0) == 1 {
        u.at(0, 0, 0)
    } else if wall.at(1, 0, 0) + wall.at(0, -1, 0) + wall.at(0, 0, 1) == 0 {
        u.at(0, 0, 0) + s * (u.at(1, 0, 0) + u.at(0, -1, 0) + u.at(0, 0, 1) - 3.0 * u.at(0, 0, 0))
    } else {
        -u.at(-1, 1, 0)
    }
}
