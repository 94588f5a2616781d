//! The explicit step on several devices of one host (issue 13, item 1): the mesh's elements
//! cut into contiguous parts (by element order on a structured grid, whose order is by rows and
//! planes; by centroid along the mesh's longest extent on an unstructured one) in proportion
//! to the devices' shares; each node is owned by the part of its first element.
//!
//! Each device steps an ordinary [`Stepper`] on a sub-model: every element that touches one of
//! its nodes, in the mesh's element order, with their nodes. Its own nodes thus see all their
//! elements and step exactly as on one device; the other nodes of its elements (ghosts) step
//! with part of their forces and are overwritten after every step with their owners' values,
//! through host memory. Nodes are numbered per part as: own nodes that are ghosts elsewhere,
//! other own nodes, ghosts — so an exchange reads and writes one contiguous range per part.
//!
//! The sub-models step with `ForceSchedule::Gather` (the node gather on their unstructured
//! sub-meshes) unless the configuration asks for `ForceSchedule::Unstructured`. With the gather, each
//! DOF sums its elements in element order on any number of parts: without loads a split run
//! gives the bits of one device's gather on the same mesh as an unstructured mesh.

use std::collections::BTreeMap;

use crate::cl::Pinned;
use crate::device::Device;
use crate::dist::Devices;
use crate::element::load::Load;
use crate::element::mesh::{ElementMap, Mesh, UnstructuredMesh};
use crate::element::plan::{Explicit, Stepper};
use crate::element::problem::{Model, StepperConfig};
use crate::element::schedule::ForceSchedule;
use crate::element::stability::{check_time_step, StabilityBound};
use crate::element::step::real::Real;
use crate::error::{Error, Result};
use crate::program::Event;

/// One device's share of the model.
struct Part<R: Real> {
    stepper: Stepper<R>,
    /// Global node of each of the part's nodes.
    nodes: Vec<usize>,
    /// The first `send` nodes are own nodes that other parts hold as ghosts.
    send: usize,
    /// The part's nodes from `ghost_from` on are ghosts.
    ghost_from: usize,
    /// For each ghost (in order): the owning part and the node's index in its send range.
    ghosts: Vec<(usize, usize)>,
    /// Pinned host memory of the exchanges, made at the first.
    staging: Option<Staging<R>>,
}

/// A part's exchange staging: its sent `u`, `v`; its ghosts' received `u`, `v` and damping
/// force; the writes of the last exchange, which read the received ones.
struct Staging<R: Real> {
    send: [Pinned<R>; 2],
    recv: [Pinned<R>; 3],
    pending: Vec<Event>,
}

impl<R: Real> Drop for Staging<R> {
    fn drop(&mut self) {
        for e in self.pending.drain(..) {
            let _ = e.wait();
        }
    }
}

/// One part of a [`Partition`]: its sub-model and how its nodes map to the whole model's.
pub(crate) struct PartPlan {
    /// The elements touching the part's own nodes, in mesh order, with their nodes.
    pub(crate) model: Model,
    /// Global node of each of the part's nodes.
    pub(crate) nodes: Vec<usize>,
    /// The first `send` nodes are own nodes that other parts hold as ghosts.
    pub(crate) send: usize,
    /// The part's nodes from `ghost_from` on are ghosts.
    pub(crate) ghost_from: usize,
    /// For each ghost (in order): the owning part and the node's index in its send range.
    pub(crate) ghosts: Vec<(usize, usize)>,
}

/// A model cut into parts (see the module docs); the same on every rank that computes it.
pub(crate) struct Partition {
    pub(crate) parts: Vec<PartPlan>,
    /// (part, element of the part) that reports each element's stress.
    pub(crate) elem_home: Vec<(usize, usize)>,
    /// (part, local node) of each global node's owner.
    pub(crate) owner: Vec<(usize, usize)>,
    pub(crate) dofs: usize,
    pub(crate) strains: usize,
    pub(crate) bound: StabilityBound,
    /// The configuration the parts step with.
    pub(crate) config: StepperConfig,
}

