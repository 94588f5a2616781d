//! The typed declaration of a finite element (`#[clforge::element]` on a module): sizes,
//! operator, quadrature, the shape functions as exact polynomials and the local nodes.

use proc_macro2::TokenStream;
use std::collections::BTreeMap;
use syn::Ident;

/// The differential operator; it fixes the DOFs per node and the number of strains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    PlaneStress,
    PlaneStrain,
    Elasticity,
    Diffusion,
    /// The full gradient of a field of this many components (a stiffness form's strains when
    /// neither the scalar gradient nor Voigt strains carry it).
    Gradient(usize),
    /// The values and the full gradient (a stiffness form that reads values: reaction,
    /// Helmholtz-like terms). Host matrices and stepping; no device forming.
    Full(usize),
}

impl Operator {
    pub const NAMES: &'static str = "`plane_stress`, `plane_strain`, `elasticity` or `diffusion`";

    pub fn from_name(name: &str) -> Option<Operator> {
        Some(match name {
            "plane_stress" => Operator::PlaneStress,
            "plane_strain" => Operator::PlaneStrain,
            "elasticity" => Operator::Elasticity,
            "diffusion" => Operator::Diffusion,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Operator::PlaneStress => "plane_stress",
            Operator::PlaneStrain => "plane_strain",
            Operator::Elasticity => "elasticity",
            Operator::Diffusion => "diffusion",
            Operator::Gradient(_) => "gradient",
            Operator::Full(_) => "full",
        }
    }

    /// The runtime's value (`::clforge::runtime::element::Operator::...`).
    pub fn tokens(self) -> TokenStream {
        let op = quote::quote!(::clforge::runtime::element::Operator);
        match self {
            Operator::PlaneStress => quote::quote!(#op::PlaneStress),
            Operator::PlaneStrain => quote::quote!(#op::PlaneStrain),
            Operator::Elasticity => quote::quote!(#op::Elasticity),
            Operator::Diffusion => quote::quote!(#op::Diffusion),
            Operator::Gradient(dofs) => quote::quote!(#op::Gradient { dofs: #dofs }),
            Operator::Full(dofs) => quote::quote!(#op::Full { dofs: #dofs }),
        }
    }

    /// DOFs per node the operator needs in `dim` dimensions.
    pub fn dofs(self, dim: usize) -> usize {
        match self {
            Operator::PlaneStress | Operator::PlaneStrain => 2,
            Operator::Elasticity => dim,
            Operator::Diffusion => 1,
            Operator::Gradient(dofs) | Operator::Full(dofs) => dofs,
        }
    }

    /// Rows of `B` and `D`.
    pub fn strains(self, dim: usize) -> usize {
        match self {
            Operator::PlaneStress | Operator::PlaneStrain => 3,
            Operator::Elasticity => 6,
            Operator::Diffusion => dim,
            Operator::Gradient(dofs) => dofs * dim,
            Operator::Full(dofs) => dofs * (dim + 1),
        }
    }
}

/// A polynomial in up to three local coordinates: exponents -> coefficient. Shape functions
/// are polynomials, so this is exact, closed under differentiation and prints canonically.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Poly(pub BTreeMap<[u32; 3], f64>);

impl Poly {
    pub fn constant(c: f64) -> Poly {
        let mut p = Poly::default();
        p.0.insert([0; 3], c);
        p.pruned()
    }

    pub fn var(axis: usize) -> Poly {
        let mut e = [0; 3];
        e[axis] = 1;
        let mut p = Poly::default();
        p.0.insert(e, 1.0);
        p
    }

    fn pruned(mut self) -> Poly {
        self.0.retain(|_, c| *c != 0.0);
        self
    }

    /// The value if the polynomial does not depend on any coordinate.
    pub fn as_constant(&self) -> Option<f64> {
        match self.0.len() {
            0 => Some(0.0),
            1 => self.0.get(&[0; 3]).copied(),
            _ => None,
        }
    }

    pub fn add(&self, other: &Poly) -> Poly {
        let mut out = self.clone();
        for (e, c) in &other.0 {
            *out.0.entry(*e).or_insert(0.0) += c;
        }
        out.pruned()
    }

    pub fn scale(&self, k: f64) -> Poly {
        Poly(self.0.iter().map(|(e, c)| (*e, c * k)).collect()).pruned()
    }

    pub fn sub(&self, other: &Poly) -> Poly {
        self.add(&other.scale(-1.0))
    }

    pub fn mul(&self, other: &Poly) -> Poly {
        let mut out = Poly::default();
        for (ea, ca) in &self.0 {
            for (eb, cb) in &other.0 {
                let e = [ea[0] + eb[0], ea[1] + eb[1], ea[2] + eb[2]];
                *out.0.entry(e).or_insert(0.0) += ca * cb;
            }
        }
        out.pruned()
    }

    pub fn powi(&self, n: u32) -> Poly {
        (0..n).fold(Poly::constant(1.0), |acc, _| acc.mul(self))
    }

    /// The highest total degree of a term (0 for a constant).
    pub fn degree(&self) -> u32 {
        self.0.keys().map(|e| e.iter().sum()).max().unwrap_or(0)
    }

    /// The highest power of any one coordinate in a term (0 for a constant).
    pub fn axis_degree(&self) -> u32 {
        self.0.keys().flat_map(|e| e.iter().copied()).max().unwrap_or(0)
    }

    pub fn derivative(&self, axis: usize) -> Poly {
        let mut out = Poly::default();
        for (e, c) in &self.0 {
            if e[axis] > 0 {
                let mut d = *e;
                d[axis] -= 1;
                *out.0.entry(d).or_insert(0.0) += c * f64::from(e[axis]);
            }
        }
        out.pruned()
    }

    pub fn eval(&self, x: [f64; 3]) -> f64 {
        self.0
            .iter()
            .map(|(e, c)| c * (0..3).map(|a| x[a].powi(e[a] as i32)).product::<f64>())
            .sum()
    }
}

/// A shape function as written (for error spans) and as a polynomial.
#[derive(Clone, Debug)]
pub struct ShapeFn {
    pub poly: Poly,
    /// The expression's tokens, so that errors underline all of it.
    pub tokens: TokenStream,
}

/// A finite element declared by `#[clforge::element(...)] mod name { ... }`.
#[derive(Clone, Debug)]
pub struct Element {
    pub name: Ident,
    pub doc: Vec<String>,
    pub file: String,
    pub line: usize,
    pub dim: usize,
    pub nodes: usize,
    pub dofs: usize,
    pub operator: Operator,
    pub quadrature: usize,
    /// The parameter names of `shape`, in order (`r`, `s`, `t`).
    pub coords: Vec<Ident>,
    /// Visibility of `shape`; `dshape` gets the same.
    pub shape_vis: syn::Visibility,
    pub shape: Vec<ShapeFn>,
    /// `NODES`, padded to three coordinates, and the span of the array.
    pub local_nodes: Vec<[f64; 3]>,
    pub nodes_tokens: TokenStream,
    /// The `T` of `material(m: &T)`.
    pub material_ty: syn::Type,
    /// Whether the module defines `thickness(m: &T) -> f64` (2-D only).
    pub has_thickness: bool,
    /// Kernels added by the user's template (`template = "..."`), if any.
    pub family: Option<super::family::UserFamily>,
    /// A hierarchical basis (`basis = trunk, order = p`); `None` for a nodal element.
    pub modal: Option<Modal>,
    /// The reference cell (`cell = simplex`; the box by default).
    pub cell: clforge_abi::Cell,
    /// Where `quadrature = n` was written (the call site when defaulted).
    pub quadrature_span: proc_macro2::Span,
    /// Items generated into the module from its forms (`material`, `density`).
    pub form_items: TokenStream,
}

/// A modal (hierarchical) basis: the 1-D functions and which tensor products of them the
/// element holds (`clforge_abi::modal`).
#[derive(Clone, Debug)]
pub struct Modal {
    pub space: clforge_abi::modal::Space,
    pub order: usize,
    /// The 1-D functions in the coordinate `x` (axis 0): two vertex functions, then one bubble
    /// per degree `2..=order`.
    pub modes: Vec<Poly>,
    /// Whether the user wrote `modes` (else the built-in integrated Legendre family).
    pub user_modes: bool,
}

/// The built-in 1-D family: `(1 - x)/2`, `(1 + x)/2`, then the integrated Legendre polynomials
/// `L_k(x) = (P_k(x) - P_{k-2}(x)) / sqrt(2(2k - 1))`, `k = 2..=order` (Szabó–Babuška), whose
/// derivatives are orthonormal on [-1, 1]: `∫ L_i' L_j' dx = δ_ij`.
pub fn integrated_legendre(order: usize) -> Vec<Poly> {
    let x = Poly::var(0);
    let one = Poly::constant(1.0);
    // P_0 .. P_order by Bonnet's recurrence (k+1) P_{k+1} = (2k+1) x P_k - k P_{k-1}.
    let mut p = vec![one.clone(), x.clone()];
    for k in 1..order {
        let kf = k as f64;
        let next = x
            .mul(&p[k])
            .scale(2.0 * kf + 1.0)
            .sub(&p[k - 1].scale(kf))
            .scale(1.0 / (kf + 1.0));
        p.push(next);
    }
    let mut modes = vec![one.sub(&x).scale(0.5), one.add(&x).scale(0.5)];
    for k in 2..=order {
        modes.push(p[k].sub(&p[k - 2]).scale(1.0 / (2.0 * (2.0 * k as f64 - 1.0)).sqrt()));
    }
    modes
}

/// The element family's kernels (`templates/element/`): a user family may not reuse a name.
pub const KERNELS: [&str; 13] = [
    "coloured",
    "unstructured",
    "computed",
    "blocked",
    "blocked_mat",
    "gather",
    "gather_derived",
    "gather_steps",
    "stress",
    "stress_unstructured",
    "integrate",
    "load",
    "kick",
];
