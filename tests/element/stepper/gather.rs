//! The structured gather: M⁻¹ and the damping looked up by node class, the gather's tuner, and
//! several gather steps per launch, each against the bits of the plain gather.

use super::*;

/// The structured gather with M⁻¹ and the damping looked up by node class gives the bits of the
/// gather that reads them per DOF: quad4, hex8 and quad9 grids with fixed DOFs on one side, a
/// load, damping, random states with NaN, ±inf and the largest finite value, f32 and f64.
#[test]
fn derived_mass_gather_gives_the_bits_of_the_array_gather() {
    // Twelve steps from a finite state; one from one with NaN, ±inf and the largest finite
    // value (they spread through the elements every step: more steps leave mostly NaN).
    fn check<R: Real>(model: &Model, seed: u64, specials: bool) {
        let n = model.dof_count();
        let mut r = rng(seed);
        let mut u: Vec<R> = (0..n).map(|_| R::of(r.random_range(-1.0..1.0))).collect();
        let v: Vec<R> = (0..n).map(|_| R::of(r.random_range(-1.0..1.0))).collect();
        let big = if size_of::<R>() == 4 {
            f64::from(f32::MAX)
        } else {
            f64::MAX
        };
        if specials {
            for (i, x) in [(n / 3, f64::NAN), (n / 2, f64::INFINITY), (2 * n / 3, -big)] {
                u[i] = R::of(x);
            }
        }
        let steps = if specials { 1 } else { 12 };
        let load = Load::point(n / model.spec.dofs / 2, model.spec.dofs, 0, 3.0, TimeFunction::Constant);
        // The class table's order-1 elements sum the assembled node stencil unless told not to.
        let stencil = model.spec.order == 1;
        let run_with = |derived: bool, assembled: bool, rows: usize, group: Option<[usize; 2]>| {
            let mut dev = Stepper::<R>::with_precision(&device(), model, &config(ForceSchedule::Gather)).unwrap();
            assert!(
                dev.derived_mass(),
                "{}: the class table applies to a uniform grid",
                model.spec.name
            );
            assert_eq!(dev.assembled(), stencil, "{}", model.spec.name);
            if stencil {
                dev.set_assembled(assembled).unwrap();
            } else {
                assert!(dev.set_assembled(true).is_err(), "{}: no stencil", model.spec.name);
            }
            dev.set_derived_mass(derived).unwrap();
            dev.set_gather_rows(rows).unwrap();
            assert_eq!(dev.gather_rows(), rows);
            if let Some(g) = group {
                dev.set_gather_group(g).unwrap();
                assert_eq!(dev.gather_group(), Some(g));
            }
            dev.set_state(&u, &v).unwrap();
            dev.add_load(&load).unwrap();
            dev.step(steps).unwrap();
            (dev.displacement().unwrap(), dev.velocity().unwrap())
        };
        // Several rows per work-item: the patch path on the rows away from the edges (the grids
        // have interior rows iy0 .. iy0 + rows - 1 for these counts), the general one elsewhere,
        // a last block cut short by the grid's end.
        // Work-groups that do not divide the grid (the launch rounds up, the kernel skips the rest).
        // The element-by-element sums: the bits of the arrays' gather.
        let run = |derived, rows, group| run_with(derived, false, rows, group);
        let arrays = run(false, 1, None);
        let rows = if model.spec.dim == 3 { 2 } else { 3 };
        let bits = |x: &R| {
            if x.widen().is_nan() {
                u64::MAX
            } else {
                x.widen().to_bits()
            }
        };
        if stencil {
            // The assembled stencil: the same bits for every rows and work-group (the window's
            // path and the general one sum alike), the arrays' values to rounding, the same
            // NaN and ±inf, and not the arrays' bits everywhere (the stencil is taken).
            let one = run_with(true, true, 1, None);
            for other in [
                run_with(true, true, rows, None),
                run_with(true, true, rows, Some([8, 3])),
            ] {
                for (a, b) in [(&one.0, &other.0), (&one.1, &other.1)] {
                    assert!(
                        a.iter().map(bits).eq(b.iter().map(bits)),
                        "{} {}: the assembled stencil's bits depend on rows or work-group",
                        model.spec.name,
                        R::NAME
                    );
                }
            }
            let tol = if size_of::<R>() == 4 { 1e-5 } else { 1e-12 };
            for (what, a, b) in [("u", &one.0, &arrays.0), ("v", &one.1, &arrays.1)] {
                let class = |x: &R| (x.widen().is_nan(), x.widen().is_infinite() && x.widen() > 0.0);
                assert!(
                    a.iter().map(class).eq(b.iter().map(class)),
                    "{} {what}: classes",
                    model.spec.name
                );
                let (fa, fb): (Vec<f64>, Vec<f64>) = a
                    .iter()
                    .zip(b)
                    .filter(|(x, _)| x.widen().is_finite())
                    .map(|(x, y)| (x.widen(), y.widen()))
                    .unzip();
                let e = slice_rel_error(&fa, &fb);
                assert!(e <= tol, "{} {} {what}: relative error {e:e}", model.spec.name, R::NAME);
                if !specials {
                    assert!(
                        !a.iter().map(bits).eq(b.iter().map(bits)),
                        "{} {} {what}: the same bits as the element rows: was the stencil taken?",
                        model.spec.name,
                        R::NAME
                    );
                }
            }
        }
        for (rows, table) in [
            (1, run(true, 1, None)),
            (rows, run(true, rows, None)),
            (rows, run(true, rows, Some([8, 3]))),
        ] {
            for (what, a, b) in [("u", &table.0, &arrays.0), ("v", &table.1, &arrays.1)] {
                let finite = a.iter().filter(|x| x.widen().is_finite()).count();
                assert!(
                    finite > n / 2,
                    "{}: only {finite} of {n} finite values to compare",
                    model.spec.name
                );
                // Bit for bit; a NaN's sign and payload are not part of the arithmetic.
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    assert_eq!(
                    bits(x),
                    bits(y),
                    "{} {}: {what}[{i}] {x:?} with the class table ({rows} rows per work-item), {y:?} with the arrays",
                    model.spec.name,
                    R::NAME
                );
                }
            }
        }
    }
    let (k, _) = quad4_plane_stress(1.0, 0.5, 1.0, 0.3);
    let models = [
        Model::new(quad4(), structured(quad4(), [13, 7, 1]), k, 2.0).unwrap(),
        Model::new(hex8(), structured(hex8(), [4, 5, 5]), random_matrix(24, 5), 1.5).unwrap(),
        Model::new(quad9(), structured(quad9(), [8, 6, 1]), random_matrix(18, 8), 1.0).unwrap(),
    ];
    for (s, mut model) in models.into_iter().enumerate() {
        fix_left_edge(&mut model);
        for specials in [false, true] {
            check::<f32>(&model, 40 + s as u64, specials);
            check::<f64>(&model, 50 + s as u64, specials);
        }
    }
}