/// The explicit step split over [`Devices`]; the same calls as [`Stepper`].
pub struct SplitStepper<R: Real = f32> {
    parts: Vec<Part<R>>,
    /// Element rings around each part's own nodes: steps between exchanges.
    layers: usize,
    /// Steps since the last exchange.
    since: usize,
    /// (part, element of the part) that reports each element's stress.
    elem_home: Vec<(usize, usize)>,
    strains: usize,
    bound: StabilityBound,
    /// (part, local node) of each global node's owner.
    owner: Vec<(usize, usize)>,
    dofs: usize,
    n_dofs: usize,
    /// Exchanges inside a `step(n)` overlap the next step's interior ([`Devices::overlap`]).
    overlap: bool,
}

impl<R: Real> std::fmt::Debug for SplitStepper<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SplitStepper")
            .field("parts", &self.parts.len())
            .field("real", &R::NAME)
            .finish_non_exhaustive()
    }
}

/// Coordinates of every node of a mesh.
fn node_coords(mesh: &Mesh) -> Vec<[f64; 3]> {
    match mesh {
        Mesh::Unstructured(m) => m.coords.clone(),
        Mesh::Structured(m) => (0..m.node_count()).map(|n| m.node_position(n)).collect(),
    }
}

impl<R: Real> SplitStepper<R> {
    /// Splits `model` over `devices` (shares from [`Devices::with_weights`] or
    /// [`Devices::measured`]) and builds a [`Stepper`] per device. Every part must hold at
    /// least one element.
    pub fn with_precision(devices: &Devices, model: &Model, config: &StepperConfig) -> Result<SplitStepper<R>> {
        let layers = devices.depth_planes();
        let p = partition(model, devices.weights(), layers, config)?;
        let mut parts = Vec::with_capacity(p.parts.len());
        for (plan, device) in p.parts.into_iter().zip(devices.devices()) {
            parts.push(Part {
                stepper: Stepper::<R>::with_precision(device, &plan.model, &p.config)?,
                nodes: plan.nodes,
                send: plan.send,
                ghost_from: plan.ghost_from,
                ghosts: plan.ghosts,
                staging: None,
            });
        }
        let n_dofs = p.owner.len() * p.dofs;
        let overlap = devices.overlapping() && parts.len() > 1 && parts.iter().all(|p| p.stepper.steps_in_ranges());
        Ok(SplitStepper {
            overlap,
            parts,
            layers: layers.max(1),
            since: 0,
            elem_home: p.elem_home,
            strains: p.strains,
            bound: p.bound,
            owner: p.owner,
            dofs: p.dofs,
            n_dofs,
        })
    }
}

