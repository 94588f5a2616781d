//! Building blocks of the lattice kind (seed 003): a counter-based random stream whose bits are
//! the same on the host and on the device ([`rng`]), and bit-packed state with atomic updates on
//! the device ([`PackedBits`], [`BITS_CL`]). The OpenCL halves live in `templates/lattice/` and
//! are included here verbatim, so a kernel that pastes [`PHILOX_CL`] computes exactly what
//! [`rng::draw`] computes: a host replay of a device schedule draws the same numbers.

pub mod bonds;
pub(crate) mod plan;
#[cfg(feature = "mpi")]
pub(crate) mod ranks;
pub mod rng;
pub(crate) mod spec;
pub(crate) mod split;

pub use crate::grid::bits::{pack, packed_len, packed_site_key, packed_word_bit, packed_words_per_row, unpack};
pub use crate::grid::DeviceBits;
pub use bonds::{PackedBits, WorkQueue, QUEUE_CL};
pub use plan::{LatticePlan, StepEvents};
#[cfg(feature = "mpi")]
pub use ranks::RankLatticePlan;
pub use spec::{colour_of, host_sites, Draws, Lattice, Lattice1, Lattice2, Lattice3, LatticeSpec, LatticeState};
pub use split::SplitLatticePlan;

use crate::buffer::Scalar;
use crate::dist::{ArgOn, GridOn, Place};
use crate::error::Result;
use crate::grid::Shape;

/// Where a lattice rule runs: a [`Place`] that builds lattice plans (the generated `plan`
/// takes a [`Device`](crate::Device), [`Devices`](crate::Devices) or MPI `Ranks`).
pub trait LatticeTarget: Place {
    /// The rule built for this target.
    type Plan: LatticeLaunch<On = Self>;
    /// Builds and sizes the rule `spec` for lattices of `shape`.
    fn lattice_plan(&self, spec: LatticeSpec, shape: Shape) -> Result<Self::Plan>;
}

/// A built lattice rule: the generated `step_plan` calls [`LatticeLaunch::run_step`] with the
/// rule's arguments in order (the state among them), made by [`LatticeLaunch::On`]'s
/// constructors.
pub trait LatticeLaunch {
    /// The target the rule runs on (its grids and arguments).
    type On: Place;
    /// Step `step` of the run `seed` on `state`, in place.
    fn run_step<T: Scalar>(
        &self,
        state: &GridOn<Self::On, T>,
        args: &[ArgOn<'_, Self::On>],
        seed: u64,
        step: u32,
    ) -> Result<StepEvents>;
}

/// OpenCL C of Philox4x32-10 and the stream functions: `clforge_philox4x32_10`,
/// `clforge_draw(seed, step, site, draw)`, `clforge_site_block(seed, step, group, draw)` and
/// `clforge_word(block, j)` (the lattice kernels' draws, `rng::site_draw`), `clforge_uniform_f32(bits)`.
pub const PHILOX_CL: &str = include_str!("../../../templates/lattice/philox.cl");

/// OpenCL C of the bit-packed state: `clforge_bit_get`, and `clforge_bit_set` /
/// `clforge_bit_clear` through `atomic_or` / `atomic_and` (each returns the bit's old value).
pub const BITS_CL: &str = include_str!("../../../templates/lattice/bits.cl");

#[cfg(test)]
mod tests {
    /// A word holds sites of one colour: one parity along x, one row.
    #[test]
    fn a_word_is_one_colour() {
        let dims = [130, 6, 4];
        let mut colour = std::collections::HashMap::new();
        for z in 0..dims[2] {
            for y in 0..dims[1] {
                for x in 0..dims[0] {
                    let (word, _) = crate::grid::bits::packed_word_bit([x, y, z], dims);
                    for colours in [2, 8] {
                        let c = colour_of([x, y, z], colours);
                        assert_eq!(*colour.entry((word, colours)).or_insert(c), c);
                    }
                }
            }
        }
    }

    use super::*;
    use crate::{Arg, Buffer, Device};
    use rand::{rngs::SmallRng, Rng, SeedableRng};

    const TEST_CL: &str = "
__kernel void blocks(__global uint* out, __global const uint* in) {
    const int i = get_global_id(0);
    const uint4 r = clforge_philox4x32_10(vload4(i, in), (uint2)(in[4 * get_global_size(0) + 2 * i],
                                                                 in[4 * get_global_size(0) + 2 * i + 1]));
    vstore4(r, i, out);
}
__kernel void draws(__global uint* out, __global float* u, __global const ulong* seed_site,
                    __global const uint* step_draw) {
    const int i = get_global_id(0);
    out[i] = clforge_draw(seed_site[2 * i], step_draw[2 * i], seed_site[2 * i + 1], step_draw[2 * i + 1]);
    u[i] = clforge_uniform_f32(out[i]);
}
__kernel void set_bits(volatile __global uint* words, __global uint* was, __global const ulong* idx) {
    const int i = get_global_id(0);
    was[i] = clforge_bit_set(words, idx[i]);
}
__kernel void clear_bits(volatile __global uint* words, __global uint* was, __global const ulong* idx) {
    const int i = get_global_id(0);
    was[i] = clforge_bit_clear(words, idx[i]);
}
__kernel void get_bits(__global uint* out, __global const uint* words, __global const ulong* idx) {
    const int i = get_global_id(0);
    out[i] = clforge_bit_get(words, idx[i]);
}
";