/// Where the masses are not the same at every node of a class (a mass added at one node), the
/// stepper reads them per DOF, and asking for the class table is an error that says why.
#[test]
fn derived_mass_is_refused_where_a_class_has_two_masses() {
    let (k, _) = quad4_plane_stress(1.0, 1.0, 1.0, 0.3);
    let mut model = Model::new(quad4(), structured(quad4(), [6, 5, 1]), k, 1.0).unwrap();
    let uniform_model = model.clone();
    let uniform = Stepper::new(&device(), &model, &config(ForceSchedule::Gather)).unwrap();
    assert!(uniform.derived_mass());
    model.mass[2 * 9 + 1] *= 1.5;
    let mut dev = Stepper::new(&device(), &model, &config(ForceSchedule::Gather)).unwrap();
    assert!(!dev.derived_mass());
    let e = dev.set_derived_mass(true).unwrap_err().to_string();
    assert!(e.contains("same") && e.contains("class"), "{e}");
    // The other schedules never use it.
    let mut coloured = Stepper::new(&device(), &model, &config(ForceSchedule::Coloured)).unwrap();
    assert!(!coloured.derived_mass() && coloured.set_derived_mass(true).is_err());
    // Rows per work-item: 1 to MAX_GATHER_ROWS, and only where the class-table gather runs.
    for rows in [0, clforge::runtime::element::stepper::MAX_GATHER_ROWS + 1] {
        let e = dev.set_gather_rows(rows).unwrap_err().to_string();
        assert!(e.contains("rows") && e.contains(&rows.to_string()), "{e}");
    }
    assert!(dev.set_gather_rows(2).is_err(), "no class table here");
    assert!(dev.set_gather_group([32, 4]).is_err(), "no class table here");
    let mut table = Stepper::new(&device(), &uniform_model, &config(ForceSchedule::Gather)).unwrap();
    for group in [[0, 4], [32, 0], [1 << 16, 1 << 8]] {
        let e = table.set_gather_group(group).unwrap_err().to_string();
        assert!(e.contains("work-group") && e.contains(&format!("{group:?}")), "{e}");
    }
    table.set_gather_group([16, 2]).unwrap();
    let e = coloured.set_gather_rows(2).unwrap_err().to_string();
    assert!(e.contains("class-table gather"), "{e}");
    // Turning it off is always allowed, and the steps still equal the host's.
    dev.set_derived_mass(false).unwrap();
    parity(&model, &[ForceSchedule::Gather], 5, 3);
}