/// Cuts `model` into parts in proportion to `weights` (see the module docs).
pub(crate) fn partition(model: &Model, weights: &[f64], layers: usize, config: &StepperConfig) -> Result<Partition> {
    {
        model.validate()?;
        // The whole model's bound: each part checks its own again (never tighter).
        let bound = check_time_step(model, config.dt, config.alpha, config.c_max)?;
        let spec = model.spec;
        let (npe, dofs) = (spec.nodes, spec.dofs);
        let ne = model.mesh.element_count();
        let nn = model.mesh.node_count();
        let k = weights.len();
        if ne < k {
            return Err(Error::InvalidConfig(format!(
                "a model of {ne} elements cannot be split over {k} devices; use at most {ne}"
            )));
        }
        let conn = model.mesh.connectivity(spec.node_offsets);
        let coords = node_coords(&model.mesh);
        let order = cut_order(model, &conn, &coords);
        let part_of = assign_parts(&order, weights)?;
        // A node belongs to the part of its first element in cut order.
        let mut node_part = vec![usize::MAX; nn];
        for &e in &order {
            for &n in &conn[e * npe..(e + 1) * npe] {
                if node_part[n as usize] == usize::MAX {
                    node_part[n as usize] = part_of[e];
                }
            }
        }
        let (parts_elems, held) = rings(&conn, npe, nn, k, &node_part, layers);
        // Own nodes held elsewhere are sent; number them first.
        let mut sent = vec![false; nn];
        for (p, h) in held.iter().enumerate() {
            for &n in h {
                if node_part[n] != p {
                    sent[n] = true;
                }
            }
        }
        let mut layouts = Vec::with_capacity(k);
        let mut owner = vec![(0, 0); nn];
        for (p, h) in held.iter().enumerate() {
            let own_sent: Vec<usize> = h.iter().copied().filter(|&n| node_part[n] == p && sent[n]).collect();
            let own_rest: Vec<usize> = h.iter().copied().filter(|&n| node_part[n] == p && !sent[n]).collect();
            let ghosts: Vec<usize> = h.iter().copied().filter(|&n| node_part[n] != p).collect();
            for (i, &n) in own_sent.iter().chain(&own_rest).enumerate() {
                owner[n] = (p, i);
            }
            layouts.push((own_sent, own_rest, ghosts));
        }
        // An element's stress comes from the owner of its first node: that part holds it in
        // its first ring, so all its nodes are right whenever the part's own nodes are.
        let mut elem_home = vec![(0, 0); ne];
        for (p, elems) in parts_elems.iter().enumerate() {
            for (i, &e) in elems.iter().enumerate() {
                if node_part[conn[e * npe] as usize] == p {
                    elem_home[e] = (p, i);
                }
            }
        }
        let schedule = match config.schedule {
            ForceSchedule::Unstructured => ForceSchedule::Unstructured,
            _ => ForceSchedule::Gather,
        };
        let cfg = StepperConfig { schedule, ..*config };
        let mut parts = Vec::with_capacity(k);
        for (p, (own_sent, own_rest, ghosts)) in layouts.into_iter().enumerate() {
            let send = own_sent.len();
            let ghost_from = send + own_rest.len();
            let nodes: Vec<usize> = own_sent.into_iter().chain(own_rest).chain(ghosts).collect();
            let local: BTreeMap<usize, usize> = nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
            let elems = &parts_elems[p];
            let sub_conn: Vec<u32> = elems
                .iter()
                .flat_map(|&e| {
                    conn[e * npe..(e + 1) * npe]
                        .iter()
                        .map(|n| local[&(*n as usize)] as u32)
                })
                .collect();
            let sub = sub_model(model, elems, &nodes, sub_conn, &coords)?;
            let ghosts = nodes[ghost_from..].iter().map(|&n| owner[n]).collect();
            parts.push(PartPlan {
                model: sub,
                nodes,
                send,
                ghost_from,
                ghosts,
            });
        }
        Ok(Partition {
            parts,
            elem_home,
            owner,
            dofs,
            strains: spec.strains,
            bound,
            config: cfg,
        })
    }
}

impl<R: Real> SplitStepper<R> {
    /// Runs `n` steps on every device; the ghosts are refreshed from their owners after every
    /// `layers`-th step ([`Devices::depth`] rings of elements).
    ///
    /// With overlap (the default on two or more devices, [`Devices::overlap`]) an exchange that
    /// falls between two steps of one call overlaps the next step: each part reads its sent
    /// nodes, launches its own nodes that touch no ghost (the sent nodes are the only own
    /// nodes that do: an element with a ghost lies in its owner's part too), then the ghosts
    /// are written and the nodes next to them launched. The exchange after the last step of a
    /// call is done before it returns, so ghosts are current between calls.
    pub fn step(&mut self, n: usize) -> Result<()> {
        for k in 0..n {
            if k > 0 && self.overlap && self.since >= self.layers {
                self.step_overlapped()?;
            } else {
                if self.since >= self.layers {
                    self.exchange()?;
                }
                for p in &mut self.parts {
                    p.stepper.step(1)?;
                }
                self.since += 1;
            }
        }
        if self.since >= self.layers {
            self.exchange()?;
        }
        Ok(())
    }

