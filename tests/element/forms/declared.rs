//! Forms declared in `#[clforge::element]` modules (`#[form(stiffness)]`, `#[form(mass)]`,
//! `#[form(load)]`): the element type's host matrices equal the form integrated as the host
//! reference (`form::bilinear`), the built-in element of the same physics, and its device forming
//! equals the host; the generated OpenCL of a diffusion form is the built-in diffusion element's.

use crate::common;
use crate::elements::quad4_heat::{Conductor, Quad4Heat};
use crate::forming::{all_algorithms, device_matches_host, hexahedron};
use crate::modal::{HexP2, Iso};

use clforge::prelude::*;
use clforge::runtime::element::form;
use clforge::runtime::element::forming::{self, Algorithm};
use clforge::runtime::element::{matrices, Element, Matrix, Operator};
use rand::Rng;

/// The orthotropic conductor of `quad4_heat`, written as a form.
#[element(dim = 2, nodes = 4, quadrature = 2)]
pub mod quad4_heat_form {
    use super::Conductor;
    use clforge::runtime::element::form::{Field, Position};

    pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 4] {
        [
            0.25 * (1.0 - r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 + s),
            0.25 * (1.0 - r) * (1.0 + s),
        ]
    }

    /// `kx ∂u/∂x ∂v/∂x + ky ∂u/∂y ∂v/∂y`.
    #[form(stiffness)]
    pub fn conduction(u: &Field, v: &Field, _x: &Position, m: &Conductor) -> f64 {
        let (gu, gv) = (u.grad(), v.grad());
        m.kx * gu[0] * gv[0] + m.ky * gu[1] * gv[1]
    }

    /// `ρc u v`.
    #[form(mass)]
    pub fn capacity(u: &Field, v: &Field, _x: &Position, m: &Conductor) -> f64 {
        m.rho_c * u.value() * v.value()
    }

    /// Advection along x with speed `kx / ρc` (not symmetric; a form the host integrates).
    #[form]
    pub fn advection(u: &Field, v: &Field, _x: &Position, m: &Conductor) -> f64 {
        m.kx * u.grad()[0] * v.value()
    }

    /// A source growing along x.
    #[form(load)]
    pub fn source(v: &Field, x: &Position, m: &Conductor) -> f64 {
        m.rho_c * (1.0 + x.x[0]) * v.value()
    }
}

/// Lamé's isotropic elasticity on the trunk p = 2 hexahedron: Voigt strains, as `HexP2`.
#[element(dim = 3, dofs = 3, basis = trunk, order = 2)]
pub mod hex_lame_p2 {
    use super::Iso;
    use clforge::runtime::element::form::{inner, Field, Position};

    #[form(stiffness)]
    pub fn lame(u: &Field, v: &Field, _x: &Position, m: &Iso) -> f64 {
        m.lambda * u.div() * v.div() + 2.0 * m.mu * inner(u.sym_grad(), v.sym_grad())
    }

    #[form(mass)]
    pub fn inertia(u: &Field, v: &Field, _x: &Position, _m: &Iso) -> f64 {
        dot3(u, v)
    }

    fn dot3(u: &Field, v: &Field) -> f64 {
        clforge::runtime::element::form::dot(u.vector(), v.vector())
    }
}

/// Two coupled diffusing species: a vector Laplacian with cross-diffusion, over the full
/// gradient (no built-in operator expresses it).
#[derive(Clone, Copy, Debug)]
pub struct Species {
    pub d0: f64,
    pub d1: f64,
    /// Cross-diffusion, symmetric.
    pub c: f64,
}

#[element(dim = 2, nodes = 4, dofs = 2, quadrature = 2)]
pub mod quad4_species {
    use super::Species;
    use clforge::runtime::element::form::{dot, Field, Position};

    pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 4] {
        [
            0.25 * (1.0 - r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 + s),
            0.25 * (1.0 - r) * (1.0 + s),
        ]
    }

    #[form(stiffness)]
    pub fn diffusion(u: &Field, v: &Field, _x: &Position, m: &Species) -> f64 {
        m.d0 * dot(u.grad_of(0), v.grad_of(0))
            + m.d1 * dot(u.grad_of(1), v.grad_of(1))
            + m.c * (dot(u.grad_of(0), v.grad_of(1)) + dot(u.grad_of(1), v.grad_of(0)))
    }

    #[form(mass)]
    pub fn storage(u: &Field, v: &Field, _x: &Position, _m: &Species) -> f64 {
        2.0 * dot(u.vector(), v.vector())
    }
}