    fn program(dev: &Device) -> crate::Program {
        let source = format!("{PHILOX_CL}\n{BITS_CL}\n{TEST_CL}");
        dev.program("lattice test", &source, "").unwrap()
    }

    /// The device's Philox blocks equal the host's on random and extreme counters and keys.
    #[test]
    fn device_streams_equal_host_streams() {
        let dev = Device::default().unwrap();
        let prog = program(&dev);
        let mut r = SmallRng::seed_from_u64(9);
        let n = 4096;
        let mut ctr: Vec<[u32; 4]> = (0..n).map(|_| r.random()).collect();
        let mut key: Vec<[u32; 2]> = (0..n).map(|_| r.random()).collect();
        (ctr[0], key[0]) = ([0; 4], [0; 2]);
        (ctr[1], key[1]) = ([u32::MAX; 4], [u32::MAX; 2]);
        let input: Vec<u32> = ctr.iter().flatten().chain(key.iter().flatten()).copied().collect();
        let input = Buffer::from_slice(&dev, &input).unwrap();
        let out = Buffer::<u32>::new(&dev, 4 * n).unwrap();
        prog.launch("blocks", &[n], None, &[Arg::buffer(&out), Arg::buffer(&input)])
            .unwrap();
        let got = out.to_vec().unwrap();
        for i in 0..n {
            assert_eq!(
                got[4 * i..4 * i + 4],
                rng::philox4x32_10(ctr[i], key[i]),
                "counter {:08x?}",
                ctr[i]
            );
        }
        // Draws and uniforms through the stream API, the site's high word and draw > 3 included.
        let mut seed_site: Vec<u64> = (0..2 * n).map(|_| r.random()).collect();
        let mut step_draw: Vec<u32> = (0..2 * n).map(|_| r.random_range(0..64)).collect();
        seed_site[..4].copy_from_slice(&[u64::MAX, u64::MAX, 0, 0]);
        step_draw[..4].copy_from_slice(&[u32::MAX, u32::MAX, 0, 0]);
        let ss = Buffer::from_slice(&dev, &seed_site).unwrap();
        let sd = Buffer::from_slice(&dev, &step_draw).unwrap();
        let u = Buffer::<f32>::new(&dev, n).unwrap();
        prog.launch(
            "draws",
            &[n],
            None,
            &[Arg::buffer(&out), Arg::buffer(&u), Arg::buffer(&ss), Arg::buffer(&sd)],
        )
        .unwrap();
        let (bits, u) = (out.to_vec().unwrap(), u.to_vec().unwrap());
        for i in 0..n {
            let want = rng::draw(
                seed_site[2 * i],
                step_draw[2 * i],
                seed_site[2 * i + 1],
                step_draw[2 * i + 1],
            );
            assert_eq!(bits[i], want, "draw {i}");
            assert_eq!(u[i].to_bits(), rng::uniform_f32(want).to_bits(), "uniform {i}");
        }
    }

    /// Many work-items setting bits of the same words at once lose none, report each bit's old
    /// value exactly once as clear, and the words read back as the host's packing.
    #[test]
    fn device_bit_updates_are_atomic_and_host_layout() {
        let dev = Device::default().unwrap();
        let prog = program(&dev);
        let mut r = SmallRng::seed_from_u64(4);
        let len = 1000u64;
        let n = 8192;
        // Indices crowd a few words, with repeats.
        let idx: Vec<u64> = (0..n)
            .map(|_| {
                if r.random_bool(0.5) {
                    r.random_range(0..70)
                } else {
                    r.random_range(0..len)
                }
            })
            .collect();
        let mut host = PackedBits::new(len).unwrap();
        for &i in &idx {
            host.set(i, true).unwrap();
        }
        let words = Buffer::from_slice(&dev, PackedBits::new(len).unwrap().words()).unwrap();
        let was = Buffer::<u32>::new(&dev, n).unwrap();
        let ib = Buffer::from_slice(&dev, &idx).unwrap();
        prog.launch(
            "set_bits",
            &[n],
            None,
            &[Arg::buffer(&words), Arg::buffer(&was), Arg::buffer(&ib)],
        )
        .unwrap();
        let dev_bits = PackedBits::from_words(len, words.to_vec().unwrap()).unwrap();
        assert_eq!(dev_bits, host);
        let first_setters = was.to_vec().unwrap().iter().filter(|&&w| w == 0).count() as u64;
        assert_eq!(
            first_setters,
            host.count_ones(),
            "each set bit was new to exactly one work-item"
        );
        let got = Buffer::<u32>::new(&dev, n).unwrap();
        prog.launch(
            "get_bits",
            &[n],
            None,
            &[Arg::buffer(&got), Arg::buffer(&words), Arg::buffer(&ib)],
        )
        .unwrap();
        assert!(got.to_vec().unwrap().iter().all(|&b| b == 1));
        // Clearing every other index: exactly those bits go, each reported once as set.
        let clear: Vec<u64> = idx.iter().step_by(2).copied().collect();
        let cb = Buffer::from_slice(&dev, &clear).unwrap();
        let was = Buffer::<u32>::new(&dev, clear.len()).unwrap();
        prog.launch(
            "clear_bits",
            &[clear.len()],
            None,
            &[Arg::buffer(&words), Arg::buffer(&was), Arg::buffer(&cb)],
        )
        .unwrap();
        let mut want = host.clone();
        let mut cleared = 0;
        for &i in &clear {
            cleared += u64::from(want.set(i, false).unwrap());
        }
        assert_eq!(PackedBits::from_words(len, words.to_vec().unwrap()).unwrap(), want);
        assert_eq!(
            was.to_vec().unwrap().iter().filter(|&&w| w == 1).count() as u64,
            cleared
        );
    }

