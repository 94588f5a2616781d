//! Modal elements and element matrices formed on the device (seed 004): sizes,
//! symmetry, definiteness with exactly the rigid-body null space, the hierarchy, every kernel
//! against the host on distorted elements with per-element materials, and misuse.

use crate::common;
use crate::elements;
use crate::modal;

use clforge::runtime::element::forming::{self, packed_index, packed_len, Algorithm, Forming};
use clforge::runtime::element::matrices::{self, gauss_legendre};
use clforge::runtime::element::{Basis, Element, Matrix, Operator};
use clforge::runtime::Error;
use modal::*;
use rand::Rng;

mod hybrid;
mod scales;

/// The reference cube's vertices in `NODES` order, scaled and moved, each vertex displaced by
/// up to `distort` in every direction: a general (non-affine) hexahedron.
pub(crate) fn hexahedron<E: Element>(rng: &mut impl Rng, distort: f64) -> Vec<f64> {
    let (h, o) = (rng.random_range(0.5..2.0), rng.random_range(-3.0..3.0));
    E::local_nodes()
        .iter()
        .flat_map(|p| (0..E::DIM).map(move |a| p[a]).collect::<Vec<_>>())
        .map(|x| o + h * x + rng.random_range(-distort..=distort))
        .collect()
}

fn iso(rng: &mut impl Rng) -> Iso {
    Iso {
        lambda: rng.random_range(0.5..2.0),
        mu: rng.random_range(0.3..1.5),
    }
}

/// The six rigid-body motions of a 3-D element as DOF vectors: the vertex modes carry the
/// (linear) motion at the vertices, every higher mode zero.
fn rigid_modes<E: Element>(coords: &[f64]) -> Vec<Vec<f64>> {
    let n = E::NODES * 3;
    let motions: [fn([f64; 3]) -> [f64; 3]; 6] = [
        |_| [1.0, 0.0, 0.0],
        |_| [0.0, 1.0, 0.0],
        |_| [0.0, 0.0, 1.0],
        |x| [0.0, -x[2], x[1]],
        |x| [x[2], 0.0, -x[0]],
        |x| [-x[1], x[0], 0.0],
    ];
    motions
        .iter()
        .map(|u| {
            let mut v = vec![0.0; n];
            for i in 0..E::GEOMETRY_NODES {
                let x = [coords[3 * i], coords[3 * i + 1], coords[3 * i + 2]];
                v[3 * i..3 * i + 3].copy_from_slice(&u(x));
            }
            v
        })
        .collect()
}

/// K symmetric, K r = 0 for the six rigid motions, and K + Σ r rᵀ positive definite: so K is
/// positive semi-definite with exactly those six zero-energy modes.
fn check_rigid_null_space<E: Element>(k: &Matrix, coords: &[f64]) -> Result<(), String> {
    let n = k.rows();
    let scale = k.max_abs();
    for i in 0..n {
        for j in 0..i {
            if (k[(i, j)] - k[(j, i)]).abs() > 1e-13 * scale {
                return Err(format!("K[{i}][{j}] != K[{j}][{i}]"));
            }
        }
    }
    let modes = rigid_modes::<E>(coords);
    let mut lifted = k.clone();
    for r in &modes {
        let kr: Vec<f64> = (0..n).map(|i| (0..n).map(|j| k[(i, j)] * r[j]).sum()).collect();
        let norm = kr.iter().map(|v| v.abs()).fold(0.0, f64::max);
        let rn = r.iter().map(|v| v.abs()).fold(0.0, f64::max);
        if norm > 1e-10 * scale * rn {
            return Err(format!("a rigid motion has energy: |K r| = {norm:e}"));
        }
        let rr: f64 = r.iter().map(|v| v * v).sum();
        for i in 0..n {
            for j in 0..n {
                lifted[(i, j)] += scale * r[i] * r[j] / rr;
            }
        }
    }
    if common::positive_definite(&lifted) {
        Ok(())
    } else {
        Err("more than six zero-energy modes (or an indefinite K)".into())
    }
}