/// The gather's tuner times rows per work-item and work-groups, keeps the fastest, and changes
/// no result: the state after tuning is the state before, and the steps after it give the bits
/// of a stepper that was never tuned.
#[test]
fn tuning_the_gather_keeps_the_state_and_the_bits() {
    let (k, _) = quad4_plane_stress(1.0, 0.5, 1.0, 0.3);
    let model = Model::new(quad4(), structured(quad4(), [13, 9, 1]), k, 2.0).unwrap();
    let n = model.dof_count();
    let mut r = rng(61);
    let u: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let v: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let load = Load::point(n / model.spec.dofs / 2, model.spec.dofs, 0, 3.0, TimeFunction::Constant);
    let start = || {
        let mut st = Stepper::new(&device(), &model, &config(ForceSchedule::Gather)).unwrap();
        st.set_state(&u, &v).unwrap();
        st.add_load(&load).unwrap();
        st.step(2).unwrap();
        st
    };
    let (mut plain, mut tuned) = (start(), start());
    let before = (tuned.displacement().unwrap(), tuned.velocity().unwrap(), tuned.time());
    let timings = tuned.tune_gather(2).unwrap();
    assert!(
        timings.windows(2).all(|w| w[0].median_ns <= w[1].median_ns),
        "{timings:?}"
    );
    for rows in [1, 2, 4] {
        assert!(
            timings.iter().any(|t| t.rows == rows && t.group == [32, 4]),
            "{rows} rows in 32 x 4 not timed: {timings:?}"
        );
    }
    assert_eq!(tuned.gather_rows(), timings[0].rows);
    assert_eq!(tuned.gather_group(), Some(timings[0].group));
    let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let after = (tuned.displacement().unwrap(), tuned.velocity().unwrap(), tuned.time());
    assert_eq!(bits(&after.0), bits(&before.0), "tuning changed the displacements");
    assert_eq!(bits(&after.1), bits(&before.1), "tuning changed the velocities");
    assert_eq!(after.2, before.2, "tuning changed the time");
    plain.step(5).unwrap();
    tuned.step(5).unwrap();
    assert_eq!(
        bits(&tuned.displacement().unwrap()),
        bits(&plain.displacement().unwrap())
    );
    assert_eq!(bits(&tuned.velocity().unwrap()), bits(&plain.velocity().unwrap()));
    // With a load the state is kicked between steps: no candidate runs several per launch.
    assert!(timings.iter().all(|t| t.steps == 1), "{timings:?}");
    // Without one, 2, 3 and 4 steps per launch are timed too, and the choice changes no bits.
    let start_free = || {
        let mut st = Stepper::new(&device(), &model, &config(ForceSchedule::Gather)).unwrap();
        st.set_state(&u, &v).unwrap();
        st
    };
    let (mut plain, mut tuned) = (start_free(), start_free());
    let timings = tuned.tune_gather(1).unwrap();
    for k in [2, 3, 4] {
        assert!(
            timings.iter().any(|t| t.steps == k),
            "{k} steps per launch not timed: {timings:?}"
        );
    }
    assert_eq!(tuned.gather_steps(), timings[0].steps, "{timings:?}");
    plain.step(7).unwrap();
    tuned.step(7).unwrap();
    assert_eq!(tuned.steps(), 7);
    assert_eq!(
        bits(&tuned.displacement().unwrap()),
        bits(&plain.displacement().unwrap())
    );
    assert_eq!(bits(&tuned.velocity().unwrap()), bits(&plain.velocity().unwrap()));
    // Nothing to tune on another schedule; no steps to time is an error too.
    let mut coloured = Stepper::new(&device(), &model, &config(ForceSchedule::Coloured)).unwrap();
    let e = coloured.tune_gather(2).unwrap_err().to_string();
    assert!(e.contains("class-table gather"), "{e}");
    assert!(tuned.tune_gather(0).is_err());
}

