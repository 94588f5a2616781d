//! Generators: elements and params structs from their grammars.

use super::*;

/// The 1-D Lagrange polynomial of node `i` of `order + 1` equidistant nodes in [-1, 1], as Rust.
pub(super) fn lagrange(coord: &str, i: usize, order: usize) -> String {
    let x = |j: usize| -1.0 + 2.0 * j as f64 / order as f64;
    let mut factors = Vec::new();
    for j in (0..=order).filter(|&j| j != i) {
        factors.push(format!("({coord} - {:?}) / {:?}", x(j), x(i) - x(j)));
    }
    if factors.is_empty() {
        "1.0".into()
    } else {
        factors.join(" * ")
    }
}

pub(super) fn gen_element(rng: &mut SmallRng) -> Input {
    let dim = if rng.random_bool(0.95) {
        rng.random_range(1..=3)
    } else {
        rng.random_range(0..5)
    };
    let order = if rng.random_bool(0.8) {
        1
    } else {
        rng.random_range(2..=3)
    };
    let Shapes {
        coords,
        node_rows,
        lets,
        shapes,
        nodes,
    } = shapes(rng, dim, order);
    let (op, strains, mat_ty, rows) = material(rng, dim);
    let quadrature = if rng.random_bool(0.9) {
        rng.random_range(1..=6)
    } else {
        rng.random_range(0..9)
    };
    let mut attr = format!("dim = {dim}, nodes = {nodes}, operator = {op}, quadrature = {quadrature}");
    if rng.random_bool(0.2) {
        attr += &format!(", dofs = {}", rng.random_range(0..4));
    }
    let extra = user_kernels(rng, &mut attr);
    let thickness = if dim == 2 && rng.random_bool(0.3) {
        format!("pub fn thickness(m: &{mat_ty}) -> f64 {{ 1.0 }}")
    } else {
        String::new()
    };
    let name = ["quad4", "hex8", "bar2", "e", "r#yield", "__", "_1", "ψ", "Quad", "a_b_"];
    let name = if rng.random_bool(0.8) {
        name[..4].choose(rng)
    } else {
        name.choose(rng)
    }
    .expect("names");
    let vis = ["pub ", "", "pub(crate) "];
    let v = |rng: &mut SmallRng| {
        if rng.random_bool(0.95) {
            vis[0]
        } else {
            vis.choose(rng).expect("vis")
        }
    };
    let (v1, v2, v3, v4) = (v(rng), v(rng), v(rng), v(rng));
    let item = format!(
        "pub mod {name} {{
            use super::*;
            {v1}const NODES: [[f64; {dim}]; {nodes}] = [{}];
            {v2}fn shape({}) -> [f64; {nodes}] {{ {lets} [{}] }}
            {v3}fn material(m: &{mat_ty}) -> [[f64; {strains}]; {strains}] {{ let c = 1.0; [{}] }}
            {v4}fn density(m: &{mat_ty}) -> f64 {{ 1.0 }}
            {thickness}
            {extra}
        }}",
        node_rows.join(", "),
        coords
            .iter()
            .map(|c| format!("{c}: f64"))
            .collect::<Vec<_>>()
            .join(", "),
        shapes.join(", "),
        rows.join(", "),
    );
    Input::new(Target::Element, attr, item)
}

/// An element's nodes and shape functions: the tensor grid of Lagrange nodes of `order`, in a
/// random order, sometimes through `let`s, sometimes with one odd function.
pub(super) struct Shapes {
    coords: Vec<String>,
    node_rows: Vec<String>,
    lets: String,
    shapes: Vec<String>,
    nodes: usize,
}