#[test]
fn trunk_hexahedra_have_the_seeds_sizes_and_quadrature() {
    let ne = [
        HexP1::NODES,
        HexP2::NODES,
        HexP3::NODES,
        HexP4::NODES,
        HexP5::NODES,
        HexP6::NODES,
    ]
    .map(|n| 3 * n);
    assert_eq!(ne, [24, 60, 96, 150, 222, 315]);
    let q = [
        HexP1::QUADRATURE,
        HexP2::QUADRATURE,
        HexP3::QUADRATURE,
        HexP4::QUADRATURE,
        HexP5::QUADRATURE,
        HexP6::QUADRATURE,
    ];
    assert_eq!(q, [2, 3, 4, 5, 7, 8]);
    assert_eq!(HexP5::GEOMETRY_NODES, 8);
    assert_eq!(
        HexP5::basis(),
        Basis::Modal {
            space: clforge::runtime::abi::modal::Space::Trunk,
            order: 5
        }
    );
    assert_eq!(QuadQ3::NODES, 16);
    assert_eq!(HeatP4::NODES, 50);
}

#[test]
fn built_in_modes_are_integrated_legendre() {
    // L_k' = sqrt((2k-1)/2) P_{k-1}: the derivatives are orthonormal on [-1, 1].
    let rule = gauss_legendre(12).unwrap();
    for i in 2..=6 {
        for j in 2..=6 {
            let s: f64 = rule
                .iter()
                .map(|&(x, w)| w * hex_p6::dmodes(x)[i] * hex_p6::dmodes(x)[j])
                .sum();
            let want = if i == j { 1.0 } else { 0.0 };
            assert!((s - want).abs() < 1e-13, "∫ L{i}' L{j}' = {s}");
        }
        assert!(hex_p6::modes(-1.0)[i].abs() < 1e-15 && hex_p6::modes(1.0)[i].abs() < 1e-15);
    }
    assert_eq!(hex_p6::modes(-1.0)[0], 1.0);
    assert_eq!(hex_p6::modes(1.0)[1], 1.0);
    // L_2 = (x² − 1) sqrt(3/8)
    let x = 0.3f64;
    assert!((hex_p6::modes(x)[2] - (x * x - 1.0) * (3.0f64 / 8.0).sqrt()).abs() < 1e-15);
}

fn check_element<E: Element<Material = Iso>>(seed: u64) {
    let mut rng = common::rng(seed);
    let coords = hexahedron::<E>(&mut rng, 0.2);
    let nodes: Vec<&[f64]> = coords.chunks(3).collect();
    let k = matrices::stiffness::<E, &[f64]>(&nodes, &iso(&mut rng)).unwrap();
    assert_eq!(k.rows(), 3 * E::NODES);
    if let Err(e) = check_rigid_null_space::<E>(&k, &coords) {
        panic!("{}: {e}", E::NAME);
    }
}

#[test]
fn every_order_is_symmetric_semidefinite_with_six_rigid_modes() {
    check_element::<HexP1>(1);
    check_element::<HexP2>(2);
    check_element::<HexP3>(3);
    check_element::<HexP4>(4);
    check_element::<HexP5>(5);
    check_element::<HexP6>(6);
    check_element::<HexP4Q7>(7);
}

#[test]
fn the_seeds_two_points_at_order_two_leave_spurious_modes() {
    let mut rng = common::rng(8);
    let coords = hexahedron::<HexP2Q2>(&mut rng, 0.0);
    let nodes: Vec<&[f64]> = coords.chunks(3).collect();
    let k = matrices::stiffness::<HexP2Q2, &[f64]>(&nodes, &iso(&mut rng)).unwrap();
    let err = check_rigid_null_space::<HexP2Q2>(&k, &coords).unwrap_err();
    assert!(err.contains("more than six"), "{err}");
}

