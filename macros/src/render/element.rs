//! The element family's view: data only, from the IR program and the emitted statements.
//! Templates in `templates/element/` read these fields; their names are the templates' contract.

use super::stencil::{defines_view, tunables_view, DefineView};
use super::{render_extension, render_template, Failure};
use crate::emit::element::{lines, ElementLines};
use crate::emit::signature;
use crate::ir::{Body, Program, Role, Sources};
use serde::Serialize;
use std::collections::BTreeMap;

/// A kernel's name and its parameter declarations, printed from its IR signature.
#[derive(Serialize)]
pub struct KernelView {
    pub name: String,
    pub params: Vec<String>,
    /// The parameters' names, in order, joined by `, ` (to pass them on to a helper).
    pub args: String,
    /// Generated at all (the blocked schedules need node pairs to shift).
    pub available: bool,
}

/// What the element templates see.
#[derive(Serialize)]
pub struct ElementView {
    /// The module's name, its file and line, its doc comment lines.
    pub name: String,
    pub file: String,
    pub line: usize,
    pub doc: Vec<String>,
    pub dim: usize,
    pub nodes: usize,
    pub dofs: usize,
    pub nd: usize,
    pub nv: usize,
    pub ndp: usize,
    /// `sum_v8` of the seed (appendix 10.2), the 8-lane pairwise sum.
    pub sum_v8: &'static str,
    pub tunables: Vec<DefineView>,
    pub contracts: Vec<DefineView>,
    /// Kernels by variant (`k.coloured.name`, `k.coloured.params`).
    pub k: BTreeMap<String, KernelView>,
    /// Blocked schedules are generated.
    pub blocked: bool,
    #[serde(flatten)]
    pub lines: ElementLines,
}

pub fn view(p: &Program) -> Result<ElementView, String> {
    let Body::Element(b) = &p.body else {
        return Err(format!("`{}` is not an element program", p.origin.name));
    };
    let k = kernel_views(p, |r| *r != Role::Forming);
    Ok(ElementView {
        name: p.origin.name.clone(),
        file: crate::emit::file_literal(&p.origin.file),
        line: p.origin.line,
        doc: p.origin.doc.iter().map(|d| crate::emit::comment(d)).collect(),
        dim: b.dim,
        nodes: b.nodes,
        dofs: b.dofs,
        nd: b.nd(),
        nv: b.chunks,
        ndp: b.chunks * b.lanes,
        sum_v8: "(((v).s0 + (v).s1) + ((v).s2 + (v).s3)) + (((v).s4 + (v).s5) + ((v).s6 + (v).s7))",
        tunables: tunables_view(&p.tunables),
        contracts: defines_view(&p.contracts),
        blocked: k.get("blocked").is_some_and(|k| k.available),
        k,
        lines: lines(b)?,
    })
}

/// The program's kernels whose role passes `keep`, by variant.
fn kernel_views(p: &Program, keep: impl Fn(&Role) -> bool) -> BTreeMap<String, KernelView> {
    p.kernels
        .iter()
        .filter(|k| keep(&k.role))
        .map(|k| {
            (
                k.variant.clone(),
                KernelView {
                    name: k.name.clone(),
                    params: signature::params(&k.params),
                    args: k.params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", "),
                    available: k.unavailable.is_none(),
                },
            )
        })
        .collect()
}

/// What `element/forming.cl.tera` sees.
#[derive(Serialize)]
struct FormingView {
    name: String,
    file: String,
    line: usize,
    doc: Vec<String>,
    basis: String,
    dim: usize,
    nf: usize,
    ng: usize,
    dofs: usize,
    strains: usize,
    ne: usize,
    np: usize,
    rule: String,
    nq: usize,
    ts: usize,
    wt: usize,
    epg: usize,
    qc: usize,
    qp: usize,
    h_lines: Vec<String>,
    kb_lines: Vec<String>,
    c_lines: Vec<String>,
    /// The forming kernels by variant (`k.ke_ai.name`, `k.ke_ai.params`).
    k: BTreeMap<String, KernelView>,
}

/// Renders the element-matrix kernels of an element (`ke_ai`, `ke_aii`, `ke_tiled`), f64.
pub fn render_forming(p: &Program) -> Result<String, Failure> {
    let Body::Element(b) = &p.body else {
        return Err(Failure::Internal(format!(
            "`{}` is not an element program",
            p.origin.name
        )));
    };
    let f = &b.forming;
    let ne = f.nf * f.dofs;
    let tiling = clforge_abi::modal::Tiling::default_for(f.nf, f.nq(), f.dim, f.strains);
    let v = FormingView {
        name: p.origin.name.clone(),
        file: crate::emit::file_literal(&p.origin.file),
        line: p.origin.line,
        doc: p.origin.doc.iter().map(|d| crate::emit::comment(d)).collect(),
        basis: f.modal.clone().unwrap_or_else(|| "nodal (isoparametric)".into()),
        dim: f.dim,
        nf: f.nf,
        ng: f.ng,
        dofs: f.dofs,
        strains: f.strains,
        ne,
        np: ne * (ne + 1) / 2,
        rule: f.rule(),
        nq: f.nq(),
        ts: tiling.ts,
        wt: tiling.wt,
        epg: tiling.epg,
        qc: tiling.qc,
        qp: clforge_abi::modal::points_per_group(f.nq()),
        h_lines: crate::emit::forming::h_lines(f),
        kb_lines: crate::emit::forming::kb_lines(f),
        c_lines: crate::emit::forming::c_lines(f),
        k: kernel_views(p, |r| *r == Role::Forming),
    };
    Ok(render_template(
        "element/forming.cl.tera",
        &format!("element `{}`", p.origin.name),
        &v,
    )?)
}