    /// Overwrites every ghost with its owner's `u` and `v` now and waits for it (the steps
    /// exchange by themselves; this is for timing one exchange with the devices idle).
    pub fn exchange_ghosts(&mut self) -> Result<()> {
        self.exchange()?;
        for p in &mut self.parts {
            if let Some(st) = &mut p.staging {
                for e in st.pending.drain(..) {
                    e.wait()?;
                }
            }
        }
        Ok(())
    }

    /// Whether exchanges inside a `step(n)` overlap interior work: asked for by
    /// [`Devices::overlap`], on two or more devices, with the node gather (`ForceSchedule::Gather`).
    pub fn overlaps(&self) -> bool {
        self.overlap
    }

    /// One step with the pending exchange overlapped (see [`SplitStepper::step`]).
    fn step_overlapped(&mut self) -> Result<()> {
        let d = self.dofs;
        let reads = self.exchange_read()?;
        let launched = self
            .parts
            .iter_mut()
            .try_for_each(|p| p.stepper.gather_range(p.send * d..p.ghost_from * d));
        if let Err(e) = launched {
            // The reads fill the parts' staging: let them finish before reporting.
            reads.iter().try_for_each(|r| r.wait())?;
            return Err(e);
        }
        self.exchange_write(reads)?;
        for p in &mut self.parts {
            p.stepper.gather_range(0..p.send * d)?;
            p.stepper.gather_range(p.ghost_from * d..p.nodes.len() * d)?;
            p.stepper.end_ranges()?;
        }
        self.since = 1;
        Ok(())
    }

    /// Overwrites every ghost with its owner's `u` and `v`: every part's sent range is read
    /// behind its queued steps into pinned memory (the devices drain in parallel), then the
    /// ghosts are written ahead of the next steps without waiting for the writes.
    fn exchange(&mut self) -> Result<()> {
        let reads = self.exchange_read()?;
        self.exchange_write(reads)
    }

    /// The first half of an exchange: every part's sent range read into its pinned staging
    /// behind its queued work; the reads' events.
    fn exchange_read(&mut self) -> Result<Vec<Event>> {
        let d = self.dofs;
        let mut reads = Vec::with_capacity(2 * self.parts.len());
        for p in &mut self.parts {
            let st = match &mut p.staging {
                Some(st) => st,
                slot => {
                    let pin = |n: usize| p.stepper.pinned(n);
                    let (s, g) = (p.send * d, p.ghosts.len() * d);
                    slot.insert(Staging {
                        send: [pin(s)?, pin(s)?],
                        recv: [pin(g)?, pin(g)?, pin(g)?],
                        pending: Vec::new(),
                    })
                }
            };
            // The last exchange's writes read the memory refilled below.
            for e in st.pending.drain(..) {
                e.wait()?;
            }
            let [su, sv] = &mut st.send;
            // SAFETY: the staging is owned by the part and the reads are waited for below.
            reads.extend(unsafe {
                p.stepper.read_state_async(
                    0,
                    &mut su.as_mut_slice()[..p.send * d],
                    &mut sv.as_mut_slice()[..p.send * d],
                )
            }?);
        }
        Ok(reads)
    }