/// K of order p − 1 is the leading block of K of order p (same points, so also on a
/// distorted element); packed, it is a prefix.
#[test]
fn the_matrix_of_order_p_minus_1_is_a_block_of_order_p() {
    let mut rng = common::rng(9);
    let coords = hexahedron::<HexP5>(&mut rng, 0.25);
    let nodes: Vec<&[f64]> = coords.chunks(3).collect();
    let m = iso(&mut rng);
    let k4 = matrices::stiffness::<HexP4Q7, &[f64]>(&nodes, &m).unwrap();
    let k5 = matrices::stiffness::<HexP5, &[f64]>(&nodes, &m).unwrap();
    let scale = k5.max_abs();
    for i in 0..k4.rows() {
        for j in 0..k4.cols() {
            assert!((k4[(i, j)] - k5[(i, j)]).abs() <= 1e-13 * scale, "({i}, {j})");
        }
    }
    // Orders 1..5 at their own points on an affine element (all exact): nested too.
    let coords = hexahedron::<HexP5>(&mut rng, 0.0);
    let nodes: Vec<&[f64]> = coords.chunks(3).collect();
    let ks = [
        matrices::stiffness::<HexP1, &[f64]>(&nodes, &m).unwrap(),
        matrices::stiffness::<HexP2, &[f64]>(&nodes, &m).unwrap(),
        matrices::stiffness::<HexP3, &[f64]>(&nodes, &m).unwrap(),
        matrices::stiffness::<HexP4, &[f64]>(&nodes, &m).unwrap(),
        matrices::stiffness::<HexP5, &[f64]>(&nodes, &m).unwrap(),
    ];
    for w in ks.windows(2) {
        let scale = w[1].max_abs();
        for i in 0..w[0].rows() {
            for j in 0..w[0].rows() {
                assert!((w[0][(i, j)] - w[1][(i, j)]).abs() <= 1e-12 * scale);
            }
        }
    }
}

/// Device = host for every kernel: `m` distorted elements with their own materials.
pub(crate) fn device_matches_host<E: Element>(materials: Vec<E::Material>, coords: Vec<f64>, algos: &[Algorithm]) {
    let dev = common::device();
    let forming = Forming::<E>::new(&dev).unwrap();
    let elements = forming.upload(&coords, &materials).unwrap();
    let host = forming::form_host::<E>(&coords, &materials, 2).unwrap();
    let ne = E::NODES * E::DOFS;
    let p = packed_len(ne);
    // The host matrices of `matrices::stiffness` (dense Bᵀ D B) agree with the host forming.
    let per = E::GEOMETRY_NODES * E::DIM;
    for (e, mat) in materials.iter().enumerate() {
        let nodes: Vec<&[f64]> = coords[e * per..(e + 1) * per].chunks(E::DIM).collect();
        let k = matrices::stiffness::<E, &[f64]>(&nodes, mat).unwrap();
        let scale = k.max_abs();
        for i in 0..ne {
            for j in 0..=i {
                let h = host[e * p + packed_index(i, j)];
                assert!(
                    (h - k[(i, j)]).abs() <= 1e-12 * scale,
                    "{} host e {e} ({i},{j}): {h} vs {}",
                    E::NAME,
                    k[(i, j)]
                );
            }
        }
    }
    // The pre-pass in batches of two elements (the last one short when m is odd).
    let batched = Forming::<E>::new(&dev)
        .unwrap()
        .with_geometry_batch_bytes(2 * 8 * (E::DIM * E::DIM + 1) * E::CELL.points(E::DIM, E::QUADRATURE));
    let runs = algos.iter().map(|&a| (a, &forming)).chain(
        algos
            .iter()
            .filter(|a| {
                matches!(a, Algorithm::Staged(t) if t.pre)
                    || **a == Algorithm::Mma(clforge::runtime::element::forming::default_mma::<E>())
            })
            .map(|&a| (a, &batched)),
    );
    for (algo, forming) in runs {
        let (k, _) = match forming.form(&elements, algo) {
            Ok(k) => k,
            // A group the kernel's registers cannot hold on this device (a GPU, at high
            // orders): refused before anything is written, and said so.
            Err(Error::DeviceLimit {
                limit_name: "CL_KERNEL_WORK_GROUP_SIZE",
                ..
            }) => continue,
            Err(e) => panic!("{} {}: {e}", E::NAME, algo.label()),
        };
        let got = k.to_host().unwrap();
        for e in 0..materials.len() {
            let block = &host[e * p..(e + 1) * p];
            let scale = block.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            for (i, (g, h)) in got[e * p..(e + 1) * p].iter().zip(block).enumerate() {
                assert!(
                    (g - h).abs() <= 1e-12 * scale,
                    "{} {}: element {e}, entry {i}: device {g} vs host {h}",
                    E::NAME,
                    algo.label()
                );
            }
        }
    }
}

