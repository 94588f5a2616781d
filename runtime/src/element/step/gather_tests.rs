//! The gather's defaults, boxes, stencil and launch sizes.

use crate::element::plan::*;
use crate::element::spec::ElementSpec;

/// Several steps per launch by default for 2-D order-1 elements in `f32` on a GPU only, in a
/// box whose rows with the margin are 64 local nodes and that fits 48 KiB of local memory.
#[test]
fn several_steps_are_the_default_where_they_were_measured() {
    let spec = |dim: usize, order: usize| ElementSpec {
        name: "e",
        dim,
        cell: crate::element::spec::Cell::Cube,
        nodes: 1 << dim,
        dofs: dim,
        order,
        node_offsets: &[],
        strains: 3,
        source: "",
        kernels: None,
    };
    let gpu = crate::cl::test_info(crate::DeviceKind::Gpu, "NVIDIA CUDA", 1024, 48 << 10);
    let cpu = crate::cl::test_info(crate::DeviceKind::Cpu, "Portable Computing Language", 4096, 4 << 20);
    let (steps, bx) = gather_steps_default(&spec(2, 1), &gpu, 4);
    assert_eq!(steps, 3);
    assert_eq!((bx.nodes[0] + 2 * steps) % 64, 0, "{bx:?}");
    assert!(bx.local_bytes(steps, 2, 2, 4) <= gpu.local_mem_bytes, "{bx:?}");
    for (s, info, real) in [
        (spec(2, 1), &cpu, 4),
        (spec(2, 1), &gpu, 8),
        (spec(3, 1), &gpu, 4),
        (spec(2, 2), &gpu, 4),
    ] {
        assert_eq!(
            gather_steps_default(&s, info, real).0,
            1,
            "{}-D order {} {real} B",
            s.dim,
            s.order
        );
    }
}

/// The local memory of a box: `u` twice and `v`, the margin along z in 3-D only.
#[test]
fn steps_boxes_count_their_margin() {
    let b = StepsBox {
        nodes: [58, 24, 1],
        items: 256,
    };
    assert_eq!(b.local_bytes(3, 2, 2, 4), 3 * 64 * 30 * 2 * 4);
    let b = StepsBox {
        nodes: [8, 8, 4],
        items: 256,
    };
    assert_eq!(b.local_bytes(2, 3, 3, 8), 3 * 12 * 12 * 8 * 3 * 8);
    assert_eq!(
        steps_launch(
            &[2049, 1025, 1],
            StepsBox {
                nodes: [58, 24, 1],
                items: 256
            }
        ),
        ([36 * 256, 43, 1], [256, 1, 1])
    );
}

/// The assembled stencil of a node of a 2-D order-1 element: each (a, b) pair of local nodes
/// lands at neighbour `offs[b] - offs[a]`; the centre collects the diagonal blocks of all
/// roles, a corner neighbour the one block that reaches it; the limits bound |K| row sums.
#[test]
fn assembled_stencil_sums_the_blocks_of_every_role() {
    const OFFS: [[usize; 3]; 4] = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]];
    let spec = ElementSpec {
        name: "quad4",
        dim: 2,
        cell: crate::element::spec::Cell::Cube,
        nodes: 4,
        dofs: 2,
        order: 1,
        node_offsets: &OFFS,
        strains: 3,
        source: "",
        kernels: None,
    };
    assert!(assembles(&spec));
    let nd = 8;
    let k: Vec<f64> = (0..nd * nd).map(|i| ((i * 37 % 23) as f64 - 11.0) * 0.25).collect();
    let kk = |r: usize, c: usize| k[r * nd + c];
    let s = assembled_stencil(&spec, &k, f64::from(f32::MAX));
    assert_eq!(s.len(), 9 * 4 + 2);
    let at = |n: usize, r: usize, c: usize| s[(n * 2 + r) * 2 + c];
    for (r, c) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        // Centre (n = 4): every role's diagonal block.
        let centre: f64 = (0..4).map(|a| kk(a * 2 + r, a * 2 + c)).sum();
        assert_eq!(at(4, r, c), centre);
        // Neighbour (+1, +1) (n = 8): only as node 0 meeting node 2.
        assert_eq!(at(8, r, c), kk(r, 2 * 2 + c));
        // Neighbour (-1, 0) (n = 3): as node 1 meeting node 0, as node 2 meeting node 3.
        assert_eq!(at(3, r, c), kk(2 + r, c) + kk(4 + r, 6 + c));
    }
    // Σ over neighbours of a coefficient is Σ over the rows of all roles.
    for r in 0..2 {
        let all: f64 = (0..4)
            .flat_map(|a| (0..nd).map(move |c| (a, c)))
            .map(|(a, c)| kk(a * 2 + r, c))
            .sum();
        let stencil: f64 = (0..9)
            .flat_map(|n| (0..2).map(move |c| (n, c)))
            .map(|(n, c)| at(n, r, c))
            .sum();
        assert!((all - stencil).abs() <= 1e-12 * all.abs().max(1.0));
    }
    let rows: f64 = (0..2)
        .map(|r| {
            (0..4)
                .flat_map(|a| (0..nd).map(move |c| (a, c)))
                .map(|(a, c)| kk(a * 2 + r, c).abs())
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    let (u_limit, g_limit) = (s[36], s[37]);
    assert!(u_limit * rows <= f64::from(f32::MAX) / 4.0 && u_limit * rows > f64::from(f32::MAX) / 4.1);
    assert_eq!(g_limit, f64::from(f32::MAX) / 4.0);
    // A zero matrix puts no bound on u.
    assert_eq!(assembled_stencil(&spec, &vec![0.0; nd * nd], 1.0)[36], 1.0);
    // Order 2 or 1-D: no stencil.
    assert!(!assembles(&ElementSpec { order: 2, ..spec }));
    assert!(!assembles(&ElementSpec { dim: 1, ..spec }));
}

#[test]
fn gather_launches_cover_every_node_in_whole_groups() {
    // 2049 x 1025 nodes, 3 rows per work-item, 32 x 4 groups: 342 rows of work-items cover
    // the 1025 node rows, rounded up to 344 (whole groups), 2049 columns to 2080.
    let (global, local) = gather_launch(&[2049, 1025, 1], 3, Some([32, 4]));
    assert_eq!(local, Some(vec![32, 4, 1]));
    assert_eq!(global, vec![2080, 344, 1]);
    assert!(global[1] * 3 >= 1025 && global[0] >= 2049);
    // Without a group the driver chooses, and the sizes are the nodes' (rows folded in).
    assert_eq!(gather_launch(&[7, 9], 2, None), (vec![7, 5], None));
    // A 1-D grid: the group's first side only.
    assert_eq!(gather_launch(&[5], 1, Some([32, 4])), (vec![32], Some(vec![32])));
}

#[test]
fn flat_launches_round_up_to_whole_groups() {
    assert_eq!(flat_launch(1, true), ([FLAT_GROUP], Some([FLAT_GROUP])));
    assert_eq!(flat_launch(FLAT_GROUP, true), ([FLAT_GROUP], Some([FLAT_GROUP])));
    assert_eq!(
        flat_launch(FLAT_GROUP + 1, true),
        ([2 * FLAT_GROUP], Some([FLAT_GROUP]))
    );
    assert_eq!(flat_launch(4099, false), ([4099], None));
    assert_eq!(default_local(1), vec![FLAT_GROUP]);
    assert_eq!(default_local(3), vec![GATHER_GROUP[0], GATHER_GROUP[1], 1]);
}
