use clforge::prelude::*;

/// Material of a variable-coefficient diffusion step.
#[derive(Clone, Copy, Debug, Params)]
pub struct Material {
    pub dt: f64,
    pub inv_h2: f64,
}

/// Δt·∇·(D∇u) with face-averaged (harmonic) diffusivity, in double precision.
#[stencil(state = u)]
pub fn diffusion_f64(u: &Grid<f64>, d: &Grid<f64>, m: &Material) -> f64 {
    let dc = d.at(0, 0);
    let east = 2.0 * dc * d.at(1, 0) / (dc + d.at(1, 0));
    let west = 2.0 * dc * d.at(-1, 0) / (dc + d.at(-1, 0));
    let north = 2.0 * dc * d.at(0, 1) / (dc + d.at(0, 1));
    let south = 2.0 * dc * d.at(0, -1) / (dc + d.at(0, -1));
    let flux = east * (u.at(1, 0) - u.at(0, 0)) - west * (u.at(0, 0) - u.at(-1, 0)) + north * (u.at(0, 1) - u.at(0, 0))
        - south * (u.at(0, 0) - u.at(0, -1));
    u.at(0, 0) + m.dt * m.inv_h2 * flux
}