pub(crate) fn all_algorithms<E: Element>() -> Vec<Algorithm> {
    let small = clforge::runtime::abi::modal::Tiling {
        ts: 3,
        wt: 32,
        epg: 2,
        qc: 5,
    };
    // Odd tiles, slices that split columns, two elements per group, a chunk that does not
    // divide the points.
    use clforge::runtime::abi::modal::Staging;
    let staged = Staging {
        ta: 3,
        tb: 2,
        wt: 8,
        epg: 2,
        qc: 3,
        pre: false,
        moments: false,
    };
    let staged_default = clforge::runtime::element::forming::default_staging::<E>();
    let (nq, s) = (E::CELL.points(E::DIM, E::QUADRATURE), E::OPERATOR.strains(E::DIM));
    // Every kernel at every order in its default shape; the odd shapes (tiles that do not
    // divide, slices that split columns, chunks that do not divide the points) up to 32
    // functions, where every such case already occurs: the large orders' extra builds cost CI
    // minutes.
    let odd = E::NODES <= 32;
    let mut algos = vec![
        Algorithm::PerElement,
        Algorithm::PerPoint { elements: 1 },
        Algorithm::PerPoint { elements: 2 },
        Algorithm::default_for::<E>(),
        Algorithm::Tiled(clforge::runtime::element::forming::default_tiling::<E>()),
        Algorithm::Staged(staged_default),
        // J⁻¹ and w det J from the geometry pre-pass
        Algorithm::Staged(staged_default.with_pre(true, E::NODES, nq, E::DIM, E::DOFS, s)),
    ];
    if odd {
        algos.extend([
            Algorithm::Tiled(small),
            Algorithm::Staged(staged),
            Algorithm::Staged(Staging { pre: true, ..staged }),
        ]);
    }
    // Moments (elasticity only): the default shape and the odd one.
    let elasticity = matches!(
        E::OPERATOR,
        Operator::Elasticity | Operator::PlaneStress | Operator::PlaneStrain
    );
    if E::DOFS == E::DIM && elasticity {
        algos.push(Algorithm::Staged(staged_default.with_moments(
            true,
            E::NODES,
            nq,
            E::DIM,
            E::DOFS,
            s,
        )));
        if odd {
            algos.push(Algorithm::Staged(Staging {
                pre: true,
                moments: true,
                ..staged
            }));
        }
        // Tensor-core moments (the portable products on PoCL): the default shape; one
        // superblock per warp with a chunk of 8 points (3 warps, 2 point quads: a work-item's
        // staging items change points, J⁻¹ read per item); runs of 3 in groups of 2 warps
        // (slices ending in dead warps, runs past the diagonal; J⁻¹ read once per chunk) with
        // two buffers of 8 points (the next chunk staged during this one's products).
        use clforge::runtime::abi::modal::Mma;
        algos.push(Algorithm::Mma(clforge::runtime::element::forming::default_mma::<E>()));
        if odd {
            algos.push(Algorithm::Mma(Mma {
                spw: 1,
                rows: 1,
                warps: 3,
                qc: 8,
                double_buffer: false,
                tensor_contraction: false,
            }));
            algos.push(Algorithm::Mma(Mma {
                spw: 3,
                rows: 1,
                warps: 2,
                qc: 8,
                double_buffer: true,
                tensor_contraction: false,
            }));
            // register tiles where there are several block rows: 2 rows by runs of 2 (tiles
            // across the diagonal, a row past the last where the block rows are odd: p = 2),
            // from 3 block rows also 3 rows by 1 (a dead warp at p = 2, rows past the last at
            // p = 3)
            let blocks = Mma::blocks(E::NODES);
            for (spw, rows, warps) in [(2, 2, 3), (1, 3, 2)] {
                if blocks < rows {
                    continue;
                }
                algos.push(Algorithm::Mma(Mma {
                    spw,
                    rows,
                    warps,
                    qc: 8,
                    double_buffer: false,
                    tensor_contraction: false,
                }));
            }
        }
        // Wider than tall tiles (more columns per work-item than rows).
        for (ta, tb) in if odd { &[(2, 4), (1, 8)][..] } else { &[] } {
            let (ta, tb) = (*ta, *tb);
            let t = Staging::sized(ta, tb, 64, E::NODES, nq, E::DIM, E::DOFS, s);
            algos.push(Algorithm::Staged(t.with_moments(
                true,
                E::NODES,
                nq,
                E::DIM,
                E::DOFS,
                s,
            )));
        }
    }
    algos
}

fn solid_case<E: Element<Material = Iso>>(m: usize, seed: u64) {
    let mut rng = common::rng(seed);
    let coords: Vec<f64> = (0..m).flat_map(|_| hexahedron::<E>(&mut rng, 0.2)).collect();
    let mats = (0..m).map(|_| iso(&mut rng)).collect();
    device_matches_host::<E>(mats, coords, &all_algorithms::<E>());
}