fn close(a: &Matrix, b: &Matrix, what: &str) {
    assert_eq!((a.rows(), a.cols()), (b.rows(), b.cols()), "{what}: sizes");
    let scale = b.max_abs();
    assert!(scale > 0.0, "{what}: zero matrix");
    for i in 0..a.rows() {
        for j in 0..a.cols() {
            assert!(
                (a[(i, j)] - b[(i, j)]).abs() <= 1e-12 * scale,
                "{what} ({i}, {j}): {:e} vs {:e}",
                a[(i, j)],
                b[(i, j)]
            );
        }
    }
}

fn quad(rng: &mut impl Rng) -> Vec<Vec<f64>> {
    let base = [[0.0, 0.0], [1.3, 0.1], [1.5, 1.2], [-0.1, 0.9]];
    base.iter()
        .map(|p| p.iter().map(|x| x + rng.random_range(-0.15..0.15)).collect())
        .collect()
}

#[test]
fn a_declared_diffusion_form_is_the_built_in_diffusion_element() {
    assert_eq!(Quad4HeatForm::OPERATOR, Operator::Diffusion);
    let mut rng = common::rng(41);
    for _ in 0..20 {
        let coords = quad(&mut rng);
        // Conductivities over many decades, as users' units give them.
        let m = Conductor {
            kx: 10f64.powf(rng.random_range(-30.0..30.0)),
            ky: 10f64.powf(rng.random_range(-30.0..30.0)),
            rho_c: 10f64.powf(rng.random_range(-30.0..30.0)),
        };
        let k = Quad4HeatForm::stiffness(&coords, &m).unwrap();
        close(&k, &Quad4Heat::stiffness(&coords, &m).unwrap(), "against the built-in");
        let host = form::bilinear::<Quad4HeatForm, _, _>(&coords, &m, quad4_heat_form::conduction).unwrap();
        close(&k, &host, "against the form integrated on the host");
        let mass = Quad4HeatForm::mass_consistent(&coords, &m).unwrap();
        close(&mass, &Quad4Heat::mass_consistent(&coords, &m).unwrap(), "mass");
        let host = form::bilinear::<Quad4HeatForm, _, _>(&coords, &m, quad4_heat_form::capacity).unwrap();
        close(&mass, &host, "mass against its form");
        let f = form::linear::<Quad4HeatForm, _, _>(&coords, &m, quad4_heat_form::source).unwrap();
        assert!(f.iter().all(|x| x.is_finite() && *x != 0.0));
        // Advection's rows sum to zero (a constant is not advected); it is not symmetric.
        let a = form::bilinear::<Quad4HeatForm, _, _>(&coords, &m, quad4_heat_form::advection).unwrap();
        for i in 0..4 {
            let row: f64 = (0..4).map(|j| a[(i, j)]).sum();
            assert!(row.abs() <= 1e-12 * a.max_abs(), "row {i} sums to {row}");
        }
        assert!((a[(0, 1)] - a[(1, 0)]).abs() > 1e-6 * a.max_abs());
    }
}