/// Several class-table gather steps per launch (temporal blocking in local memory) give the
/// bits of as many single steps, in 2-D and 3-D, both precisions, with fixed DOFs, NaN, ±inf and
/// the largest finite value in the state, boxes that cut the grid anywhere and a step count
/// that leaves single steps over; with a load every step is a launch again.
#[test]
fn several_gather_steps_per_launch_give_the_bits_of_single_steps() {
    fn check<R: Real>(model: &Model, seed: u64, cases: &[(usize, StepsBox)]) {
        let name = format!("{} {}", model.spec.name, R::NAME);
        let n = model.dof_count();
        let mut r = rng(seed);
        let u: Vec<R> = (0..n).map(|_| R::of(r.random_range(-1.0..1.0))).collect();
        let v: Vec<R> = (0..n).map(|_| R::of(r.random_range(-1.0..1.0))).collect();
        let big = if size_of::<R>() == 4 {
            f64::from(f32::MAX)
        } else {
            f64::MAX
        };
        let mut special = u.clone();
        for (i, x) in [(n / 3, f64::NAN), (n / 2, f64::INFINITY), (2 * n / 3, -big)] {
            special[i] = R::of(x);
        }
        let bits = |x: &[R]| {
            x.iter()
                .map(|x| {
                    if x.widen().is_nan() {
                        u64::MAX
                    } else {
                        x.widen().to_bits()
                    }
                })
                .collect::<Vec<_>>()
        };
        let load = Load::point(n / model.spec.dofs / 2, model.spec.dofs, 0, 3.0, TimeFunction::Constant);
        let run = |st: &mut Stepper<R>, u: &[R], steps: usize, loaded: bool| {
            st.set_state(u, &v).unwrap();
            if loaded {
                st.add_load(&load).unwrap();
            }
            st.step(steps).unwrap();
            (
                bits(&st.displacement().unwrap()),
                bits(&st.velocity().unwrap()),
                st.last_launches(),
            )
        };
        let fresh = || Stepper::<R>::with_precision(&device(), model, &config(ForceSchedule::Gather)).unwrap();
        for (state, steps) in [(&u, 7), (&special, 3)] {
            let single = run(&mut fresh(), state, steps, false);
            assert_eq!(single.2, steps, "{name}: a launch per step");
            let finite = single
                .0
                .iter()
                .filter(|&&b| b != u64::MAX && f64::from_bits(b).is_finite())
                .count();
            assert!(finite > n / 8, "{name}: only {finite} of {n} finite values to compare");
            for &(several, bx) in cases {
                let mut st = fresh();
                st.set_steps_box(bx).unwrap();
                st.set_gather_steps(several).unwrap();
                assert_eq!((st.gather_steps(), st.steps_box()), (several, bx));
                let (du, dv, launches) = run(&mut st, state, steps, false);
                let what = format!("{name}: {several} steps per launch in {bx:?}, {steps} steps");
                assert_eq!(launches, steps / several + steps % several, "{what}: launches");
                assert_eq!(st.steps(), steps as u64, "{what}: step count");
                for (k, (a, b)) in du.iter().zip(&single.0).enumerate() {
                    assert_eq!(a, b, "{what}: u[{k}] differs from single steps");
                }
                for (k, (a, b)) in dv.iter().zip(&single.1).enumerate() {
                    assert_eq!(a, b, "{what}: v[{k}] differs from single steps");
                }
            }
        }
        // A load kicks the state after every step: one gather and one kick per step, the bits of
        // a stepper that never ran several.
        let (several, bx) = cases[0];
        let single = run(&mut fresh(), &u, 4, true);
        let mut st = fresh();
        st.set_steps_box(bx).unwrap();
        st.set_gather_steps(several).unwrap();
        let loaded = run(&mut st, &u, 4, true);
        assert_eq!(loaded, single, "{name}: with a load");
        assert_eq!(loaded.2, 8, "{name}: a gather and a kick per step");
    }
    let (k, _) = quad4_plane_stress(1.0, 0.5, 1.0, 0.3);
    let mut quad = Model::new(quad4(), structured(quad4(), [23, 15, 1]), k, 2.0).unwrap();
    let mut hex = Model::new(hex8(), structured(hex8(), [6, 5, 7]), random_matrix(24, 5), 1.5).unwrap();
    for model in [&mut quad, &mut hex] {
        fix_left_edge(model);
    }
    let b = |nodes: [usize; 3], items: usize| StepsBox { nodes, items };
    // Boxes smaller than the grid and not dividing it; the default box (one for the whole grid).
    check::<f32>(&quad, 71, &[(2, b([5, 3, 1], 32)), (3, StepsBox::default_for(2))]);
    check::<f64>(&quad, 72, &[(2, b([4, 4, 1], 16))]);
    check::<f32>(&hex, 73, &[(2, b([3, 2, 2], 16)), (3, b([2, 3, 4], 64))]);
    check::<f64>(&hex, 74, &[(2, StepsBox::default_for(3))]);
}