// One test per order or two: each builds a dozen kernels, and separate tests build them in
// parallel.
#[test]
fn device_equals_host_orders_1_and_2() {
    solid_case::<HexP1>(37, 11);
    solid_case::<HexP2>(13, 12);
}

#[test]
fn device_equals_host_orders_3_and_4() {
    solid_case::<HexP3>(5, 13);
    solid_case::<HexP4>(3, 14);
}

#[test]
fn device_equals_host_order_5() {
    solid_case::<HexP5>(2, 15);
}

#[test]
fn device_equals_host_order_6() {
    solid_case::<HexP6>(2, 16);
}

#[test]
fn device_equals_host_nodal_2d_and_diffusion() {
    let mut rng = common::rng(17);
    // The nodal trilinear hexahedron of the explicit examples.
    let m = 9;
    let coords: Vec<f64> = (0..m)
        .flat_map(|_| hexahedron::<elements::hex8::Hex8>(&mut rng, 0.2))
        .collect();
    let mats = (0..m)
        .map(|_| elements::hex8::Solid {
            lambda: rng.random_range(1.0..2.0),
            mu: rng.random_range(0.5..1.0),
            rho: 1.0,
        })
        .collect();
    device_matches_host::<elements::hex8::Hex8>(mats, coords, &all_algorithms::<elements::hex8::Hex8>());
    // A tensor-space plane-stress quad with its own `modes` and thickness.
    let coords: Vec<f64> = (0..m).flat_map(|_| hexahedron::<QuadQ3>(&mut rng, 0.2)).collect();
    let mats = (0..m)
        .map(|_| Plate {
            e: rng.random_range(1.0..3.0),
            nu: rng.random_range(0.1..0.4),
            h: rng.random_range(0.1..1.0),
        })
        .collect();
    device_matches_host::<QuadQ3>(mats, coords, &all_algorithms::<QuadQ3>());
    // Anisotropic heat conduction.
    let coords: Vec<f64> = (0..3).flat_map(|_| hexahedron::<HeatP4>(&mut rng, 0.2)).collect();
    let mats = (0..3)
        .map(|_| {
            let a = rng.random_range(0.0..0.3);
            [[1.0, a, 0.0], [a, 2.0, a], [0.0, a, 1.5]]
        })
        .collect();
    device_matches_host::<HeatP4>(mats, coords, &all_algorithms::<HeatP4>());
}

