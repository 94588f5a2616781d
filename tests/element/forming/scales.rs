//! Element matrices across the scales of f64: forming is linear in the material, so at every
//! modulus the host's matrices are the unit ones scaled, and the device's agree with them inside
//! `forming::MATERIAL_RANGE` and refuse outside it; a material law that is not symmetric is
//! refused by every path.

use super::*;
use clforge::runtime::element::forming::MATERIAL_RANGE;

fn scaled(m: &Iso, s: f64) -> Iso {
    Iso {
        lambda: m.lambda * s,
        mu: m.mu * s,
    }
}

#[test]
fn moduli_anywhere_in_f64_form_the_scaled_matrix_or_are_refused() {
    let dev = common::device();
    let forming = Forming::<HexP2>::new(&dev).unwrap();
    let mut rng = common::rng(41);
    let m = 3;
    let coords: Vec<f64> = (0..m).flat_map(|_| hexahedron::<HexP2>(&mut rng, 0.2)).collect();
    let unit: Vec<Iso> = (0..m).map(|_| iso(&mut rng)).collect();
    let reference = forming::form_host::<HexP2>(&coords, &unit, 1).unwrap();
    let algos = [
        Algorithm::PerElement,
        Algorithm::PerPoint { elements: 1 },
        Algorithm::Tiled(forming::default_tiling::<HexP2>()),
        Algorithm::Staged(forming::default_staging::<HexP2>()),
        forming.default_algorithm(),
    ];
    for s in [1e-300, 1e-250, 1e-200, 1e-100, 1e-20, 1e20, 1e100, 1e200, 1e250, 1e300] {
        let mats: Vec<Iso> = unit.iter().map(|u| scaled(u, s)).collect();
        let host = forming::form_host::<HexP2>(&coords, &mats, 1).unwrap();
        let want: Vec<f64> = reference.iter().map(|v| v * s).collect();
        let close = |got: &[f64], what: &str| {
            let scale = want.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-12 * scale,
                    "{what} at modulus scale {s:e}: entry {i}: {g:e} vs {w:e}"
                );
            }
        };
        close(&host, "host");
        let inside = 2.0 * s >= *MATERIAL_RANGE.start() && 3.0 * s <= *MATERIAL_RANGE.end();
        match forming.upload(&coords, &mats) {
            Ok(elements) => {
                assert!(inside, "modulus scale {s:e} is outside the range yet uploaded");
                for algo in algos {
                    let (k, _) = forming.form(&elements, algo).unwrap();
                    close(&k.to_host().unwrap(), algo.label().as_str());
                }
            }
            Err(Error::InvalidConfig(msg)) => {
                assert!(!inside, "modulus scale {s:e} refused: {msg}");
                assert!(msg.contains("units") && msg.contains("form_host"), "{msg}");
            }
            Err(e) => panic!("modulus scale {s:e}: {e}"),
        }
    }
}

#[test]
fn a_material_that_is_not_symmetric_is_refused_everywhere() {
    let dev = common::device();
    let mut rng = common::rng(42);
    let coords: Vec<f64> = hexahedron::<HeatP4>(&mut rng, 0.1);
    let skew = [[1.0, 0.5, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.5]];
    let refused = |r: Result<(), Error>, what: &str| match r {
        Err(Error::InvalidConfig(msg)) => assert!(
            msg.contains("not symmetric") && msg.contains("D[1][0]"),
            "{what}: {msg}"
        ),
        other => panic!("{what}: {other:?}"),
    };
    let nodes: Vec<&[f64]> = coords.chunks(3).collect();
    refused(
        matrices::stiffness::<HeatP4, &[f64]>(&nodes, &skew).map(|_| ()),
        "host stiffness",
    );
    refused(
        forming::form_host::<HeatP4>(&coords, &[skew], 1).map(|_| ()),
        "form_host",
    );
    let forming = Forming::<HeatP4>::new(&dev).unwrap();
    refused(forming.upload(&coords, &[skew]).map(|_| ()), "device upload");
    // Rounding apart is symmetric.
    let mut near = [[1.0, 0.5, 0.0], [0.5, 2.0, 0.0], [0.0, 0.0, 1.5]];
    near[1][0] = 0.5 * (1.0 + f64::EPSILON);
    assert!(forming.upload(&coords, &[near]).is_ok());
}
