//! The baseline: seed 002's CUDA kernels `jacobi_k` and `jacobi_k_noshared`, ported to
//! OpenCL by hand in `bench/baselines/seed002.cl`, launched through `Device::program` +
//! `Program::launch` with the seed's tile/block shapes.

use std::fmt;

use anyhow::{bail, Result};
use clforge::runtime::{Arg, Buffer, ConstBuffer, Device, Event, Program, Shape, StructBytes};
use serde::Serialize;

use crate::real::Real;

/// The hand port (see its header for what it keeps and what it fills in).
pub const SOURCE: &str = include_str!("../../baselines/seed002.cl");

/// Which of the seed's kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SeedKernel {
    /// Section 2.2.1: tile and halo in shared (local) memory.
    Shared,
    /// Section 2.2.2: neighbours from global memory (through L1).
    NoShared,
}

impl SeedKernel {
    pub fn name(self) -> &'static str {
        match self {
            SeedKernel::Shared => "jacobi_k",
            SeedKernel::NoShared => "jacobi_k_noshared",
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            SeedKernel::Shared => "shared",
            SeedKernel::NoShared => "no shared",
        }
    }
}

/// A tile/block shape of the seed's table 1: a tile of `block_x` x `tile_y` points per
/// block of `block_x` x `block_y` threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SeedShape {
    pub tile_y: usize,
    pub block_x: usize,
    pub block_y: usize,
}

impl fmt::Display for SeedShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}/{}x{}", self.block_x, self.tile_y, self.block_x, self.block_y)
    }
}

/// Seed 002, section 3, table 1 (GTX 570, 512x256): tile / block.
pub const TABLE_1: [SeedShape; 7] = [
    SeedShape {
        tile_y: 32,
        block_x: 32,
        block_y: 4,
    },
    SeedShape {
        tile_y: 16,
        block_x: 32,
        block_y: 4,
    },
    SeedShape {
        tile_y: 8,
        block_x: 32,
        block_y: 4,
    },
    SeedShape {
        tile_y: 4,
        block_x: 32,
        block_y: 4,
    },
    SeedShape {
        tile_y: 32,
        block_x: 32,
        block_y: 8,
    },
    SeedShape {
        tile_y: 16,
        block_x: 32,
        block_y: 8,
    },
    SeedShape {
        tile_y: 32,
        block_x: 32,
        block_y: 16,
    },
];

/// Table 2's one shape (Tesla X2070), also the fastest shared-memory shape of table 1 but one.
pub const TABLE_2: SeedShape = SeedShape {
    tile_y: 16,
    block_x: 32,
    block_y: 4,
};

/// The seed's kernels built for one device, in single and (if supported) double precision.
pub struct Seed {
    dev: Device,
    f32: Program,
    f64: Option<Program>,
}

impl Seed {
    pub fn build(dev: &Device) -> Result<Seed> {
        let f32 = dev.program("seed002.cl (float)", SOURCE, "-D REAL=float")?;
        let f64 = if dev.info().fp64 {
            Some(dev.program("seed002.cl (double)", SOURCE, "-D REAL=double")?)
        } else {
            None
        };
        Ok(Seed {
            dev: dev.clone(),
            f32,
            f64,
        })
    }

    fn program<T: Real>(&self) -> Result<&Program> {
        match T::NAME {
            "f32" => Ok(&self.f32),
            _ => self
                .f64
                .as_ref()
                .ok_or_else(|| anyhow::anyhow!("the device has no double precision")),
        }
    }

    /// Checks that the grid is made of whole tiles, as the seed's kernels assume.
    pub fn fits(grid: Shape, s: SeedShape) -> bool {
        let [nx, ny, _] = grid.dims();
        grid.rank() == 2
            && nx.is_multiple_of(s.block_x)
            && ny.is_multiple_of(s.tile_y)
            && s.tile_y.is_multiple_of(s.block_y)
            && s.tile_y <= s.block_x
    }

    /// The seed's `gpu_constants` (section 2.1) for a grid, shape, body and weights, laid out
    /// as the OpenCL struct: `jacobi_s` (3 x T), `tile_s` (8 ints), `square_s` (4 ints).
    pub fn constants<T: Real>(&self, grid: Shape, s: SeedShape, body: [usize; 4], k: [f32; 3]) -> Result<ConstBuffer> {
        if !Seed::fits(grid, s) {
            bail!("seed 002's kernels need whole {s} tiles; grid {grid} is not made of them");
        }
        let [nx, ny, _] = grid.dims();
        let ratio = s.tile_y / s.block_y;
        let xp2 = s.block_x + 2;
        let int = |v: usize| i32::try_from(v).unwrap_or(i32::MAX);
        let mut b = StructBytes::default();
        for c in k {
            b.put(T::from(c));
        }
        for v in [s.tile_y, xp2, xp2 + 1, nx, ny, ratio, ratio * nx, ratio * xp2] {
            b.put(int(v));
        }
        for v in body {
            b.put(int(v));
        }
        Ok(self.dev.constant_bytes(&b.finish())?)
    }

    /// Enqueues one iteration `psi = jacobi(psi_old)` of `which` with the seed's launch
    /// shape: global `nx x (ny / tile_y) * block_y`, local `block_x x block_y`.
    #[allow(clippy::too_many_arguments)]
    pub fn launch<T: Real>(
        &self,
        which: SeedKernel,
        s: SeedShape,
        grid: Shape,
        psi: &Buffer<T>,
        psi_old: &Buffer<T>,
        w: &Buffer<T>,
        consts: &ConstBuffer,
    ) -> Result<Event> {
        let [nx, ny, _] = grid.dims();
        let global = [nx, ny / s.tile_y * s.block_y];
        let local = [s.block_x, s.block_y];
        let mut args = vec![
            Arg::buffer(psi),
            Arg::buffer(psi_old),
            Arg::buffer(w),
            Arg::constant(consts),
        ];
        if which == SeedKernel::Shared {
            args.push(Arg::local((s.tile_y + 2) * (s.block_x + 2) * std::mem::size_of::<T>()));
        }
        Ok(self
            .program::<T>()?
            .launch(which.name(), &global, Some(&local), &args)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_of_table_1_fit_the_seed_grid() {
        for s in TABLE_1 {
            assert!(Seed::fits(Shape::d2(512, 256), s), "{s}");
        }
        assert!(!Seed::fits(Shape::d2(100, 64), TABLE_1[0]));
        assert_eq!(TABLE_1[1].to_string(), "32x16/32x4");
        assert!(TABLE_1.contains(&TABLE_2));
    }

    #[test]
    fn constants_follow_the_c_layout() {
        let dev = Device::default().unwrap();
        let seed = Seed::build(&dev).unwrap();
        let c = seed
            .constants::<f32>(Shape::d2(512, 256), TABLE_1[0], [1, 2, 3, 4], [0.25, 0.25, -1.0])
            .unwrap();
        assert_eq!(c.len(), 3 * 4 + 8 * 4 + 4 * 4);
        if dev.info().fp64 {
            let c = seed
                .constants::<f64>(Shape::d2(512, 256), TABLE_1[0], [1, 2, 3, 4], [0.25, 0.25, -1.0])
                .unwrap();
            assert_eq!(c.len(), 3 * 8 + 8 * 4 + 4 * 4);
        }
    }
}