#[test]
fn a_degenerate_element_is_named_and_bad_input_refused() {
    let dev = common::device();
    let forming = Forming::<HexP2>::new(&dev).unwrap();
    let mut rng = common::rng(18);
    let mut coords: Vec<f64> = (0..4).flat_map(|_| hexahedron::<HexP2>(&mut rng, 0.1)).collect();
    // Element 2 flattened: its top face onto its bottom face.
    for v in 4..8 {
        coords[2 * 24 + 3 * v + 2] = coords[2 * 24 + 3 * (v - 4) + 2];
    }
    let mats: Vec<Iso> = (0..4).map(|_| iso(&mut rng)).collect();
    let elements = forming.upload(&coords, &mats).unwrap();
    for algo in all_algorithms::<HexP2>() {
        match forming.form(&elements, algo) {
            Err(Error::DegenerateElement { element, .. }) => assert_eq!(element, "hex_p2"),
            other => panic!("{}: {other:?}", algo.label()),
        }
    }
    assert!(matches!(
        forming.upload(&coords[1..], &mats),
        Err(Error::LengthMismatch { .. })
    ));
    let mut nan = coords.clone();
    nan[5] = f64::NAN;
    assert!(matches!(forming.upload(&nan, &mats), Err(Error::InvalidConfig(_))));
    let mut bad = mats.clone();
    bad[1].mu = f64::INFINITY;
    assert!(matches!(forming.upload(&coords, &bad), Err(Error::InvalidConfig(_))));
    let zero = clforge::runtime::abi::modal::Tiling {
        ts: 2,
        wt: 8,
        epg: 1,
        qc: 9,
    };
    assert!(matches!(
        forming.form(&elements, Algorithm::Tiled(zero)),
        Err(Error::InvalidConfig(_))
    ));
    assert!(matches!(
        forming.form(&elements, Algorithm::PerPoint { elements: 0 }),
        Err(Error::InvalidConfig(_))
    ));
    // Tensor-core shapes: a chunk that is not a multiple of 4, no warps, a group past the
    // device's largest, local memory past the device's.
    use clforge::runtime::abi::modal::Mma;
    let max_group = dev.info().max_work_group_size;
    for (t, what) in [
        (
            Mma {
                spw: 2,
                rows: 1,
                warps: 8,
                qc: 6,
                double_buffer: false,
                tensor_contraction: false,
            },
            "multiple of 4",
        ),
        (
            Mma {
                spw: 2,
                rows: 1,
                warps: 0,
                qc: 8,
                double_buffer: false,
                tensor_contraction: false,
            },
            "at least 1",
        ),
        (
            Mma {
                spw: 0,
                rows: 1,
                warps: 8,
                qc: 8,
                double_buffer: false,
                tensor_contraction: false,
            },
            "at least 1",
        ),
        (
            Mma {
                spw: 2,
                rows: 0,
                warps: 8,
                qc: 8,
                double_buffer: false,
                tensor_contraction: false,
            },
            "at least 1",
        ),
        (
            Mma {
                spw: 1,
                rows: 1,
                warps: max_group / 32 + 1,
                qc: 8,
                double_buffer: false,
                tensor_contraction: false,
            },
            "largest work-group",
        ),
        (
            Mma {
                spw: 1,
                rows: 1,
                warps: 1,
                qc: 1 << 20,
                double_buffer: false,
                tensor_contraction: false,
            },
            "local memory",
        ),
    ] {
        match forming.form(&elements, Algorithm::Mma(t)) {
            Err(Error::InvalidConfig(m)) => assert!(m.contains(what), "{t:?}: {m}"),
            other => panic!("{t:?}: {other:?}"),
        }
    }
    // Moments only for elasticity: the diffusion element is refused by name.
    let heat = Forming::<HeatP4>::new(&dev).unwrap();
    let hc: Vec<f64> = (0..1).flat_map(|_| hexahedron::<HeatP4>(&mut rng, 0.1)).collect();
    let he = heat
        .upload(&hc, &[[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]])
        .unwrap();
    match heat.form(
        &he,
        Algorithm::Mma(Mma {
            spw: 2,
            rows: 1,
            warps: 8,
            qc: 8,
            double_buffer: false,
            tensor_contraction: false,
        }),
    ) {
        Err(Error::InvalidConfig(m)) => assert!(m.contains("elasticity") && m.contains("heat_p4"), "{m}"),
        other => panic!("{other:?}"),
    }
    // No elements: nothing to do, no error.
    let none = forming.upload(&[], &[]).unwrap();
    assert_eq!(
        forming.form(&none, Algorithm::default_for::<HexP2>()).unwrap().0.len(),
        0
    );
}

/// `Forming::tune` times every candidate, leaves out one the device refuses (a chunk that is not
/// a multiple of 4), returns the fastest of those that ran, whose matrices are the host's; and
/// refuses to tune nothing.
#[test]
fn tuning_returns_the_fastest_candidate_that_ran() {
    use clforge::runtime::abi::modal::Mma;
    let dev = common::device();
    let forming = Forming::<HexP2>::new(&dev).unwrap();
    let mut rng = common::rng(33);
    let m = 5;
    let coords: Vec<f64> = (0..m).flat_map(|_| hexahedron::<HexP2>(&mut rng, 0.2)).collect();
    let mats: Vec<Iso> = (0..m).map(|_| iso(&mut rng)).collect();
    let elements = forming.upload(&coords, &mats).unwrap();
    let candidates = forming.candidates();
    assert!(candidates.contains(&forming.default_algorithm()), "{candidates:?}");
    assert!(
        candidates.iter().any(|a| matches!(a, Algorithm::Mma(_))),
        "{candidates:?}"
    );
    let refused = Algorithm::Mma(Mma {
        spw: 2,
        rows: 1,
        warps: 4,
        qc: 6,
        double_buffer: false,
        tensor_contraction: false,
    });
    let list = [
        refused,
        candidates[0],
        Algorithm::Tiled(forming::default_tiling::<HexP2>()),
    ];
    let forming::TunedAlgorithm { best, times } = forming.tune(&elements, &list, 3).unwrap();
    assert_eq!(times.len(), list.len());
    assert_eq!(times[0], (refused, None), "{times:?}");
    let ran: Vec<(Algorithm, f64)> = times.iter().filter_map(|&(a, t)| t.map(|t| (a, t))).collect();
    assert_eq!(ran.len(), 2, "{times:?}");
    let fastest = ran.iter().fold(ran[0], |b, &c| if c.1 < b.1 { c } else { b });
    assert_eq!(best, fastest.0, "{times:?}");
    assert!(ran.iter().all(|&(_, t)| t > 0.0 && t.is_finite()), "{times:?}");
    // The tuned kernel's matrices are the host's.
    let host = forming::form_host::<HexP2>(&coords, &mats, 2).unwrap();
    let got = forming.form(&elements, best).unwrap().0.to_host().unwrap();
    let scale = host.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for (i, (g, h)) in got.iter().zip(&host).enumerate() {
        assert!(
            (g - h).abs() <= 1e-12 * scale,
            "{}: entry {i}: {g} vs {h}",
            best.label()
        );
    }
    // Nothing to tune: every candidate refused (the first refusal), none, no repetitions.
    assert!(matches!(
        forming.tune(&elements, &[refused], 3),
        Err(Error::InvalidConfig(m)) if m.contains("multiple of 4")
    ));
    assert!(matches!(forming.tune(&elements, &[], 3), Err(Error::InvalidConfig(_))));
    assert!(matches!(
        forming.tune(&elements, &list, 0),
        Err(Error::InvalidConfig(_))
    ));
}

