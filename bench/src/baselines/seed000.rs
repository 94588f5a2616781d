//! The baseline of the `elements` suite: seed 000's appendix kernels (algorithms 1-4 with the
//! node integration of appendix 10.1), ported in `bench/baselines/seed000.cl` and launched
//! through `Device::program` / `Program::launch` with the seed's work sizes.

use anyhow::{ensure, Result};
use clforge::runtime::element::stepper::Model;
use clforge::runtime::{Arg, Buffer, Device, Event, Program};

/// The hand port of seed 000's appendix kernels (see its header).
pub const SEED_SOURCE: &str = include_str!("../../baselines/seed000.cl");

/// Seed 000's four programs (one per algorithm: the appendix kernels share names).
pub struct Seed000 {
    programs: Vec<Program>,
}

impl Seed000 {
    pub fn build(dev: &Device) -> Result<Seed000> {
        let programs = (1..=4)
            .map(|a| {
                dev.program(
                    &format!("seed000.cl (algorithm {a})"),
                    SEED_SOURCE,
                    &format!("-D ALGORITHM={a}"),
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Seed000 { programs })
    }

    /// Whether the seed's fixed work sizes tile `nx × ny` elements: algorithms 1-2 need 8 × 8
    /// work-groups over (nx/2, ny/2), algorithm 3 blocks of 32 × 16 elements, algorithm 4
    /// blocks of 16 × 32, all in pairs (colours).
    pub fn fits(alg: u8, [nx, ny]: [usize; 2]) -> bool {
        let (bx, by) = match alg {
            1 | 2 => (8, 8),
            3 => (32, 16),
            _ => (16, 32),
        };
        nx.is_multiple_of(2 * bx) && ny.is_multiple_of(2 * by)
    }

    pub fn kernels(alg: u8) -> &'static str {
        match alg {
            1 => "apply_element_forces (alg. 1) + integrate",
            2 => "apply_element_forces_cnidx + integrate",
            3 => "apply_element_forces (alg. 3) + integrate",
            _ => "apply_element_forces (alg. 4) + integrate",
        }
    }

    pub fn config(alg: u8) -> &'static str {
        match alg {
            1 | 2 => "8x8 work-groups, 4 colours",
            3 => "L_x 32 L_y 2 WI_SIZE 8, 4 colours",
            _ => "L_x 16 L_y 4 WI_SIZE 8, 4 colours, no cracks",
        }
    }
}

/// The seed kernels' buffers for one mesh: `float2` per node as in the appendix.
pub struct SeedCase {
    elements: [usize; 2],
    nodes: usize,
    /// Time step (the `integrate` kernel's `dt`).
    dt: f32,
    /// Displacements `u`.
    pub shifts: Buffer<f32>,
    /// Velocities `v`.
    pub speeds: Buffer<f32>,
    forces: Buffer<f32>,
    masses: Buffer<f32>,
    dampness: Buffer<f32>,
    elem_nodes: Buffer<u32>,
    rows_k: Buffer<f32>,
    rows_g: Buffer<f32>,
    control: Buffer<u32>,
    masks: Buffer<u32>,
    stresses: Buffer<f32>,
}

