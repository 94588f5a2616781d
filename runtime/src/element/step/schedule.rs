//! Schedules of the race-free element-force scatter (seed 000, algorithms 1-4, and a
//! node-centric gather) and the launch plans that run them.

use crate::element::mesh::{Mesh, StructuredMesh};
use crate::error::{Error, Result};

/// Tunables of the blocked schedules (seed algorithm 3): a work-group of `l_x × l_y`
/// work-items, each walking `wi_size` elements up its column. Passed as `-D` build options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocking {
    /// Work-items (element columns) per block along x.
    pub l_x: usize,
    /// Work-items per block along y.
    pub l_y: usize,
    /// Elements each work-item walks along y.
    pub wi_size: usize,
}

impl Default for Blocking {
    /// The seed's algorithm-4 block: 16 × 4 work-items of 8 elements (512 elements).
    fn default() -> Self {
        use clforge_abi::element::{L_X, L_Y, WI_SIZE};
        Blocking {
            l_x: L_X,
            l_y: L_Y,
            wi_size: WI_SIZE,
        }
    }
}

impl Blocking {
    /// Elements per block along y (saturating at `usize::MAX`).
    pub fn rows(&self) -> usize {
        self.l_y.saturating_mul(self.wi_size)
    }

    /// 32-bit words of one block's crack mask (saturating at `usize::MAX` for blockings whose
    /// element count overflows).
    pub fn mask_words(&self) -> usize {
        self.checked_mask_words().unwrap_or(usize::MAX)
    }

    /// Elements of one block, `l_x · l_y · wi_size`, or `None` on overflow.
    pub fn checked_elements(&self) -> Option<usize> {
        self.l_x.checked_mul(self.l_y)?.checked_mul(self.wi_size)
    }

    /// [`Blocking::mask_words`], or `None` where the block's element count overflows.
    pub fn checked_mask_words(&self) -> Option<usize> {
        self.checked_elements()?;
        Some(clforge_abi::element::mask_words(self.l_x, self.l_y, self.wi_size))
    }

    /// Blocks along x, y, z of a structured mesh (blocks are one element deep in z; a zero
    /// size counts as 1, which [`plan`] refuses).
    pub fn blocks(&self, m: &StructuredMesh) -> [usize; 3] {
        [
            m.elements[0].div_ceil(self.l_x.max(1)),
            m.elements[1].div_ceil(self.rows().max(1)),
            m.elements[2],
        ]
    }

    /// The build options that set the kernels' `L_X`, `L_Y`, `WI_SIZE`.
    pub fn options(&self) -> String {
        format!("-D L_X={} -D L_Y={} -D WI_SIZE={}", self.l_x, self.l_y, self.wi_size)
    }
}

/// How element forces `F -= K_e·U_e` are scattered without races.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForceSchedule {
    /// One launch per colour of a structured grid (4 in 2-D, 8 in 3-D), node indices loaded
    /// (seed algorithm 1).
    Coloured,
    /// One launch per greedy colour of an unstructured mesh.
    Unstructured,
    /// As `Coloured` with node indices computed (seed algorithm 2).
    Computed,
    /// Coloured blocks walked with register shifting (seed algorithm 3).
    Blocked(Blocking),
    /// As `Blocked` with a material and crack mask per block (seed algorithm 4).
    BlockedMaterial(Blocking),
    /// Each node gathers its own forces, fused with the node integration (no colours): on a
    /// structured grid from its adjacent elements by position; on an unstructured mesh (any
    /// element, simplices too) a work-item per DOF walks its node's list of elements, reading
    /// each element's own `K_e` (without loads, the same bits as the host reference).
    Gather,
}

impl ForceSchedule {
    /// The kernel's suffix: kernels are `<element>_<suffix>`.
    pub fn suffix(&self) -> &'static str {
        match self {
            ForceSchedule::Coloured => "coloured",
            ForceSchedule::Unstructured => "unstructured",
            ForceSchedule::Computed => "computed",
            ForceSchedule::Blocked(_) => "blocked",
            ForceSchedule::BlockedMaterial(_) => "blocked_mat",
            ForceSchedule::Gather => "gather",
        }
    }

    /// Build options for this schedule's tunables.
    pub fn options(&self) -> String {
        match self {
            ForceSchedule::Blocked(b) | ForceSchedule::BlockedMaterial(b) => b.options(),
            _ => String::new(),
        }
    }

    /// Every schedule for a structured mesh, blocked ones with `blocking`.
    pub fn structured(blocking: Blocking) -> Vec<ForceSchedule> {
        vec![
            ForceSchedule::Coloured,
            ForceSchedule::Computed,
            ForceSchedule::Blocked(blocking),
            ForceSchedule::BlockedMaterial(blocking),
            ForceSchedule::Gather,
        ]
    }
}