    const PUSH_CL: &str = "
__kernel void push_live(volatile __global uint* count, __global uint* entries, const uint capacity,
                        __global const uint* live, const uint n) {
    const uint i = get_global_id(0);
    if (i < n && live[i]) clforge_queue_push(count, entries, capacity, i * 7u + 1u);
}
";

    /// The compaction keeps exactly the flagged entries, in order, whatever the length
    /// (block boundaries, one block, empty) and however many rounds: no live entry is lost.
    #[test]
    fn compaction_never_loses_a_live_entry() {
        let dev = Device::default().unwrap();
        let mut r = SmallRng::seed_from_u64(21);
        for n in [0usize, 1, 2, 255, 256, 257, 1000, 70_001] {
            let entries: Vec<u32> = (0..n).map(|_| r.random()).collect();
            let mut q = WorkQueue::from_entries(&dev, "live bonds", n.max(1) + 5, &entries).unwrap();
            let mut want = entries.clone();
            for round in 0..3 {
                let p = [0.5, 0.9, 0.02][round];
                let keep: Vec<u32> = (0..want.len()).map(|_| u32::from(r.random_bool(p))).collect();
                let kb = Buffer::from_slice(&dev, if keep.is_empty() { &[0][..] } else { &keep[..] }).unwrap();
                let kept = q.compact(&kb).unwrap();
                want = want
                    .iter()
                    .zip(&keep)
                    .filter(|(_, &k)| k != 0)
                    .map(|(&e, _)| e)
                    .collect();
                assert_eq!(kept, want.len(), "n {n}, round {round}");
                assert_eq!(q.to_vec().unwrap(), want, "n {n}, round {round}");
            }
        }
        let mut q = WorkQueue::from_entries(&dev, "q", 4, &[1, 2, 3]).unwrap();
        let short = Buffer::from_slice(&dev, &[1u32, 1]).unwrap();
        assert!(matches!(q.compact(&short), Err(crate::Error::LengthMismatch { .. })));
        assert!(matches!(
            WorkQueue::from_entries(&dev, "q", 2, &[1, 2, 3]),
            Err(crate::Error::QueueOverflow { .. })
        ));
        assert!(WorkQueue::new(&dev, "q", 0).is_err());
    }

    /// Work-items append concurrently: every entry arrives once; past the capacity the queue
    /// reports a typed overflow instead of corrupting memory, and `clear` recovers it.
    #[test]
    fn appends_are_atomic_and_overflow_is_an_error() {
        let dev = Device::default().unwrap();
        let source = format!("{QUEUE_CL}\n{PUSH_CL}");
        let prog = dev.program("queue test", &source, "").unwrap();
        let mut r = SmallRng::seed_from_u64(5);
        let n = 5000usize;
        let live: Vec<u32> = (0..n).map(|_| u32::from(r.random_bool(0.3))).collect();
        let lb = Buffer::from_slice(&dev, &live).unwrap();
        let want: Vec<u32> = (0..n as u32)
            .filter(|&i| live[i as usize] != 0)
            .map(|i| i * 7 + 1)
            .collect();
        let launch = |q: &WorkQueue| {
            let [a, b, c] = q.args();
            prog.launch(
                "push_live",
                &[n],
                None,
                &[a, b, c, Arg::buffer(&lb), Arg::u32(n as u32)],
            )
            .unwrap();
        };
        let q = WorkQueue::new(&dev, "live", n).unwrap();
        launch(&q);
        let mut got = q.to_vec().unwrap();
        got.sort_unstable();
        assert_eq!(got, want);
        let small = want.len() / 2;
        let mut q = WorkQueue::new(&dev, "live", small).unwrap();
        launch(&q);
        match q.len() {
            Err(crate::Error::QueueOverflow {
                capacity,
                attempted,
                lost,
                ..
            }) => {
                assert_eq!(
                    (capacity, attempted, lost),
                    (small, want.len() as u64, (want.len() - small) as u64)
                );
            }
            other => panic!("expected an overflow, got {other:?}"),
        }
        let msg = q.to_vec().unwrap_err().to_string();
        assert!(msg.contains("overflowed") && msg.contains("larger capacity"), "{msg}");
        q.clear().unwrap();
        assert_eq!(q.len().unwrap(), 0);
    }
}