impl SeedCase {
    /// Uploads `model` (structured, uniform) with state `u`, `v` and `F = C v`, for steps of
    /// `dt` with mass-proportional damping `alpha` (`dampness` holds `-alpha·m` per DOF).
    pub fn new(
        dev: &Device,
        model: &Model,
        elements: [usize; 2],
        u: &[f32],
        v: &[f32],
        (dt, alpha): (f64, f64),
    ) -> Result<SeedCase> {
        let nd = model.nd();
        ensure!(nd == 8, "seed 000's kernels are for 4-node, 2-DOF elements");
        let minv: Vec<f32> = model.mass.iter().map(|&m| 1.0 / m as f32).collect();
        let damp: Vec<f32> = model.mass.iter().map(|&m| -(alpha as f32) * m as f32).collect();
        let f: Vec<f32> = damp.iter().zip(v).map(|(&c, &v)| c * v).collect();
        let conn = model.mesh.connectivity(model.spec.node_offsets);
        let blocks = (elements[0] / 16) * (elements[1] / 32);
        Ok(SeedCase {
            elements,
            nodes: model.mesh.node_count(),
            dt: dt as f32,
            shifts: Buffer::from_slice(dev, u)?,
            speeds: Buffer::from_slice(dev, v)?,
            forces: Buffer::from_slice(dev, &f)?,
            masses: Buffer::from_slice(dev, &minv)?,
            dampness: Buffer::from_slice(dev, &damp)?,
            elem_nodes: Buffer::from_slice(dev, &conn)?,
            rows_k: Buffer::from_slice(dev, &model.stiffness[0].iter().map(|&v| v as f32).collect::<Vec<f32>>())?,
            rows_g: Buffer::from_slice(dev, &[0.0f32; 24])?,
            control: Buffer::from_slice(dev, &vec![0u32; 4 * blocks.max(1)])?,
            masks: Buffer::from_slice(dev, &[0u32; 16])?,
            stresses: Buffer::new(dev, 1)?,
        })
    }

    /// Enqueues one step of algorithm `alg`: 4 colour launches, then `integrate`.
    pub fn step(&self, seed: &Seed000, alg: u8) -> Result<Vec<Event>> {
        let program = &seed.programs[usize::from(alg - 1)];
        let [nx, ny] = self.elements;
        let mut events = Vec::with_capacity(5);
        // Colours 0..3 of figure 6: (even, even), (odd, even), (odd, odd), (even, odd).
        for (sx, sy) in [(0u32, 0u32), (1, 0), (1, 1), (0, 1)] {
            let ev = match alg {
                1 | 2 => {
                    let args = [
                        Arg::i32(0),
                        Arg::u32(sx),
                        Arg::u32(sy),
                        Arg::buffer(&self.rows_k),
                        Arg::buffer(&self.rows_g),
                        Arg::buffer(&self.elem_nodes),
                        Arg::buffer(&self.shifts),
                        Arg::buffer(&self.forces),
                        Arg::buffer(&self.stresses),
                    ];
                    let name = if alg == 1 {
                        "apply_element_forces"
                    } else {
                        "apply_element_forces_cnidx"
                    };
                    program.launch(name, &[nx / 2, ny / 2], Some(&[8, 8]), &args)?
                }
                3 => {
                    let args = [
                        Arg::i32(0),
                        Arg::u32(sx),
                        Arg::u32(sy),
                        Arg::buffer(&self.rows_k),
                        Arg::buffer(&self.rows_g),
                        Arg::buffer(&self.shifts),
                        Arg::buffer(&self.forces),
                        Arg::buffer(&self.stresses),
                    ];
                    program.launch("apply_element_forces", &[nx / 2, ny / 16], Some(&[32, 2]), &args)?
                }
                _ => {
                    let args = [
                        Arg::i32(0),
                        Arg::u32(sx),
                        Arg::u32(sy),
                        Arg::buffer(&self.control),
                        Arg::buffer(&self.masks),
                        Arg::buffer(&self.rows_k),
                        Arg::buffer(&self.rows_g),
                        Arg::buffer(&self.shifts),
                        Arg::buffer(&self.forces),
                        Arg::buffer(&self.stresses),
                    ];
                    program.launch("apply_element_forces", &[nx / 2, ny / 16], Some(&[16, 4]), &args)?
                }
            };
            events.push(ev);
        }
        let args = [
            Arg::f32(self.dt),
            Arg::buffer(&self.masses),
            Arg::buffer(&self.dampness),
            Arg::buffer(&self.forces),
            Arg::buffer(&self.speeds),
            Arg::buffer(&self.shifts),
        ];
        events.push(program.launch("integrate", &[self.nodes], None, &args)?);
        Ok(events)
    }
}