/// One kernel launch of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pass {
    /// Global work size.
    pub global: Vec<usize>,
    /// Work-group size, if the kernel requires one.
    pub local: Option<Vec<usize>>,
    /// Colour shift `(sx, sy, sz)` of structured colourings.
    pub shift: [i32; 3],
    /// First element and element count of an unstructured colour.
    pub range: (usize, usize),
}

/// The launches of one element-force sweep. `colour_sizes` are the element counts per colour
/// of an unstructured mesh (elements stored colour by colour).
pub fn plan(schedule: ForceSchedule, mesh: &Mesh, colour_sizes: &[usize]) -> Result<Vec<Pass>> {
    let structured = |s: ForceSchedule| -> Result<&StructuredMesh> {
        match mesh {
            Mesh::Structured(m) => m.check().map(|()| m),
            Mesh::Unstructured(_) => Err(Error::InvalidConfig(format!(
                "schedule `{}` needs a structured mesh; use `ForceSchedule::Gather` or `ForceSchedule::Unstructured` for an unstructured one",
                s.suffix()
            ))),
        }
    };
    let colours = |dim: usize| -> Vec<[usize; 3]> {
        (0..1usize << dim)
            .map(|c| [c & 1, (c >> 1) & 1, (c >> 2) & 1])
            .collect()
    };
    let shift = |s: [usize; 3]| s.map(|v| v as i32);
    let mut passes = Vec::new();
    match schedule {
        ForceSchedule::Coloured | ForceSchedule::Computed => {
            let m = structured(schedule)?;
            for s in colours(m.dim) {
                let global: Vec<usize> = (0..3).map(|k| m.elements[k].saturating_sub(s[k]).div_ceil(2)).collect();
                if !global.contains(&0) {
                    passes.push(Pass {
                        global,
                        local: None,
                        shift: shift(s),
                        range: (0, 0),
                    });
                }
            }
        }
        ForceSchedule::Blocked(b) | ForceSchedule::BlockedMaterial(b) => {
            let m = structured(schedule)?;
            if b.l_x == 0 || b.l_y == 0 || b.wi_size == 0 {
                return Err(Error::InvalidConfig(format!(
                    "blocking {b:?} must have non-zero sizes; every field is at least 1"
                )));
            }
            if b.checked_elements().is_none() {
                return Err(Error::TooLarge {
                    what: format!("blocking {b:?}"),
                    detail: "its l_x · l_y · wi_size elements per block overflow usize".into(),
                });
            }
            let nb = b.blocks(m);
            for s in colours(m.dim) {
                let g: Vec<usize> = (0..3).map(|k| nb[k].saturating_sub(s[k]).div_ceil(2)).collect();
                if !g.contains(&0) {
                    let (Some(gx), Some(gy)) = (g[0].checked_mul(b.l_x), g[1].checked_mul(b.l_y)) else {
                        return Err(Error::TooLarge {
                            what: format!("blocking {b:?} of a mesh of {:?} elements", m.elements),
                            detail: "its global work size overflows usize".into(),
                        });
                    };
                    passes.push(Pass {
                        global: vec![gx, gy, g[2]],
                        local: Some(vec![b.l_x, b.l_y, 1]),
                        shift: shift(s),
                        range: (0, 0),
                    });
                }
            }
        }
        ForceSchedule::Unstructured => {
            let mut first = 0;
            for &count in colour_sizes {
                if count > 0 {
                    passes.push(Pass {
                        global: vec![count],
                        local: None,
                        shift: [0; 3],
                        range: (first, count),
                    });
                }
                first += count;
            }
        }
        ForceSchedule::Gather => {
            // A structured grid: a work-item per node of the grid; any other mesh: a work-item
            // per DOF (`_gather_unstructured`, the stepper scales by the DOFs per node).
            let global = match mesh {
                Mesh::Structured(m) => {
                    m.check()?;
                    m.nodes().to_vec()
                }
                Mesh::Unstructured(m) => {
                    m.check()?;
                    vec![m.node_count()]
                }
            };
            passes.push(Pass {
                global,
                local: None,
                shift: [0; 3],
                range: (0, 0),
            });
        }
    }
    Ok(passes)
}