    /// The second half: waits for the reads, then every part's ghosts written from their
    /// owners' staging ahead of its next work, without waiting for the writes.
    fn exchange_write(&mut self, reads: Vec<Event>) -> Result<()> {
        let d = self.dofs;
        for e in &reads {
            e.wait()?;
        }
        let ghosts: Vec<(Vec<R>, Vec<R>)> = {
            let sent: Vec<(&[R], &[R])> = self
                .parts
                .iter()
                .map(|p| match &p.staging {
                    Some(st) => (st.send[0].as_slice(), st.send[1].as_slice()),
                    None => (&[][..], &[][..]),
                })
                .collect();
            self.parts
                .iter()
                .map(|p| {
                    let pick = |k: usize| -> Vec<R> {
                        p.ghosts
                            .iter()
                            .flat_map(|&(o, i)| {
                                let x = if k == 0 { sent[o].0 } else { sent[o].1 };
                                x[i * d..(i + 1) * d].iter().copied()
                            })
                            .collect()
                    };
                    (pick(0), pick(1))
                })
                .collect()
        };
        for (p, (u, v)) in self.parts.iter_mut().zip(ghosts) {
            let Some(st) = &mut p.staging else { continue };
            let n = u.len();
            let [ru, rv, rf] = &mut st.recv;
            ru.as_mut_slice()[..n].copy_from_slice(&u);
            rv.as_mut_slice()[..n].copy_from_slice(&v);
            // SAFETY: the writes' events are kept in `pending` and waited for before the
            // staging is refilled or dropped.
            let writes = unsafe {
                p.stepper.write_state_async(
                    p.ghost_from * d,
                    &ru.as_slice()[..n],
                    &rv.as_slice()[..n],
                    &mut rf.as_mut_slice()[..n],
                )
            }?;
            st.pending.extend(writes);
        }
        self.since = 0;
        Ok(())
    }

    /// Sets displacements and velocities of the whole model.
    pub fn set_state(&mut self, u: &[R], v: &[R]) -> Result<()> {
        for (what, x) in [("displacements", u), ("velocities", v)] {
            crate::error::check_len(what, self.n_dofs, x.len())?;
        }
        let d = self.dofs;
        for p in &mut self.parts {
            let pick = |x: &[R]| -> Vec<R> { p.nodes.iter().flat_map(|&n| x[n * d..(n + 1) * d].to_vec()).collect() };
            p.stepper.set_state(&pick(u), &pick(v))?;
        }
        self.since = 0;
        Ok(())
    }

    /// Adds an external force; every part holding a loaded node applies it (so a ghost copy
    /// steps as its owner does until the next exchange).
    pub fn add_load(&mut self, load: &Load) -> Result<()> {
        crate::element::load::check_load(load, self.n_dofs)?;
        let d = self.dofs;
        for p in &mut self.parts {
            if let Some(l) = local_load(load, &p.nodes, d) {
                p.stepper.add_load(&l)?;
            }
        }
        Ok(())
    }

    /// The whole model's displacements (each node from its owner).
    pub fn displacement(&self) -> Result<Vec<R>> {
        self.gather(|s| s.displacement())
    }

    /// The whole model's velocities.
    pub fn velocity(&self) -> Result<Vec<R>> {
        self.gather(|s| s.velocity())
    }

    fn gather(&self, read: impl Fn(&Stepper<R>) -> Result<Vec<R>>) -> Result<Vec<R>> {
        let d = self.dofs;
        let all: Vec<Vec<R>> = self.parts.iter().map(|p| read(&p.stepper)).collect::<Result<_>>()?;
        let mut out = vec![R::default(); self.n_dofs];
        for (n, &(p, i)) in self.owner.iter().enumerate() {
            out[n * d..(n + 1) * d].copy_from_slice(&all[p][i * d..(i + 1) * d]);
        }
        Ok(out)
    }

    /// `σ = G_e·U_e` per element (each from the part it was cut into).
    pub fn stress(&self) -> Result<Vec<R>> {
        let s = self.strains;
        let all: Vec<Vec<R>> = self.parts.iter().map(|p| p.stepper.stress()).collect::<Result<_>>()?;
        let mut out = vec![R::default(); self.elem_home.len() * s];
        for (e, &(p, i)) in self.elem_home.iter().enumerate() {
            out[e * s..(e + 1) * s].copy_from_slice(&all[p][i * s..(i + 1) * s]);
        }
        Ok(out)
    }

