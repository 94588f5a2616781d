//! One explicit step on the device: the element-force passes, the gather, the loads and the
//! integration, launched in order.

use crate::element::kernels::{At, ElementKernels};
use crate::element::plan::*;
use crate::element::schedule::ForceSchedule;
use crate::element::Real;
use crate::error::Result;
use crate::program::{Event, Program};

impl<R: Real> Stepper<R> {
    /// Runs `n` steps (queued; reading results waits for them).
    pub fn step(&mut self, n: usize) -> Result<()> {
        let kernels = self.kernels()?;
        let mut events = Vec::new();
        let [nx, ny, nz] = self.mesh_dims;
        let dt = self.dt;
        fn at<'a>(program: &'a Program, global: &'a [usize], local: Option<&'a [usize]>) -> At<'a> {
            At { program, global, local }
        }
        let mut left = n;
        while left > 0 {
            left -= 1;
            let t = self.steps as f64 * dt.widen();
            if self.schedule == ForceSchedule::Gather {
                let pass = &self.passes[0];
                // Several steps per launch while no load kicks the state between them.
                let several = self.gather_steps;
                if several > 1 && left + 1 >= several && self.derived && self.loads.is_empty() {
                    if let (Some(tab), Some(v_alt)) = (self.mass_table.as_ref(), self.v_alt.as_mut()) {
                        let (global, local) = steps_launch(&pass.global, self.steps_box);
                        events.push(kernels.gather_steps(
                            at(&self.program, &global, Some(&local)),
                            &self.k,
                            &tab.tab,
                            &tab.fixed,
                            &self.u,
                            &mut self.u_alt,
                            &self.v,
                            v_alt,
                            dt,
                            nx,
                            ny,
                            nz,
                        )?);
                        std::mem::swap(&mut self.u, &mut self.u_alt);
                        std::mem::swap(&mut self.v, v_alt);
                        self.steps += several as u64;
                        left -= several - 1;
                        continue;
                    }
                }
                if self.gather_unstructured {
                    let all = 0..self.n_dofs;
                    events.extend(self.launch_gather_unstructured(kernels, all)?);
                } else if let Some(t) = self.mass_table.as_ref().filter(|_| self.derived) {
                    let (global, local) = gather_launch(&pass.global, self.gather_rows, self.groups.gather);
                    events.push(kernels.gather_derived(
                        at(&self.program, &global, local.as_deref()),
                        &self.k,
                        &t.tab,
                        &t.fixed,
                        &self.u,
                        &mut self.u_alt,
                        &mut self.v,
                        dt,
                        nx,
                        ny,
                        nz,
                    )?);
                } else {
                    let gather = if self.per_element {
                        ElementKernels::gather_pe
                    } else {
                        ElementKernels::gather
                    };
                    let (global, local) = gather_launch(&pass.global, 1, self.groups.arrays);
                    events.push(gather(
                        kernels,
                        at(&self.program, &global, local.as_deref()),
                        &self.k,
                        &self.minv,
                        &self.damp,
                        &self.u,
                        &mut self.u_alt,
                        &mut self.v,
                        dt,
                        nx,
                        ny,
                        nz,
                    )?);
                }
                self.end_gather_step(kernels, &mut events)?;
                continue;
            }
            for l in &self.loads {
                let s = R::of(l.time.value(t));
                let (global, local) = flat_launch(l.n, self.groups.flat_ok);
                events.push(kernels.load(
                    at(&self.program, &global, local.as_ref().map(|l| &l[..])),
                    &l.dofs,
                    &l.weights,
                    s,
                    &mut self.f,
                    l.n as i32,
                )?);
            }
            for p in &self.passes {
                let [sx, sy, sz] = p.shift;
                let a = at(&self.program, &p.global, p.local.as_deref());
                let (u, f) = (&self.u, &mut self.f);
                events.push(match self.schedule {
                    ForceSchedule::Coloured => {
                        kernels.coloured(a, &self.k, &self.elem_nodes, u, f, nx, ny, nz, sx, sy, sz)?
                    }
                    ForceSchedule::Unstructured if self.per_element => kernels.unstructured_pe(
                        a,
                        &self.k,
                        &self.elem_nodes_sorted,
                        u,
                        f,
                        p.range.0 as i32,
                        p.range.1 as i32,
                    )?,
                    ForceSchedule::Unstructured => kernels.unstructured(
                        a,
                        &self.k,
                        &self.elem_nodes_sorted,
                        u,
                        f,
                        p.range.0 as i32,
                        p.range.1 as i32,
                    )?,
                    ForceSchedule::Computed => kernels.computed(a, &self.k, u, f, nx, ny, nz, sx, sy, sz)?,
                    ForceSchedule::Blocked(_) => kernels.blocked(a, &self.k, u, f, nx, ny, nz, sx, sy, sz)?,
                    ForceSchedule::BlockedMaterial(_) => {
                        kernels.blocked_mat(a, &self.control, &self.masks, &self.k_all, u, f, nx, ny, nz, sx, sy, sz)?
                    }
                    ForceSchedule::Gather => continue,
                });
            }
            let (global, local) = flat_launch(self.n_dofs, self.groups.flat_ok);
            events.push(kernels.integrate(
                at(&self.program, &global, local.as_ref().map(|l| &l[..])),
                &self.minv,
                &self.damp,
                &mut self.u,
                &mut self.v,
                &mut self.f,
                dt,
                self.n_dofs as i32,
            )?);
            self.steps += 1;
        }
        self.last_events = events;
        Ok(())
    }

    /// The unstructured node gather of the next step over DOFs `dofs` (into the next
    /// displacements), behind the queued work: a split part launches its interior while its
    /// ghosts travel, then the DOFs next to them ([`Stepper::end_gather_step`] ends the step).
    pub(crate) fn launch_gather_unstructured(
        &mut self,
        kernels: &dyn ElementKernels<R>,
        dofs: std::ops::Range<usize>,
    ) -> Result<Option<Event>> {
        if dofs.is_empty() {
            return Ok(None);
        }
        // Whole work-groups of FLAT_GROUP (the kernel skips DOFs past the range): for a range of
        // awkward length (a split part's interior, a prime) the driver's own choice can be a
        // work-group of one work-item.
        let (global, local) = flat_launch(dofs.len(), self.groups.unstructured);
        let at = At {
            program: &self.program,
            global: &global,
            local: local.as_ref().map(|l| &l[..]),
        };
        Ok(Some(kernels.gather_unstructured(
            at,
            &self.k,
            &self.elem_nodes,
            &self.node_first,
            &self.node_slots,
            &self.minv,
            &self.damp,
            &self.u,
            &mut self.u_alt,
            &mut self.v,
            self.dt,
            dofs.start as i32,
            dofs.end as i32,
        )?))
    }

    /// Ends a gather step: the new displacements become current, then the loads' kicks.
    pub(crate) fn end_gather_step(&mut self, kernels: &dyn ElementKernels<R>, events: &mut Vec<Event>) -> Result<()> {
        let t = self.steps as f64 * self.dt.widen();
        std::mem::swap(&mut self.u, &mut self.u_alt);
        for l in &self.loads {
            let s = R::of(l.time.value(t));
            let (global, local) = flat_launch(l.n, self.groups.flat_ok);
            let at = At {
                program: &self.program,
                global: &global,
                local: local.as_ref().map(|l| &l[..]),
            };
            events.push(kernels.kick(
                at,
                &l.dofs,
                &l.weights,
                s,
                &self.minv,
                &mut self.u,
                &mut self.v,
                self.dt,
                l.n as i32,
            )?);
        }
        self.steps += 1;
        Ok(())
    }
}
