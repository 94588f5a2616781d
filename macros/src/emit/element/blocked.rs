//! The blocked schedules' column walk (seed algorithm 3): registers `u_<i>`, `f_<i>`, fetched
//! bottom nodes first, accumulated, written in one phase per x offset, shifted up the column.

use super::{at, node, offset, BlockedLines, Shape};
use crate::emit::c::{self, assign, bin, int, var, E, S};

pub(super) fn lines(s: &Shape) -> BlockedLines {
    let (n, d, p, offs) = (s.n, s.d, s.p, s.offs);
    // Register shifting along y: top nodes (y offset = order) become the bottom nodes (y
    // offset 0, same x and z) of the next element up the column.
    let partner: Vec<Option<usize>> = (0..n)
        .map(|a| {
            (offs[a][1] == p)
                .then(|| (0..n).find(|&b| offs[b] == [offs[a][0], 0, offs[a][2]]))
                .flatten()
        })
        .collect();
    let tops: Vec<usize> = (0..n).filter(|&a| offs[a][1] == p).collect();
    let bottoms: Vec<usize> = (0..n).filter(|&a| offs[a][1] == 0).collect();
    let fetch = |nodes: Vec<usize>| -> Vec<S> {
        s.dofs_of(nodes)
            .map(|(a, k)| assign(var(s.ui(a, k)), "", at("u", node(a), "DOFS", k)))
            .collect()
    };
    let rest: Vec<usize> = (0..n).filter(|&a| offs[a][1] != 0).collect();
    let phase = |pick: &dyn Fn(usize) -> bool, place: &dyn Fn(usize) -> E, value: &dyn Fn(usize) -> usize| {
        (0..=p)
            .map(|x| {
                let nodes: Vec<usize> = (0..n).filter(|&a| pick(a) && offs[a][0] == x).collect();
                let stmts: Vec<S> = s
                    .dofs_of(nodes)
                    .map(|(a, k)| {
                        assign(
                            at("f", place(a), "DOFS", k),
                            "+",
                            var(format!("f_{}", value(a) * d + k)),
                        )
                    })
                    .collect();
                c::lines(&stmts)
            })
            .collect::<Vec<Vec<String>>>()
    };
    let write = phase(&|a| offs[a][1] < p, &node, &|a| a);
    let last = phase(&|a| offs[a][1] == p, &|a| offset(var("last0"), offs[a]), &|a| {
        partner[a].unwrap_or(a)
    });
    let zero = |i: usize| assign(var(format!("f_{i}")), "", int(0));
    let mut shift: Vec<S> = Vec::new();
    for &a in &tops {
        let b = partner[a].unwrap_or(a);
        for k in 0..d {
            let (t, bt) = (a * d + k, b * d + k);
            shift.push(S::Line(vec![
                assign(var(format!("u_{bt}")), "", var(format!("u_{t}"))),
                assign(var(format!("f_{bt}")), "", var(format!("f_{t}"))),
                zero(t),
            ]));
        }
    }
    for a in (0..n).filter(|&a| offs[a][1] > 0 && offs[a][1] < p) {
        shift.push(S::Line((0..d).map(|k| zero(a * d + k)).collect()));
    }
    let registers = |i: usize| S::Decl {
        konst: false,
        ty: "real".into(),
        vars: vec![(format!("u_{i}"), int(0)), (format!("f_{i}"), int(0))],
        comment: None,
    };
    let accum = |live: bool| -> Vec<S> {
        (0..s.nd)
            .map(|i| {
                let ku = var(format!("ku_{i}"));
                let ku = if live { bin(c::Op::Mul, var("live"), ku) } else { ku };
                assign(var(format!("f_{i}")), "-", ku)
            })
            .collect()
    };
    BlockedLines {
        decl: c::lines(&(0..s.nd).map(registers).collect::<Vec<_>>()),
        fetch_bottom: c::lines(&fetch(bottoms)),
        fetch_rest: c::lines(&fetch(rest)),
        accum: c::lines(&accum(false)),
        accum_live: c::lines(&accum(true)),
        write,
        shift: c::lines(&shift),
        last,
    }
}