    /// The whole model's stability bound this run was checked against.
    pub fn stability_bound(&self) -> &StabilityBound {
        &self.bound
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.parts.first().map_or(0, |p| p.stepper.steps())
    }

    /// The device of each part and its element count, for reports.
    pub fn parts(&self) -> Vec<(&Device, usize)> {
        self.parts
            .iter()
            .map(|p| (p.stepper.device(), p.stepper.element_count()))
            .collect()
    }
}

impl<R: Real> Explicit<R> for SplitStepper<R> {
    fn step(&mut self, n: usize) -> Result<()> {
        SplitStepper::step(self, n)
    }
    fn set_state(&mut self, u: &[R], v: &[R]) -> Result<()> {
        SplitStepper::set_state(self, u, v)
    }
    fn add_load(&mut self, load: &Load) -> Result<()> {
        SplitStepper::add_load(self, load)
    }
    fn displacement(&self) -> Result<Vec<R>> {
        SplitStepper::displacement(self)
    }
    fn velocity(&self) -> Result<Vec<R>> {
        SplitStepper::velocity(self)
    }
    fn stress(&self) -> Result<Vec<R>> {
        SplitStepper::stress(self)
    }
    fn stability_bound(&self) -> &StabilityBound {
        SplitStepper::stability_bound(self)
    }
}

/// `load` restricted to the nodes a part holds (`nodes`: the part's global node ids), in the
/// part's numbering; `None` if it holds none of them.
pub(crate) fn local_load(load: &Load, nodes: &[usize], d: usize) -> Option<Load> {
    let local: BTreeMap<usize, usize> = nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let (mut dofs, mut weights) = (Vec::new(), Vec::new());
    for (&dof, &w) in load.dofs.iter().zip(&load.weights) {
        if let Some(&i) = local.get(&(dof as usize / d)) {
            dofs.push((i * d + dof as usize % d) as u32);
            weights.push(w);
        }
    }
    if dofs.is_empty() {
        return None;
    }
    Some(Load {
        dofs,
        weights,
        time: load.time,
    })
}

/// Elements in cut order: element order on a grid, centroids along the longest extent of an
/// unstructured mesh.
fn cut_order(model: &Model, conn: &[u32], coords: &[[f64; 3]]) -> Vec<usize> {
    let npe = model.spec.nodes;
    let ne = model.mesh.element_count();
    // Elements in cut order: element order on a grid, centroids along the longest extent.
    let mut order: Vec<usize> = (0..ne).collect();
    if let Mesh::Unstructured(_) = model.mesh {
        let (lo, hi) = coords.iter().fold(([f64::MAX; 3], [f64::MIN; 3]), |(lo, hi), c| {
            (
                std::array::from_fn(|i| lo[i].min(c[i])),
                std::array::from_fn(|i| hi[i].max(c[i])),
            )
        });
        let axis = (0..3)
            .max_by(|&a, &b| (hi[a] - lo[a]).total_cmp(&(hi[b] - lo[b])))
            .unwrap_or(0);
        let centre = |e: usize| {
            conn[e * npe..(e + 1) * npe]
                .iter()
                .map(|&n| coords[n as usize][axis])
                .sum::<f64>()
        };
        order.sort_by(|&a, &b| centre(a).total_cmp(&centre(b)).then(a.cmp(&b)));
    }
    order
}

/// Each element's part: consecutive runs of `order` in proportion to `weights`.
fn assign_parts(order: &[usize], weights: &[f64]) -> Result<Vec<usize>> {
    let (ne, k) = (order.len(), weights.len());
    let total: f64 = weights.iter().sum();
    let mut part_of = vec![0usize; ne];
    let mut acc = 0.0;
    let mut start = 0;
    for (p, w) in weights.iter().enumerate() {
        acc += w;
        let end = if p + 1 == k {
            ne
        } else {
            ((acc / total) * ne as f64).round() as usize
        };
        if end <= start {
            return Err(Error::InvalidConfig(format!(
                "device {p} gets no elements of the model's {ne}: give it a larger share or use fewer devices"
            )));
        }
        for &e in &order[start..end] {
            part_of[e] = p;
        }
        start = end;
    }
    Ok(part_of)
}