/// The element family's OpenCL is the same text as the built-in element's but for names: a
/// diffusion form steps, and forms, at exactly the built-in's speed.
#[test]
fn a_declared_diffusion_form_generates_the_built_in_kernels() {
    // The code, not the comments (the header quotes the module's doc and file).
    let rename = |s: &str, from: &str| {
        s.replace(from, "ELEMENT")
            .lines()
            .filter(|l| !l.trim_start().starts_with("/*") && !l.trim_start().starts_with('*'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        rename(Quad4HeatForm::SOURCE, "quad4_heat_form"),
        rename(Quad4Heat::SOURCE, "quad4_heat")
    );
    assert_eq!(
        rename(Quad4HeatForm::FORMING_SOURCE, "quad4_heat_form"),
        rename(Quad4Heat::FORMING_SOURCE, "quad4_heat")
    );
}

#[test]
fn lames_form_is_the_built_in_elasticity_on_a_modal_hexahedron() {
    assert_eq!(HexLameP2::OPERATOR, Operator::Elasticity);
    let mut rng = common::rng(42);
    for _ in 0..4 {
        let coords: Vec<Vec<f64>> = hexahedron::<HexP2>(&mut rng, 0.2)
            .chunks(3)
            .map(<[f64]>::to_vec)
            .collect();
        let m = Iso {
            lambda: rng.random_range(0.5..2.0),
            mu: rng.random_range(0.3..1.5),
        };
        let k = HexLameP2::stiffness(&coords, &m).unwrap();
        close(&k, &HexP2::stiffness(&coords, &m).unwrap(), "Lamé against Hooke");
        close(
            &k,
            &form::bilinear::<HexLameP2, _, _>(&coords, &m, hex_lame_p2::lame).unwrap(),
            "Lamé against the form integrated on the host",
        );
        assert_eq!(<HexLameP2 as Element>::density(&m), 1.0);
    }
    // On the device, every forming algorithm.
    let m = 5;
    let coords: Vec<f64> = (0..m).flat_map(|_| hexahedron::<HexLameP2>(&mut rng, 0.2)).collect();
    let mats = (0..m)
        .map(|_| Iso {
            lambda: rng.random_range(0.5..2.0),
            mu: rng.random_range(0.3..1.5),
        })
        .collect();
    // Its kernels are `HexP2`'s (tested with every algorithm there): the default and the tiled.
    let algos = [
        Algorithm::default_for::<HexLameP2>(),
        Algorithm::Tiled(forming::default_tiling::<HexLameP2>()),
    ];
    device_matches_host::<HexLameP2>(mats, coords, &algos);
}

#[test]
fn a_full_gradient_form_forms_on_the_host_and_the_device() {
    assert_eq!(Quad4Species::OPERATOR, Operator::Gradient { dofs: 2 });
    let mut rng = common::rng(43);
    fn species(rng: &mut impl Rng) -> Species {
        Species {
            d0: rng.random_range(0.5..2.0),
            d1: rng.random_range(0.5..2.0),
            c: rng.random_range(-0.4..0.4),
        }
    }
    for _ in 0..10 {
        let coords = quad(&mut rng);
        let m = species(&mut rng);
        let k = Quad4Species::stiffness(&coords, &m).unwrap();
        let host = form::bilinear::<Quad4Species, _, _>(&coords, &m, quad4_species::diffusion).unwrap();
        close(&k, &host, "full gradient against the host form");
        // Each species alone diffuses as a scalar: the block of one component is the
        // built-in diffusion matrix of that conductivity.
        let scalar = Quad4Heat::stiffness(
            &coords,
            &Conductor {
                kx: m.d0,
                ky: m.d0,
                rho_c: 1.0,
            },
        )
        .unwrap();
        for a in 0..4 {
            for b in 0..4 {
                let (x, y) = (k[(2 * a, 2 * b)], scalar[(a, b)]);
                assert!(
                    (x - y).abs() <= 1e-12 * scalar.max_abs(),
                    "species 0 block ({a}, {b}): {x} vs {y}"
                );
            }
        }
        let mass = Quad4Species::mass_consistent(&coords, &m).unwrap();
        close(
            &mass,
            &form::bilinear::<Quad4Species, _, _>(&coords, &m, quad4_species::storage).unwrap(),
            "storage",
        );
    }
    let n = 7;
    let coords: Vec<f64> = (0..n).flat_map(|_| hexahedron::<Quad4Species>(&mut rng, 0.2)).collect();
    let mats = (0..n).map(|_| species(&mut rng)).collect();
    device_matches_host::<Quad4Species>(mats, coords, &all_algorithms::<Quad4Species>());
    // Each element at its own scale, from 1e-200 to 1e200 (within the device forming's range).
    let n = 9;
    let coords: Vec<f64> = (0..n).flat_map(|_| hexahedron::<Quad4Species>(&mut rng, 0.2)).collect();
    let mats = (0..n)
        .map(|e| {
            let scale = 10f64.powi(50 * e - 200);
            let s = species(&mut rng);
            Species {
                d0: s.d0 * scale,
                d1: s.d1 * scale,
                c: s.c * scale,
            }
        })
        .collect();
    device_matches_host::<Quad4Species>(mats, coords, &all_algorithms::<Quad4Species>());
}

#[test]
fn a_declared_form_matches_the_built_in_lumped_masses() {
    let mut rng = common::rng(44);
    let coords = quad(&mut rng);
    let m = Conductor {
        kx: 1.0,
        ky: 2.0,
        rho_c: 3.5,
    };
    let a = matrices::mass_lumped::<Quad4HeatForm, _>(&coords, &m).unwrap();
    let b = matrices::mass_lumped::<Quad4Heat, _>(&coords, &m).unwrap();
    assert_eq!(a, b);
}

/// The explicit stepper's unrolled element products (every unstructured schedule, f32 and f64,
/// per-element matrices on distorted quads) run declared forms as the host steps them: the
/// two-species full-gradient form and the conduction form.
#[test]
fn declared_forms_step_on_the_device_as_on_the_host() {
    use clforge::runtime::element::mesh::Mesh;
    use clforge::runtime::element::stepper::Model;
    let mut rng = common::rng(45);
    let mesh = crate::unstructured::jittered_quads(5, 0.3, 46);
    let species: Vec<Species> = (0..mesh.element_count())
        .map(|_| Species {
            d0: rng.random_range(0.5..2.0),
            d1: rng.random_range(0.5..2.0),
            c: rng.random_range(-0.4..0.4),
        })
        .collect();
    let model = Model::per_element::<Quad4Species>(Mesh::Unstructured(mesh.clone()), &species).unwrap();
    assert_eq!(model.spec.dofs, 2);
    crate::unstructured::parity(&model, 30, 47);
    let heat: Vec<Conductor> = (0..mesh.element_count())
        .map(|_| Conductor {
            kx: rng.random_range(0.5..2.0),
            ky: rng.random_range(0.5..2.0),
            rho_c: rng.random_range(0.5..2.0),
        })
        .collect();
    let model = Model::per_element::<Quad4HeatForm>(Mesh::Unstructured(mesh), &heat).unwrap();
    crate::unstructured::parity(&model, 30, 48);
}

/// A screened (reaction–diffusion, Klein–Gordon) medium.
#[derive(Clone, Copy, Debug)]
pub struct Screened {
    pub k: f64,
    pub r: f64,
}

/// `k ∇u·∇v + r u v` in the stiffness: values and gradients (operator `full`).
#[element(dim = 2, nodes = 4, quadrature = 2)]
pub mod quad4_screened {
    use super::Screened;
    use clforge::runtime::element::form::{dot, Field, Position};

    pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];

    pub fn shape(r: f64, s: f64) -> [f64; 4] {
        [
            0.25 * (1.0 - r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 - s),
            0.25 * (1.0 + r) * (1.0 + s),
            0.25 * (1.0 - r) * (1.0 + s),
        ]
    }

    #[form(stiffness)]
    pub fn screened(u: &Field, v: &Field, _x: &Position, m: &Screened) -> f64 {
        m.k * dot(u.grad(), v.grad()) + m.r * u.value() * v.value()
    }

    #[form(mass)]
    pub fn inertia(u: &Field, v: &Field, _x: &Position, _m: &Screened) -> f64 {
        u.value() * v.value()
    }
}

/// A stiffness form with a reaction term: its matrices are the host form's, a constant field
/// feels the reaction only (`K 1 = r M 1`), it steps on the device as on the host, and device
/// forming says it takes gradient forms only.
#[test]
fn a_stiffness_form_with_values_forms_on_the_host_and_steps_on_the_device() {
    use clforge::runtime::element::mesh::Mesh;
    use clforge::runtime::element::stepper::Model;
    assert_eq!(Quad4Screened::OPERATOR, Operator::Full { dofs: 1 });
    let mut rng = common::rng(49);
    for _ in 0..10 {
        let coords = quad(&mut rng);
        let m = Screened {
            k: rng.random_range(0.5..2.0),
            r: rng.random_range(0.5..2.0),
        };
        let k = Quad4Screened::stiffness(&coords, &m).unwrap();
        close(
            &k,
            &form::bilinear::<Quad4Screened, _, _>(&coords, &m, quad4_screened::screened).unwrap(),
            "screened against the host form",
        );
        let mass = Quad4Screened::mass_consistent(&coords, &m).unwrap();
        for i in 0..4 {
            let (ki, mi): (f64, f64) = ((0..4).map(|j| k[(i, j)]).sum(), (0..4).map(|j| mass[(i, j)]).sum());
            assert!((ki - m.r * mi).abs() <= 1e-12 * k.max_abs(), "row {i}: {ki} vs r·{mi}");
        }
    }
    let dev = common::device();
    match clforge::runtime::element::forming::Forming::<Quad4Screened>::new(&dev) {
        Err(clforge::runtime::Error::InvalidConfig(msg)) => assert!(msg.contains("full"), "{msg}"),
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
    let mesh = crate::unstructured::jittered_quads(5, 0.3, 50);
    let media: Vec<Screened> = (0..mesh.element_count())
        .map(|_| Screened {
            k: rng.random_range(0.5..2.0),
            r: rng.random_range(0.5..2.0),
        })
        .collect();
    let model = Model::per_element::<Quad4Screened>(Mesh::Unstructured(mesh), &media).unwrap();
    crate::unstructured::parity(&model, 30, 51);
}