pub(super) fn shapes(rng: &mut SmallRng, dim: usize, order: usize) -> Shapes {
    let coords: Vec<String> = (0..dim.min(3))
        .map(|a| {
            if rng.random_bool(0.9) {
                ["r", "s", "t"][a].to_string()
            } else {
                ["x", "c", "r#yield", "ψ", "_", "local", "real", "s", "at", "m"]
                    .choose(rng)
                    .expect("coords")
                    .to_string()
            }
        })
        .collect();
    // The tensor grid of nodes, in a random order: shape functions follow the same order.
    let mut grid: Vec<Vec<usize>> = vec![vec![]];
    for _ in 0..dim.min(3) {
        grid = grid
            .into_iter()
            .flat_map(|p| {
                (0..=order).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    if rng.random_bool(0.5) {
        grid.shuffle(rng);
    }
    let nodes = grid.len();
    let x = |i: usize| -1.0 + 2.0 * i as f64 / order as f64;
    let node_rows: Vec<String> = grid
        .iter()
        .map(|p| {
            format!(
                "[{}]",
                p.iter().map(|&i| format!("{:?}", x(i))).collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    let use_lets = rng.random_bool(0.3);
    let mut lets = String::new();
    if use_lets {
        for (a, c) in coords.iter().enumerate() {
            for i in 0..=order {
                lets += &format!("let l{a}_{i} = {};\n", lagrange(c, i, order));
            }
        }
    }
    let mut shapes: Vec<String> = grid
        .iter()
        .map(|p| {
            let f: Vec<String> = p
                .iter()
                .enumerate()
                .map(|(a, &i)| {
                    if use_lets {
                        format!("l{a}_{i}")
                    } else {
                        format!("({})", lagrange(&coords[a], i, order))
                    }
                })
                .collect();
            if f.is_empty() {
                "1.0".into()
            } else {
                f.join(" * ")
            }
        })
        .collect();
    if rng.random_bool(0.1) {
        let i = rng.random_range(0..shapes.len());
        shapes[i] = [
            "0.0",
            "r.sin()",
            "1.0 / r",
            "r.powi(17)",
            "r.powi()",
            "r.powi(16).powi(16).powi(16)",
            "(1.0 + r).powi(16).powi(16).powi(16).powi(16).powi(16).powi(16).powi(16).powi(16)",
            "(r + 1.0).powi(16).powi(16)",
            "m",
            "shape(r)",
            "-r",
            "shapes[0] + 1e309 * r - 1e309 * r",
            "shapes[0] + 1e309 * (r * r - 1.0)",
            "shapes[0] + 1e307 * 100.0 * r * r * 0.0",
        ]
        .choose(rng)
        .expect("odd")
        .replace("shapes[0]", &shapes[i]);
    }
    Shapes {
        coords,
        node_rows,
        lets,
        shapes,
        nodes,
    }
}

/// The operator, the strains, the material type and the rows of `material`.
pub(super) fn material(rng: &mut SmallRng, dim: usize) -> (String, usize, &'static str, Vec<String>) {
    let ops: &[&str] = match dim {
        2 => &["plane_stress", "plane_strain", "diffusion"],
        3 => &["elasticity", "diffusion"],
        _ => &["diffusion"],
    };
    let op = if rng.random_bool(0.9) {
        ops.choose(rng).expect("ops").to_string()
    } else {
        ["plane_stress", "elasticity", "diffusion", "banana"]
            .choose(rng)
            .expect("ops")
            .to_string()
    };
    let strains = match op.as_str() {
        "plane_stress" | "plane_strain" => 3,
        "elasticity" => 6,
        _ => dim,
    };
    let strains = if rng.random_bool(0.95) {
        strains
    } else {
        rng.random_range(0..7)
    };
    let mat_ty = [
        "Plate",
        "f64",
        "super::M",
        "[f64; 2]",
        "crate::a::B<f64>",
        "Self",
        "(f64, f64)",
    ];
    let mat_ty = if rng.random_bool(0.8) {
        mat_ty[..3].choose(rng)
    } else {
        mat_ty.choose(rng)
    }
    .expect("types");
    let entry = |rng: &mut SmallRng, i: usize, j: usize| -> String {
        if i == j {
            ["m.e", "*m", "2.0", "c * m.nu", "1e39"]
                .choose(rng)
                .expect("entries")
                .to_string()
        } else {
            "0.0".into()
        }
    };
    let rows: Vec<String> = (0..strains)
        .map(|i| {
            format!(
                "[{}]",
                (0..strains).map(|j| entry(rng, i, j)).collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    (op, strains, mat_ty, rows)
}

/// Sometimes a user template and its `extern "OpenCL"` kernels (right or wrong), added to `attr`.
pub(super) fn user_kernels(rng: &mut SmallRng, attr: &mut String) -> String {
    if rng.random_bool(0.15) {
        *attr += ", template = \"../examples/templates/strain_energy.cl.tera\"";
        let kernel = if rng.random_bool(0.6) {
            "fn strain_energy(k: &[f32], elem_nodes: &[i32], u: &[f32], energy: &mut [f32], volume: f32, count: i32);"
                .to_string()
        } else {
            let params = [
                "k: &[f32]",
                "u: &mut [u8]",
                "n: i32",
                "r#yield: f32",
                "self",
                "at: f32",
                "Self: u32",
                "x: f64",
                "v: &[f64]",
                "local: f32",
                "_: f32",
                "mut q: i32",
                "a: &mut [u32]",
            ];
            let n = rng.random_range(0..5);
            let ps: Vec<&str> = (0..n).map(|_| *params.choose(rng).expect("params")).collect();
            let kname = [
                "strain_energy",
                "r#yield",
                "coloured",
                "kernel",
                "get_id",
                "__k",
                "ψ",
                "_",
                "launch",
            ]
            .choose(rng)
            .expect("names");
            format!("fn {kname}({});", ps.join(", "))
        };
        return format!("extern \"OpenCL\" {{ /// Doc */ here.\n {kernel} }}");
    }
    String::new()
}

pub(super) fn gen_params(rng: &mut SmallRng) -> Input {
    let tys = [
        "f32",
        "f64",
        "i32",
        "u32",
        "u8",
        "bool",
        "String",
        "[f32; 3]",
        "Vec<f32>",
        "&'a f32",
        "Option<f32>",
        "T",
        "r#f32",
        "crate::f32",
        "()",
    ];
    let fields: Vec<String> = (0..rng.random_range(0..6))
        .map(|_| {
            let ty = if rng.random_bool(0.8) {
                tys[..5].choose(rng)
            } else {
                tys.choose(rng)
            }
            .expect("types");
            let vis = if rng.random_bool(0.5) { "pub " } else { "" };
            let doc = if rng.random_bool(0.1) { "/// */ ψ\n" } else { "" };
            format!("{doc}{vis}{}: {ty}", name(rng))
        })
        .collect();
    let name = ["Coeffs", "K", "r#yield", "ψ", "__", "_1", "Params", "float", "local"]
        .choose(rng)
        .expect("names");
    let generics = if rng.random_bool(0.05) { "<'a, T>" } else { "" };
    let body = match rng.random_range(0..20) {
        0 => format!("struct {name}{generics}(f32, f64);"),
        1 => format!("struct {name};"),
        2 => format!("enum {name} {{ A, B }}"),
        3 => format!("union {name} {{ a: f32, b: u32 }}"),
        _ => format!("struct {name}{generics} {{ {} }}", fields.join(", ")),
    };
    let attrs = if rng.random_bool(0.3) {
        "#[derive(Clone, Copy, Params)] #[repr(C)]\n"
    } else {
        ""
    };
    Input::new(Target::Params, "", format!("{attrs}pub {body}"))
}