/// Each part's elements (mesh order) and held nodes: `layers` rings of elements around its
/// own nodes.
fn rings(
    conn: &[u32],
    npe: usize,
    nn: usize,
    k: usize,
    node_part: &[usize],
    layers: usize,
) -> (Vec<Vec<usize>>, Vec<std::collections::BTreeSet<usize>>) {
    let ne = conn.len() / npe.max(1);
    // Each part's elements (mesh order) and nodes: `layers` rings of elements around its
    // own nodes (held nodes H_0 = own, H_i = the nodes of the elements touching H_{i-1}).
    // A node of H_j steps right while H_{j+1} is right, so own nodes stay right for
    // `layers` steps after an exchange.
    let mut node_elems: Vec<Vec<usize>> = vec![Vec::new(); nn];
    for e in 0..ne {
        for &n in &conn[e * npe..(e + 1) * npe] {
            node_elems[n as usize].push(e);
        }
    }
    let mut parts_elems: Vec<Vec<usize>> = Vec::with_capacity(k);
    let mut held: Vec<std::collections::BTreeSet<usize>> = Vec::with_capacity(k);
    for p in 0..k {
        let mut nodes: std::collections::BTreeSet<usize> = (0..nn).filter(|&n| node_part[n] == p).collect();
        let mut elems = std::collections::BTreeSet::new();
        let mut frontier: Vec<usize> = nodes.iter().copied().collect();
        for _ in 0..layers.max(1) {
            let mut next = Vec::new();
            for &n in &frontier {
                for &e in &node_elems[n] {
                    if elems.insert(e) {
                        for &m in &conn[e * npe..(e + 1) * npe] {
                            if nodes.insert(m as usize) {
                                next.push(m as usize);
                            }
                        }
                    }
                }
            }
            frontier = next;
        }
        parts_elems.push(elems.into_iter().collect());
        held.push(nodes);
    }
    (parts_elems, held)
}

/// The model of one part: its elements on its nodes, their matrices, materials and masses.
fn sub_model(
    model: &Model,
    elems: &[usize],
    nodes: &[usize],
    sub_conn: Vec<u32>,
    coords: &[[f64; 3]],
) -> Result<Model> {
    let (spec, npe, dofs) = (model.spec, model.spec.nodes, model.spec.dofs);
    let mesh = UnstructuredMesh::new(nodes.iter().map(|&n| coords[n]).collect(), npe, sub_conn)?;
    let pick = |v: &[f64]| -> Vec<f64> {
        nodes
            .iter()
            .flat_map(|&n| (0..dofs).map(move |d| v[n * dofs + d]))
            .collect()
    };
    let fixed: Vec<bool> = nodes
        .iter()
        .flat_map(|&n| (0..dofs).map(move |d| model.fixed[n * dofs + d]))
        .collect();
    Ok(Model {
        spec,
        mesh: Mesh::Unstructured(mesh),
        stiffness: if model.per_element {
            elems.iter().map(|&e| model.stiffness[e].clone()).collect()
        } else {
            model.stiffness.clone()
        },
        stress: if model.per_element && !model.stress.is_empty() {
            elems.iter().map(|&e| model.stress[e].clone()).collect()
        } else {
            model.stress.clone()
        },
        elements: ElementMap {
            material: elems.iter().map(|&e| model.elements.material[e]).collect(),
            dead: elems.iter().map(|&e| model.elements.dead[e]).collect(),
        },
        per_element: model.per_element,
        mass: pick(&model.mass),
        fixed,
    })
}
