//! The lattice suite's hand-written ceiling: `bench/baselines/ising_c4.cl` (one byte per spin,
//! four sites per work-item sharing one Philox block), with its own host replay: the kernel is
//! checked bit for bit before it is timed, like every kernel of the bench.

use anyhow::{ensure, Result};
use clforge::runtime::lattice::{rng, PHILOX_CL};
use clforge::runtime::{Arg, Buffer, Device, Event, Program};

pub const SOURCE: &str = include_str!("../../baselines/ising_c4.cl");

pub struct IsingC4 {
    program: Program,
}

impl IsingC4 {
    pub fn build(dev: &Device) -> Result<IsingC4> {
        Ok(IsingC4 {
            program: dev.program(
                "hand-written Ising, 4 sites per work-item",
                &format!("{PHILOX_CL}\n{SOURCE}"),
                "",
            )?,
        })
    }

    /// One colour's launch over an `nx` × `ny` lattice (`nx` a multiple of 8).
    #[allow(clippy::too_many_arguments)]
    pub fn launch(
        &self,
        s: &Buffer<u8>,
        nx: usize,
        ny: usize,
        seed: u64,
        step: u32,
        colour: i32,
        t: (u32, u32),
    ) -> Result<Event> {
        ensure!(
            nx.is_multiple_of(8) && nx * ny == s.len(),
            "the hand-written Ising needs nx a multiple of 8"
        );
        let args = [
            Arg::buffer(s),
            Arg::u32(t.0),
            Arg::u32(t.1),
            Arg::i32(nx as i32),
            Arg::i32(ny as i32),
            Arg::u32(seed as u32),
            Arg::u32((seed >> 32) as u32),
            Arg::u32(step),
            Arg::i32(colour),
        ];
        let groups = (nx / 8).div_ceil(64) * 64;
        Ok(self
            .program
            .launch("ising_c4", &[groups, ny.div_ceil(4) * 4], Some(&[64, 4]), &args)?)
    }

    /// The same colour on the host, site by site.
    pub fn host(s: &mut [u8], nx: usize, ny: usize, seed: u64, step: u32, colour: usize, t: (u32, u32)) {
        for y in 0..ny {
            let p = (colour + y) & 1;
            for m in 0..nx / 8 {
                let r = rng::philox4x32_10(
                    [(m + (nx / 8) * y) as u32, 0, step, p as u32],
                    [seed as u32, (seed >> 32) as u32],
                );
                for (j, u) in r.iter().enumerate() {
                    let x = 8 * m + 2 * j + p;
                    let at = |x: usize, y: usize| s[x + nx * y];
                    let n =
                        at((x + nx - 1) % nx, y) + at((x + 1) % nx, y) + at(x, (y + ny - 1) % ny) + at(x, (y + 1) % ny);
                    let me = at(x, y);
                    let a = if me == 1 { n } else { 4 - n };
                    if a <= 2 || (a == 3 && *u < t.0) || (a == 4 && *u < t.1) {
                        s[x + nx * y] = 1 - me;
                    }
                }
            }
        }
    }
}