/// Several steps per launch are refused with a reason where they cannot run: out of range, off
/// the class-table gather, on elements without the register window, in boxes of no nodes, deeper
/// than a 2-D grid, larger than local memory or of more work-items than the kernel takes; a
/// refused setting leaves the stepper as it was.
#[test]
fn several_gather_steps_are_refused_where_they_cannot_run() {
    let (k, _) = quad4_plane_stress(1.0, 0.5, 1.0, 0.3);
    let model = Model::new(quad4(), structured(quad4(), [9, 6, 1]), k, 2.0).unwrap();
    let mut st = Stepper::new(&device(), &model, &config(ForceSchedule::Gather)).unwrap();
    for steps in [0, MAX_GATHER_STEPS + 1] {
        let e = st.set_gather_steps(steps).unwrap_err().to_string();
        assert!(e.contains("gather steps") && e.contains(&steps.to_string()), "{e}");
    }
    let b = |nodes: [usize; 3], items: usize| StepsBox { nodes, items };
    for bx in [b([0, 8, 1], 64), b([8, 8, 1], 0), b([8, 8, 2], 64)] {
        let e = st.set_steps_box(bx).unwrap_err().to_string();
        assert!(e.contains("box") && e.contains("1 node deep"), "{e}");
    }
    let e = st.set_steps_box(b([1 << 14, 1 << 12, 1], 256)).unwrap_err().to_string();
    assert!(
        e.contains("local memory") && e.contains("CL_DEVICE_LOCAL_MEM_SIZE"),
        "{e}"
    );
    st.set_gather_steps(2).unwrap();
    let e = st.set_steps_box(b([8, 8, 1], 1 << 16)).unwrap_err().to_string();
    assert!(e.contains("work-items") && e.contains("WORK_GROUP_SIZE"), "{e}");
    assert_eq!(
        (st.gather_steps(), st.steps_box()),
        (2, StepsBox::default_for(2)),
        "refused, unchanged"
    );
    st.set_derived_mass(false).unwrap();
    st.set_gather_steps(1).unwrap();
    let e = st.set_gather_steps(2).unwrap_err().to_string();
    assert!(e.contains("switched off"), "{e}");
    let mut coloured = Stepper::new(&device(), &model, &config(ForceSchedule::Coloured)).unwrap();
    let e = coloured.set_gather_steps(2).unwrap_err().to_string();
    assert!(e.contains("class-table gather"), "{e}");
    let quad9_model = Model::new(quad9(), structured(quad9(), [4, 3, 1]), random_matrix(18, 8), 1.0).unwrap();
    let mut q9 = Stepper::new(&device(), &quad9_model, &config(ForceSchedule::Gather)).unwrap();
    let e = q9.set_gather_steps(2).unwrap_err().to_string();
    assert!(e.contains("order 1"), "{e}");
}
