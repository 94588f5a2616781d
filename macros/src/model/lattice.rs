//! A lattice rule (seed 003's kind): a stochastic update of one site of an in-place state,
//! reading its neighbours and drawing counter-based random numbers, run on a checkerboard.

use super::sweep::SweepRead;
use super::Stencil;

/// A lattice rule: the body as a stencil body, which argument is the state (`s: &Lattice<T>`),
/// where the random stream argument (`rng: &Draws`) sits in the signature, and every read of
/// the state (for the checkerboard's legality).
#[derive(Clone, Debug)]
pub struct Lattice {
    /// The body, arguments (the draws argument left out) and boundary; `stencil.out` is the
    /// state's type.
    pub stencil: Stencil,
    /// The argument index (in `stencil.args`) of the state.
    pub state: usize,
    /// The position of `rng: &Draws` in the Rust signature, if the rule draws.
    pub draws: Option<usize>,
    /// Every read of the state (`new` is unused: all reads are `.at(..)`).
    pub reads: Vec<SweepRead>,
}