/// Both of an element's programs, as the driver hands them to `expand`: the family's and the
/// forming kernels'. A modal element has only the forming program, which is then its main one.
pub fn render_sources(p: &Program) -> Result<Sources, Failure> {
    let text = render(p)?;
    let forming = match &p.body {
        // No kernel forms an operator over values: the runtime refuses device forming.
        Body::Element(b) if !b.forming.on_device() => String::new(),
        Body::Element(b) if b.forming.modal.is_some() => text.clone(),
        _ => render_forming(p)?,
    };
    Ok(super::sources(text, Some(forming)))
}

/// Renders the element family: the explicit central-difference step of seed 000 for one
/// element type (element forces in every schedule, stresses, node integration, loads).
pub fn render(p: &Program) -> Result<String, Failure> {
    if let Body::Element(b) = &p.body {
        if b.forming.modal.is_some() {
            return if b.forming.on_device() {
                render_forming(p)
            } else {
                Ok(String::new())
            };
        }
    }
    let v = view(p)?;
    let mut text = render_template(
        &format!("{}/{}.cl.tera", p.family, p.family),
        &format!("element `{}`", p.origin.name),
        &v,
    )?;
    if let Some(ext) = &p.extension {
        let user = render_extension(ext, &v)?;
        text.push_str(&crate::emit::user_template_banner(&ext.shown));
        text.push_str(user.trim_start_matches('\n'));
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::element::ElementBody;
    use crate::ir::Origin;

    fn view(name: &str, dim: usize, nodes: usize, dofs: usize, offs: Vec<[usize; 3]>) -> (Origin, ElementBody) {
        let origin = Origin {
            name: name.into(),
            doc: vec![" test element".into()],
            file: "tests.rs".into(),
            line: 1,
        };
        let body = ElementBody {
            dim,
            nodes,
            dofs,
            order: 1,
            node_offsets: offs,
            strains: if dim == 2 { 3 } else { 6 },
            dshape: vec![],
            lanes: 8,
            chunks: (nodes * dofs).div_ceil(8),
            forming: crate::ir::element::Forming {
                modal: None,
                dim,
                nf: nodes,
                ng: nodes,
                dofs,
                strains: if dim == 2 { 3 } else { 6 },
                cell: clforge_abi::Cell::Cube,
                nq1: 2,
                b: clforge_abi::modal::b_nonzeros(dim, dofs, if dim == 2 { 3 } else { 6 }).to_vec(),
            },
        };
        (origin, body)
    }

    fn render_element((origin, body): (Origin, ElementBody)) -> Result<String, Failure> {
        render(&crate::lower::per_element::with_kernels(
            crate::lower::element::program(origin, body),
        ))
    }

    #[test]
    fn quad4_is_one_float8_per_row() {
        let src = render_element(view("quad4", 2, 4, 2, vec![[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]])).unwrap();
        for k in [
            "coloured",
            "unstructured",
            "computed",
            "blocked",
            "blocked_mat",
            "gather",
            "stress",
            "integrate",
        ] {
            assert!(src.contains(&format!("void quad4_{k}(")), "quad4_{k} missing\n{src}");
        }
        assert!(src.contains("const real ku_7 = sum_v8(K[7] * U0);"), "{src}");
        assert!(src.contains("#pragma OPENCL FP_CONTRACT OFF"));
        assert!(!src.contains("U1"), "8 DOFs fit one float8\n{src}");
    }

    #[test]
    fn hex8_is_three_float8_per_row() {
        let offs = vec![
            [0, 0, 0],
            [1, 0, 0],
            [1, 1, 0],
            [0, 1, 0],
            [0, 0, 1],
            [1, 0, 1],
            [1, 1, 1],
            [0, 1, 1],
        ];
        let src = render_element(view("hex8", 3, 8, 3, offs)).unwrap();
        assert!(
            src.contains("const real ku_23 = sum_v8(K[69] * U0) + sum_v8(K[70] * U1) + sum_v8(K[71] * U2);"),
            "{src}"
        );
        assert!(
            src.contains("const real8 U2 = (real8)(u_16, u_17, u_18, u_19, u_20, u_21, u_22, u_23);"),
            "{src}"
        );
        assert!(src.contains("void hex8_gather("), "{src}");
    }

    #[test]
    fn quad9_pads_the_last_float8() {
        let mut offs = vec![];
        for y in 0..3 {
            for x in 0..3 {
                offs.push([x, y, 0]);
            }
        }
        let mut v = view("quad9", 2, 9, 2, offs);
        v.1.order = 2;
        let src = render_element(v).unwrap();
        assert!(src.contains("(real8)(u_16, u_17, 0, 0, 0, 0, 0, 0)"), "{src}");
        assert!(src.contains("% 2 == 0"), "{src}");
    }

    #[test]
    fn bad_view_is_an_error() {
        assert!(render_element(view("bad", 2, 4, 2, vec![])).is_err());
    }
}
