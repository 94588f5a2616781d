//! Which stencil variants exist for a body, their defaults, their local memory, and why one is
//! missing. The runtime reads these facts from the spec; it never re-derives them.

use crate::ir::stencil::StencilBody;
use crate::model::Arg;

/// Points per work-item of the vector variant (`float8`), and of its narrow form for GPUs
/// (`float4`, `<name>_vec4`): on the H100 a 3-D stencil with eight consecutive points per
/// work-item ran at 75-82 % of copy, with four at 88-102 %; on a CPU (PoCL, 2 cores) the 2-D
/// Jacobi sweep took 258 µs with eight and 580 µs with four (docs/PERFORMANCE.md). The source
/// holds both kernels, each compiled only where the runtime asks for it (`CLFORGE_VEC4`).
pub const LANES: usize = clforge_abi::LANES;
pub const NARROW_LANES: usize = 4;
/// The vector kernels' widths, the default (CPUs) first.
pub const VECTOR_WIDTHS: [usize; 2] = [LANES, NARROW_LANES];

/// Why temporal blocking is not generated, if it is not: it keeps the iterated grid in local
/// memory for several steps, so it needs that grid (any rank, any boundary).
pub fn steps_unavailable(b: &StencilBody) -> Option<String> {
    let mut why = Vec::new();
    if b.out_reduce.is_some() || b.more.iter().any(|o| o.reduce.is_some()) {
        why.push("the stencil has reduction outputs, which are computed one step per launch".into());
    } else if !b.more.is_empty() {
        why.push(format!(
            "the stencil has {} outputs; temporal blocking is generated for one iterated grid",
            b.more.len() + 1
        ));
    } else if b.access.iterated.is_none() {
        let names: Vec<String> = b
            .access
            .state_candidates
            .iter()
            .map(|&i| format!("`{}`", b.args[i].name()))
            .collect();
        why.push(match names.len() {
            0 => format!(
                "no unpacked grid argument has the output's type `{}` to iterate",
                b.out.rust()
            ),
            _ => {
                // Suggest a grid read at neighbours (what an iteration's state is), else the first.
                let cands = &b.access.state_candidates;
                let likely = cands
                    .iter()
                    .copied()
                    .find(|&i| b.access.staged.get(i).copied().unwrap_or(false))
                    .unwrap_or(cands[0]);
                format!(
                    "several grids of the output's type `{}` ({}) could be the iterated state; name the one the \
                     output replaces at each step, e.g. `#[stencil(state = {})]`",
                    b.out.rust(),
                    names.join(", "),
                    b.args[likely].name()
                )
            }
        });
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// Why the march variant (2.5-D blocking: a work-group walks a column of tiles along z with the
/// planes it reads in a ring in local memory) is not generated, if it is not: it marches along
/// the third axis, so 1-D and 2-D stencils have none (their slowest axis is the tiled kernel's y).
pub fn march_unavailable(b: &StencilBody) -> Option<String> {
    (b.rank < 3).then(|| {
        format!(
            "the march variant walks along z and is generated for 3-D stencils only; this stencil is {}-D",
            b.rank
        )
    })
}

/// `__local` bytes per tile point of the tiled variant: every staged grid is held once (the
/// march variant's ring too, per plane).
pub fn tiled_local_bytes(b: &StencilBody) -> usize {
    grid_bytes(b, |i| b.access.staged[i])
}

/// `__local` bytes per tile point of the steps variant: two buffers of the iterated grid, and
/// one of every other grid the body reads ([`steps_staged`]).
pub fn steps_local_bytes(b: &StencilBody) -> usize {
    2 * b.out.bytes() + grid_bytes(b, |i| steps_staged(b, i))
}

/// The element bytes of the grid arguments `pick` selects (by argument index), summed.
fn grid_bytes(b: &StencilBody, pick: impl Fn(usize) -> bool) -> usize {
    b.args
        .iter()
        .enumerate()
        .filter_map(|(i, a)| match a {
            Arg::Field(f) if pick(i) => Some(f.elem.bytes()),
            _ => None,
        })
        .sum()
}

/// Whether the steps variant stages grid argument `arg` in local memory beside the iterated
/// one: every other grid the body reads, at any offset, loaded once per launch with the tile
/// and its halo (its reads then come from local memory in every step, not from global memory
/// step after step).
pub fn steps_staged(b: &StencilBody, arg: usize) -> bool {
    matches!(b.args.get(arg), Some(Arg::Field(_)))
        && b.access.read.get(arg).copied().unwrap_or(false)
        && b.access.iterated != Some(arg)
}
