//! Transient heat on Gmsh meshes (`examples/meshes/convergence/`, made by Gmsh's Delaunay
//! meshers, quadratic nodes by Gmsh): `u̇ = Δu` on the unit square or cube with `u = 0` on the
//! boundary from `u = Π sin πx_k`, whose solution is `e^{−dim π² t} Π sin πx_k`. Conduction and
//! capacity are forms, Crank–Nicolson steps them on the device with a step small enough that
//! the time error is far below the space error, and the L2 error at `T` falls as `h^{p+1}` for
//! tri3, tri6 and tet10. (Linear tetrahedra on these few-cell Delaunay cubes measure erratic
//! orders, 3.2 then 1.6: the mesh quality, not the method; `poisson.rs` checks tet4 at `h²` on
//! Kuhn-cut cubes.)

use super::poisson::{Tet10Heat, Tri3Heat, Tri6Heat};
use super::*;

use clforge::runtime::element::form::time::{assemble, l2_error, Fixed, ThetaMethod};
use clforge::runtime::element::io::{read_msh, CellKind};
use clforge::runtime::element::sparse::CgOptions;

/// The L2 error at `t_end` on one mesh file, and its mean element size `h`.
fn heat_error<E: Element<Material = f64>>(file: &str, kind: CellKind, t_end: f64, steps: usize) -> (f64, f64) {
    let dev = common::device();
    let path = format!("{}/examples/meshes/convergence/{file}", env!("CARGO_MANIFEST_DIR"));
    let msh = read_msh(&path).unwrap();
    let mesh = msh.to_mesh(kind).unwrap();
    let dim = E::DIM;
    let coords: Vec<f64> = mesh.mesh.coords.iter().flat_map(|p| p[..dim].to_vec()).collect();
    let cells = &mesh.mesh.connectivity;
    let boundary = mesh.map_nodes(&msh.boundary_nodes("boundary").unwrap());
    let pi = std::f64::consts::PI;
    let shape = move |x: [f64; 3]| (0..dim).map(|k| (pi * x[k]).sin()).product::<f64>();
    let (_, k) = assemble::<E, _>(&coords, cells, &[1.0], |u: &Field, v: &Field, _: &Position, k| {
        k * dot(u.grad(), v.grad())
    })
    .unwrap();
    let (_, m) = assemble::<E, _>(&coords, cells, &[1.0], |u: &Field, v: &Field, _: &Position, _| {
        u.value() * v.value()
    })
    .unwrap();
    let fixed = Fixed {
        values: vec![0.0; boundary.len()],
        dofs: boundary,
    };
    let opts = CgOptions {
        tol: 1e-13,
        max_iter: 5000,
    };
    let dt = t_end / steps as f64;
    let scheme = ThetaMethod::new(&dev, &m, &k, 0.5, dt, &fixed, opts).unwrap();
    let mut u: Vec<f64> = mesh.mesh.coords.iter().map(|p| shape(*p)).collect();
    for &d in &fixed.dofs {
        u[d as usize] = 0.0;
    }
    for _ in 0..steps {
        scheme.step(&mut u, None).unwrap();
    }
    let decay = (-(dim as f64) * pi * pi * t_end).exp();
    let error = l2_error::<E>(&coords, cells, &u, |x| decay * shape(x)).unwrap();
    // The mean cell size of the unit square or cube: elements ~ h^-dim.
    let elements = cells.len() / E::NODES;
    (error, (elements as f64).powf(-1.0 / dim as f64))
}

/// The observed orders between successive meshes: between the two finest within
/// `want − 0.35 .. want + 0.6`, and none below `want − 0.6` (the coarsest cube meshes, 5 to 7
/// cells per side, are not yet asymptotic: tet10 measures 2.46 there, 2.85 between the finest).
fn check_orders(name: &str, runs: &[(f64, f64)], want: f64) {
    let orders: Vec<f64> = runs
        .windows(2)
        .map(|w| (w[0].0 / w[1].0).ln() / (w[0].1 / w[1].1).ln())
        .collect();
    eprintln!("{name}: L2 orders {orders:?} for (error, h) {runs:?}");
    let finest = orders[orders.len() - 1];
    assert!(
        orders.iter().all(|&o| o >= want - 0.6) && (want - 0.35..want + 0.6).contains(&finest),
        "{name}: L2 orders {orders:?} for (error, h) {runs:?}"
    );
}

#[test]
fn transient_heat_on_gmsh_triangles_converges_at_order_p_plus_one() {
    let tri3: Vec<(f64, f64)> = (0..3)
        .map(|l| heat_error::<Tri3Heat>(&format!("square_tri3_{l}.msh"), CellKind::Tri3, 0.02, 40))
        .collect();
    check_orders("tri3", &tri3, 2.0);
    let tri6: Vec<(f64, f64)> = (0..3)
        .map(|l| heat_error::<Tri6Heat>(&format!("square_tri6_{l}.msh"), CellKind::Tri6, 0.02, 80))
        .collect();
    check_orders("tri6", &tri6, 3.0);
}

#[test]
fn transient_heat_on_gmsh_tetrahedra_converges_at_order_p_plus_one() {
    let tet10: Vec<(f64, f64)> = (0..3)
        .map(|l| heat_error::<Tet10Heat>(&format!("cube_tet10_{l}.msh"), CellKind::Tet10, 0.01, 40))
        .collect();
    check_orders("tet10", &tet10, 3.0);
}
