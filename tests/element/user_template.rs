//! A user template family on a 3-D element: the strain energy density kernel that
//! `examples/templates/strain_energy.cl.tera` adds to `hex8_energy`, launched through its
//! generated typed function, against the host in f64 from the same `K_e`, on random
//! displacements including extremes; and the generated launcher's ABI against the declaration.

use crate::common;
use crate::elements;

use clforge::runtime::element::mesh::StructuredMesh;
use clforge::runtime::element::{At, Element};
use clforge::runtime::Buffer;
use elements::hex8_energy::{Hex8Energy, Solid};
use rand::Rng;

#[test]
fn strain_energy_matches_the_host() {
    let solid = Solid {
        lambda: 1.2e3,
        mu: 0.8e3,
        rho: 1.0,
    };
    let spec = Hex8Energy::spec();
    let h = [0.5, 0.25, 2.0];
    let mesh = StructuredMesh::for_element(&spec, [5, 4, 3], h).unwrap();
    let conn: Vec<i32> = mesh.connectivity(spec.node_offsets).iter().map(|&n| n as i32).collect();
    let ne = mesh.element_count();
    let coords: Vec<[f64; 3]> = mesh
        .element_nodes(spec.node_offsets, 0)
        .iter()
        .map(|&n| mesh.node_position(n))
        .collect();
    let k_e = Hex8Energy::stiffness(&coords, &solid).unwrap();
    let volume = h[0] * h[1] * h[2];

    let device = common::device();
    let program = device.program(Hex8Energy::NAME, Hex8Energy::SOURCE, "").unwrap();
    let k = Buffer::from_slice(&device, &spec.device_rows(&k_e).unwrap()).unwrap();
    let elem_nodes = Buffer::from_slice(&device, &conn).unwrap();
    let mut energy = Buffer::<f32>::new(&device, ne).unwrap();
    let mut rng = common::rng(11);
    let nd = spec.nd();
    for (case, scale) in [1.0f32, 1e-20, 1e15, 1.0].into_iter().enumerate() {
        let mut u: Vec<f32> = (0..mesh.node_count() * 3)
            .map(|_| rng.random_range(-1.0..1.0) * scale)
            .collect();
        if case == 3 {
            // Non-finite displacements reach exactly the elements around their nodes.
            u[7] = f32::NAN;
            u[40] = f32::INFINITY;
            u[100] = f32::NEG_INFINITY;
        }
        let u_dev = Buffer::from_slice(&device, &u).unwrap();
        let at = At {
            program: &program,
            global: &[ne],
            local: None,
        };
        Hex8Energy::launch_strain_energy(at, &k, &elem_nodes, &u_dev, &mut energy, volume as f32, ne as i32).unwrap();
        let got = energy.to_vec().unwrap();
        for e in 0..ne {
            let ue: Vec<f64> = (0..nd)
                .map(|i| f64::from(u[conn[e * 8 + i / 3] as usize * 3 + i % 3]))
                .collect();
            let ku = k_e.mul_vec(&ue).unwrap();
            let want = 0.5 * ue.iter().zip(&ku).map(|(a, b)| a * b).sum::<f64>() / volume;
            // f32 rounding of the 24-term products, relative to the sum of their magnitudes.
            let bound = 0.5 * ue.iter().zip(&ku).map(|(a, b)| (a * b).abs()).sum::<f64>() / volume;
            let tol = 1e-5 * bound + nd as f64 * f64::from(f32::MIN_POSITIVE) / volume;
            let got = f64::from(got[e]);
            let ok = if want.is_finite() {
                (got - want).abs() <= tol
            } else {
                // inf - inf inside u^T K u is NaN on both sides; a lone inf keeps its sign.
                got.is_nan() == want.is_nan() && (want.is_nan() || got == want)
            };
            assert!(ok, "element {e}, case {case}: device {got} vs host {want}");
        }
    }
}

#[test]
fn user_kernels_are_not_element_schedules() {
    // The element family's schedules keep their trait; the user kernel is an inherent launcher.
    assert!(Hex8Energy::SOURCE.contains("__kernel void hex8_energy_strain_energy("));
    assert!(Hex8Energy::SOURCE.contains("__global float* energy"));
    assert!(Hex8Energy::SOURCE.contains("__global const float* k"));
    assert!(Hex8Energy::SOURCE.contains("const float volume"));
}