/// A clang that compiles OpenCL C for nvptx: `clang` on the path, else the newest
/// `/usr/lib/llvm-*/bin/clang` (PoCL's package brings one; scripts/install-deps.sh).
fn nvptx_clang() -> Option<std::path::PathBuf> {
    let works = |c: &std::path::Path| {
        std::process::Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let mut found: Vec<std::path::PathBuf> = std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|d| d.file_name().to_string_lossy().starts_with("llvm-"))
        .map(|d| d.path().join("bin/clang"))
        .filter(|c| c.exists())
        .collect();
    found.sort();
    std::iter::once(std::path::PathBuf::from("clang"))
        .chain(found.into_iter().rev())
        .find(|c| works(c))
}

/// The forming kernels' NVIDIA-only paths (f64 tensor-core products in inline PTX: 8 × 8 × 4,
/// 16 × 8 × 4, the contraction with `C`, two chunk buffers) run on no CI device. They must at
/// least be valid OpenCL C: each combination of their switches parses for nvptx (clang
/// `-fsyntax-only`, `asm` as GNU `__asm__`), for a 3-D and a 2-D element.
#[test]
fn gpu_only_forming_paths_parse_for_nvptx() {
    let clang = nvptx_clang().expect(
        "the nvptx syntax check needs clang (installed with PoCL by scripts/install-deps.sh; else `apt install clang`)",
    );
    let dir = std::env::temp_dir().join(format!("clforge-nvptx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sources = [
        (
            "hex_p3",
            HexP3::forming_source(),
            HexP3::CELL.points(HexP3::DIM, HexP3::QUADRATURE),
        ),
        (
            "quad_q3",
            QuadQ3::forming_source(),
            QuadQ3::CELL.points(QuadQ3::DIM, QuadQ3::QUADRATURE),
        ),
    ];
    for (name, source, nq) in sources {
        let path = dir.join(format!("{name}.cl"));
        std::fs::write(&path, source).unwrap();
        for (dmma16, mtc, mdb) in [(0, 0, 0), (0, 0, 1), (1, 0, 0), (1, 1, 0), (1, 1, 1), (1, 0, 1)] {
            let out = std::process::Command::new(&clang)
                .args([
                    "-x",
                    "cl",
                    "-cl-std=CL1.2",
                    "-fsyntax-only",
                    "--target=nvptx64-nvidia-nvcl",
                ])
                .args([
                    "-Xclang",
                    "-finclude-default-header",
                    "-Dasm=__asm__",
                    "-DCLFORGE_DMMA=1",
                ])
                .arg(format!("-DNQ={nq}"))
                .args(["-DMSPW=3", "-DMW=8", "-DMQC=16", "-DMQS=20"])
                .arg(format!("-DCLFORGE_DMMA16={dmma16}"))
                .arg(format!("-DMTC={mtc}"))
                .arg(format!("-DMDB={mdb}"))
                .arg(&path)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{name} (DMMA16 {dmma16}, MTC {mtc}, MDB {mdb}) does not parse for nvptx:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
