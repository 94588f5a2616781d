//! `element::sparse` on the default device: the coloured CSR assembly, the Dirichlet conditions and
//! the conjugate gradients against dense host computations written here (dense assembly, dense
//! Dirichlet elimination, a dense Cholesky solve).

use crate::common;

use clforge::runtime::element::sparse::{self, CgOptions, DeviceCsr, DofMap, HostCsr};
use clforge::runtime::{Buffer, Error};
use rand::rngs::SmallRng;
use rand::Rng;

/// A map of `elements` elements of `ne` distinct random DOFs out of `dofs`, in random local
/// order, with random signs.
fn random_map(rng: &mut SmallRng, dofs: usize, ne: usize, elements: usize) -> DofMap {
    let mut index = Vec::new();
    for _ in 0..elements {
        let mut local: Vec<u32> = Vec::new();
        while local.len() < ne {
            let d = rng.random_range(0..dofs as u32);
            if !local.contains(&d) {
                local.push(d);
            }
        }
        index.extend(local);
    }
    let sign = (0..index.len())
        .map(|_| if rng.random_bool(0.5) { 1 } else { -1 })
        .collect();
    DofMap::new(dofs, ne, index, sign).unwrap()
}

/// Random symmetric element matrices as packed lower triangles; `diagonal` is added to each
/// element's diagonal.
fn random_ke(rng: &mut SmallRng, map: &DofMap, diagonal: f64) -> Vec<f64> {
    let ne = map.per_element();
    let mut ke = Vec::with_capacity(map.ke_len());
    for _ in 0..map.elements() {
        for i in 0..ne {
            for j in 0..=i {
                let shift = if i == j { diagonal } else { 0.0 };
                ke.push(rng.random_range(-1.0..1.0) + shift);
            }
        }
    }
    ke
}

/// The dense `n × n` (row-major) global matrix: each element's full `K_e` rebuilt from its
/// lower triangle, scaled by the signs and added at its DOFs.
fn dense_assembly(map: &DofMap, ke: &[f64]) -> Vec<f64> {
    let (n, ne) = (map.dofs(), map.per_element());
    let mut a = vec![0.0; n * n];
    for e in 0..map.elements() {
        let tri = &ke[e * ne * (ne + 1) / 2..(e + 1) * ne * (ne + 1) / 2];
        let mut full = vec![0.0; ne * ne];
        let mut k = 0;
        for i in 0..ne {
            for j in 0..=i {
                full[i * ne + j] = tri[k];
                full[j * ne + i] = tri[k];
                k += 1;
            }
        }
        let idx = &map.index()[e * ne..(e + 1) * ne];
        let sgn = &map.sign()[e * ne..(e + 1) * ne];
        for i in 0..ne {
            for j in 0..ne {
                let s = f64::from(sgn[i]) * f64::from(sgn[j]);
                a[idx[i] as usize * n + idx[j] as usize] += s * full[i * ne + j];
            }
        }
    }
    a
}

/// A CSR matrix written out densely.
fn dense(csr: &HostCsr) -> Vec<f64> {
    let n = csr.n();
    let mut a = vec![0.0; n * n];
    for r in 0..n {
        for k in csr.row_ptr()[r] as usize..csr.row_ptr()[r + 1] as usize {
            a[r * n + csr.cols()[k] as usize] += csr.values()[k];
        }
    }
    a
}

/// max |a − b| / max |b|.
fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
    a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale
}

fn upload(ke: &[f64]) -> Buffer<f64> {
    Buffer::from_slice(&common::device(), ke).unwrap()
}

fn assemble(map: &DofMap, ke: &[f64]) -> DeviceCsr {
    sparse::assemble(&common::device(), &upload(ke), map, &sparse::colour(map)).unwrap()
}

/// Solves the SPD system `a x = b` by a dense Cholesky factorisation `a = L Lᵀ`.
fn cholesky_solve(a: &[f64], b: &[f64]) -> Vec<f64> {
    let n = b.len();
    let mut l = vec![0.0; n * n];
    for j in 0..n {
        let d = a[j * n + j] - (0..j).map(|k| l[j * n + k] * l[j * n + k]).sum::<f64>();
        assert!(d > 0.0, "not positive definite at pivot {j}: {d}");
        l[j * n + j] = d.sqrt();
        for i in j + 1..n {
            let s = a[i * n + j] - (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum::<f64>();
            l[i * n + j] = s / l[j * n + j];
        }
    }
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = (b[i] - (0..i).map(|k| l[i * n + k] * y[k]).sum::<f64>()) / l[i * n + i];
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        x[i] = (y[i] - (i + 1..n).map(|k| l[k * n + i] * x[k]).sum::<f64>()) / l[i * n + i];
    }
    x
}

#[test]
fn device_assembly_equals_dense_assembly() {
    let mut rng = common::rng(1);
    // (dofs, DOFs per element, elements): one-DOF elements, elements spanning every DOF, many
    // small colours, and a map with more elements than DOFs (many colours).
    for (case, &(dofs, ne, elements)) in [(5, 1, 7), (6, 6, 3), (40, 3, 25), (300, 8, 900), (64, 4, 400)]
        .iter()
        .enumerate()
    {
        let map = random_map(&mut rng, dofs, ne, elements);
        let ke = random_ke(&mut rng, &map, 0.0);
        let want = dense_assembly(&map, &ke);
        let colours = sparse::colour(&map);
        let csr = assemble(&map, &ke);
        assert_eq!(csr.n(), dofs);
        let host = csr.to_host().unwrap();
        assert_eq!(host.pattern(), &sparse::pattern(&map).unwrap(), "case {case}");
        let err = rel_diff(&dense(&host), &want);
        assert!(
            err <= 1e-14,
            "case {case} ({} colours): relative error {err:e}",
            colours.len()
        );
        // Every element in its own colour (another valid schedule) and the host reference agree.
        let single: Vec<Vec<u32>> = (0..elements as u32).rev().map(|e| vec![e]).collect();
        let one_by_one = sparse::assemble(&common::device(), &upload(&ke), &map, &single).unwrap();
        let err = rel_diff(&dense(&one_by_one.to_host().unwrap()), &want);
        assert!(
            err <= 1e-14,
            "case {case}, one element per colour: relative error {err:e}"
        );
        let err = rel_diff(&dense(&sparse::assemble_host(&ke, &map).unwrap()), &want);
        assert!(err <= 1e-14, "case {case}, host: relative error {err:e}");
    }
}

#[test]
fn dirichlet_equals_dense_elimination() {
    let mut rng = common::rng(2);
    for case in 0..4 {
        let map = random_map(&mut rng, 50 + 10 * case, 4, 60);
        let n = map.dofs();
        // A positive shift of each element diagonal keeps every assembled diagonal positive
        // (signs square to 1), which fixed DOFs need.
        let ke = random_ke(&mut rng, &map, 5.0);
        let mut csr = assemble(&map, &ke);
        // Only DOFs of some element have a diagonal (a DOF in no element is refused, see below).
        let mut fixed: Vec<u32> = (0..n as u32)
            .filter(|d| map.index().contains(d) && rng.random_bool(0.3))
            .collect();
        let mut values: Vec<f64> = fixed.iter().map(|_| rng.random_range(-2.0..2.0)).collect();
        // Repeating a DOF with the same value is allowed.
        fixed.push(fixed[0]);
        values.push(values[0]);
        let b: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();

        // Dense, by the definition.
        let a = dense_assembly(&map, &ke);
        let mut is_fixed = vec![false; n];
        let mut g = vec![0.0; n];
        for (&i, &v) in fixed.iter().zip(&values) {
            is_fixed[i as usize] = true;
            g[i as usize] = v;
        }
        let mut want_a = a.clone();
        let mut want_b = b.clone();
        for j in 0..n {
            if is_fixed[j] {
                want_b[j] = a[j * n + j] * g[j];
            } else {
                for i in (0..n).filter(|&i| is_fixed[i]) {
                    want_b[j] -= a[j * n + i] * g[i];
                }
            }
            for i in (0..n).filter(|&i| i != j && (is_fixed[i] || is_fixed[j])) {
                want_a[j * n + i] = 0.0;
            }
        }

        let mut rhs = b.clone();
        sparse::apply_dirichlet(&mut csr, &fixed, &values, &mut rhs).unwrap();
        let got = csr.to_host().unwrap();
        let err_a = rel_diff(&dense(&got), &want_a);
        let err_b = rel_diff(&rhs, &want_b);
        assert!(err_a <= 1e-14 && err_b <= 1e-14, "case {case}: {err_a:e} {err_b:e}");

        let mut host = sparse::assemble_host(&ke, &map).unwrap();
        let mut host_rhs = b.clone();
        sparse::apply_dirichlet_host(&mut host, &fixed, &values, &mut host_rhs).unwrap();
        assert!(
            rel_diff(host.values(), got.values()) <= 1e-14,
            "case {case}: host matrix"
        );
        assert!(rel_diff(&host_rhs, &rhs) <= 1e-14, "case {case}: host rhs");
    }
}

#[test]
fn dirichlet_rejects_bad_conditions_and_leaves_the_system() {
    let mut rng = common::rng(3);
    let map = random_map(&mut rng, 12, 3, 10);
    let ke = random_ke(&mut rng, &map, 4.0);
    let mut csr = assemble(&map, &ke);
    let before = csr.to_host().unwrap();
    let mut rhs = vec![1.0; 12];
    let e = sparse::apply_dirichlet(&mut csr, &[1, 1], &[0.5, 0.25], &mut rhs).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidConfig(m) if m.contains("fixed twice")),
        "{e}"
    );
    let e = sparse::apply_dirichlet(&mut csr, &[12], &[0.0], &mut rhs).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidConfig(m) if m.contains("out of range")),
        "{e}"
    );

    // A fixed DOF with a zero diagonal: DOF 4 of 5 is in no element.
    let lonely = DofMap::new(5, 2, vec![0, 1, 2, 3], vec![1, -1, 1, 1]).unwrap();
    let mut k = assemble(&lonely, &[2.0, 1.0, 2.0, 3.0, -1.0, 3.0]);
    let mut b = vec![1.0; 5];
    match sparse::apply_dirichlet(&mut k, &[0, 4], &[1.0, 1.0], &mut b) {
        Err(Error::NotPositiveDefinite { what, value }) => {
            assert!(what.contains("A[4][4]"), "{what}");
            assert_eq!(value, 0.0);
        }
        other => panic!("expected NotPositiveDefinite, got {other:?}"),
    }
    assert_eq!(b, vec![1.0; 5]);
    assert_eq!(rhs, vec![1.0; 12]);
    assert_eq!(csr.to_host().unwrap(), before);
}

/// Bilinear quads on an `nx × ny` grid of `hx × hy` rectangles for `-Δu`, one sign per global
/// DOF (as an orientation would give); nodes numbered x fastest.
fn poisson_2d(rng: &mut SmallRng, nx: usize, ny: usize, hx: f64, hy: f64) -> (DofMap, Vec<f64>) {
    // Counter-clockwise nodes (0,0), (1,0), (1,1), (0,1): K = hy/hx Kx + hx/hy Ky.
    let kx = [
        [2.0, -2.0, -1.0, 1.0],
        [-2.0, 2.0, 1.0, -1.0],
        [-1.0, 1.0, 2.0, -2.0],
        [1.0, -1.0, -2.0, 2.0],
    ];
    let ky = [
        [2.0, 1.0, -1.0, -2.0],
        [1.0, 2.0, -2.0, -1.0],
        [-1.0, -2.0, 2.0, 1.0],
        [-2.0, -1.0, 1.0, 2.0],
    ];
    let mut packed = Vec::new();
    for i in 0..4 {
        for j in 0..=i {
            packed.push((hy / hx * kx[i][j] + hx / hy * ky[i][j]) / 6.0);
        }
    }
    let dofs = (nx + 1) * (ny + 1);
    let node_sign: Vec<i8> = (0..dofs).map(|_| if rng.random_bool(0.5) { 1 } else { -1 }).collect();
    let (mut index, mut sign, mut ke) = (Vec::new(), Vec::new(), Vec::new());
    for ey in 0..ny {
        for ex in 0..nx {
            let n0 = ey * (nx + 1) + ex;
            for node in [n0, n0 + 1, n0 + nx + 2, n0 + nx + 1] {
                index.push(node as u32);
                sign.push(node_sign[node]);
            }
            ke.extend_from_slice(&packed);
        }
    }
    (DofMap::new(dofs, 4, index, sign).unwrap(), ke)
}

/// The boundary nodes of [`poisson_2d`]'s grid.
fn boundary(nx: usize, ny: usize) -> Vec<u32> {
    (0..(nx + 1) * (ny + 1))
        .filter(|&k| {
            let (x, y) = (k % (nx + 1), k / (nx + 1));
            x == 0 || y == 0 || x == nx || y == ny
        })
        .map(|k| k as u32)
        .collect()
}

fn check_solution(name: &str, csr: &DeviceCsr, b: &[f64], tol: f64) {
    let a = dense(&csr.to_host().unwrap());
    let direct = cholesky_solve(&a, b);
    let opts = CgOptions {
        tol: 1e-13,
        max_iter: 2000,
    };
    let report = sparse::cg(csr, b, None, &opts).unwrap();
    let err = rel_diff(&report.x, &direct);
    assert!(
        err <= tol,
        "{name}: relative error {err:e} after {} iterations",
        report.iterations
    );
    assert!(report.iterations > 0 && report.residual <= 1e-12, "{name}: {report:?}");

    let host = sparse::cg_host(&csr.to_host().unwrap(), b, None, &opts).unwrap();
    assert!(rel_diff(&host.x, &direct) <= tol, "{name}: host CG");

    // Starting from the solution, there is nothing to do.
    let again = sparse::cg(csr, b, Some(&direct), &CgOptions { tol: 1e-12, ..opts }).unwrap();
    assert_eq!(again.iterations, 0, "{name}");
    assert_eq!(again.x, direct);
    // From a poor start it still gets there.
    let start = vec![10.0; b.len()];
    let far = sparse::cg(csr, b, Some(&start), &opts).unwrap();
    assert!(rel_diff(&far.x, &direct) <= tol, "{name}: from x0 = 10");
}

#[test]
fn cg_solves_2d_poisson_like_cholesky() {
    let mut rng = common::rng(4);
    for (nx, ny, hx, hy) in [(12, 9, 1.0 / 12.0, 1.0 / 9.0), (7, 15, 0.3, 0.1)] {
        let (map, ke) = poisson_2d(&mut rng, nx, ny, hx, hy);
        let mut csr = assemble(&map, &ke);
        let fixed = boundary(nx, ny);
        let values: Vec<f64> = fixed.iter().map(|_| rng.random_range(-1.0..1.0)).collect();
        let mut b: Vec<f64> = (0..map.dofs()).map(|_| rng.random_range(0.0..0.1)).collect();
        sparse::apply_dirichlet(&mut csr, &fixed, &values, &mut b).unwrap();
        check_solution(&format!("{nx}×{ny} quads"), &csr, &b, 1e-10);
    }
}

/// `elements` 1-D bars in a chain, each of random length: their DOF map and packed `K_e`s.
fn bars(rng: &mut SmallRng, elements: usize) -> (DofMap, Vec<f64>) {
    let mut index = Vec::new();
    let mut ke = Vec::new();
    for e in 0..elements as u32 {
        index.extend([e, e + 1]);
        let h: f64 = rng.random_range(0.5..2.0);
        ke.extend([1.0 / h, -1.0 / h, 1.0 / h]);
    }
    (DofMap::new(elements + 1, 2, index, vec![1; 2 * elements]).unwrap(), ke)
}

#[test]
fn cg_solves_1d_poisson_fixed_at_one_end() {
    let mut rng = common::rng(5);
    let elements = 60;
    let (map, ke) = bars(&mut rng, elements);
    let mut csr = assemble(&map, &ke);
    let mut b: Vec<f64> = (0..=elements).map(|_| rng.random_range(-1.0..1.0)).collect();
    sparse::apply_dirichlet(&mut csr, &[0], &[0.75], &mut b).unwrap();
    check_solution("1-D bars", &csr, &b, 1e-10);
}

#[test]
fn cg_rejects_indefinite_singular_and_unconverged_systems() {
    let mut rng = common::rng(6);
    let opts = CgOptions::default();
    // [[1, 2], [2, 1]] has eigenvalues 3 and -1 and a positive diagonal: the second curvature
    // p·Ap is -12.
    let map = DofMap::new(2, 2, vec![0, 1], vec![1, 1]).unwrap();
    let csr = assemble(&map, &[1.0, 2.0, 1.0]);
    match sparse::cg(&csr, &[1.0, 0.0], None, &opts) {
        Err(Error::NotPositiveDefinite { what, value }) => {
            assert!(what.contains("iteration 2"), "{what}");
            assert!((value + 12.0).abs() < 1e-12, "{value}");
        }
        other => panic!("expected NotPositiveDefinite, got {other:?}"),
    }
    let host = sparse::cg_host(&csr.to_host().unwrap(), &[1.0, 0.0], None, &opts);
    assert!(matches!(host, Err(Error::NotPositiveDefinite { .. })), "{host:?}");

    // The Neumann problem is singular (a constant mode, up to the signs) and a random load is
    // not in its range.
    let (map, ke) = poisson_2d(&mut rng, 6, 5, 0.2, 0.2);
    let floating = assemble(&map, &ke);
    let b: Vec<f64> = (0..map.dofs()).map(|_| rng.random_range(-1.0..1.0)).collect();
    let few = CgOptions {
        tol: 1e-10,
        max_iter: 500,
    };
    let e = sparse::cg(&floating, &b, None, &few).unwrap_err();
    assert!(
        matches!(e, Error::NotConverged { .. } | Error::NotPositiveDefinite { .. }),
        "{e}"
    );

    // Too few iterations.
    let mut csr = assemble(&map, &ke);
    let mut rhs = b.clone();
    let walls = boundary(6, 5);
    sparse::apply_dirichlet(&mut csr, &walls, &vec![0.0; walls.len()], &mut rhs).unwrap();
    let three = CgOptions {
        tol: 1e-10,
        max_iter: 3,
    };
    match sparse::cg(&csr, &rhs, None, &three) {
        Err(Error::NotConverged {
            iterations, residual, ..
        }) => {
            assert_eq!(iterations, 3);
            assert!(residual > 1e-10, "{residual}");
        }
        other => panic!("expected NotConverged, got {other:?}"),
    }
    // b = 0 gives x = 0 at once.
    let zero = sparse::cg(&csr, &rhs.iter().map(|_| 0.0).collect::<Vec<_>>(), None, &three).unwrap();
    assert_eq!((zero.iterations, zero.residual), (0, 0.0));
    assert!(zero.x.iter().all(|&v| v == 0.0));

    // A DOF in no element has a zero diagonal.
    let lonely = DofMap::new(3, 2, vec![0, 1], vec![1, 1]).unwrap();
    let csr = assemble(&lonely, &[2.0, -1.0, 2.0]);
    match sparse::cg(&csr, &[1.0, 1.0, 1.0], None, &opts) {
        Err(Error::NotPositiveDefinite { what, value }) => {
            assert!(what.contains("A[2][2]"), "{what}");
            assert_eq!(value, 0.0);
        }
        other => panic!("expected NotPositiveDefinite, got {other:?}"),
    }
}

#[test]
fn mismatched_lengths_and_bad_colourings_are_errors() {
    let mut rng = common::rng(7);
    let dev = common::device();
    let map = random_map(&mut rng, 20, 3, 15);
    let ke = random_ke(&mut rng, &map, 4.0);
    let short = upload(&ke[1..]);
    match sparse::assemble(&dev, &short, &map, &sparse::colour(&map)) {
        Err(Error::LengthMismatch { expected, found, .. }) => {
            assert_eq!((expected, found), (map.ke_len(), map.ke_len() - 1));
        }
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
    let all_in_one: Vec<Vec<u32>> = vec![(0..15).collect()];
    let e = sparse::assemble(&dev, &upload(&ke), &map, &all_in_one).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidConfig(m) if m.contains("share global DOF")),
        "{e}"
    );
    let missing: Vec<Vec<u32>> = sparse::colour(&map).into_iter().skip(1).collect();
    let e = sparse::assemble(&dev, &upload(&ke), &map, &missing).unwrap_err();
    assert!(matches!(&e, Error::InvalidConfig(m) if m.contains("no colour")), "{e}");

    let mut csr = assemble(&map, &ke);
    let length = |r: Result<(), Error>, expected: usize, found: usize| match r {
        Err(Error::LengthMismatch {
            expected: x, found: f, ..
        }) => assert_eq!((x, f), (expected, found)),
        other => panic!("expected LengthMismatch({expected}, {found}), got {other:?}"),
    };
    length(sparse::apply_dirichlet(&mut csr, &[0, 1], &[0.0], &mut [0.0; 20]), 2, 1);
    length(sparse::apply_dirichlet(&mut csr, &[0], &[0.0], &mut [0.0; 19]), 20, 19);
    let opts = CgOptions::default();
    length(sparse::cg(&csr, &[1.0; 21], None, &opts).map(drop), 20, 21);
    length(sparse::cg(&csr, &[1.0; 20], Some(&[0.0; 3]), &opts).map(drop), 20, 3);
    let host = csr.to_host().unwrap();
    length(host.mul(&[1.0; 2]).map(drop), 20, 2);
    length(sparse::cg_host(&host, &[1.0; 2], None, &opts).map(drop), 20, 2);
    length(
        sparse::assemble_host(&ke[2..], &map).map(drop),
        map.ke_len(),
        map.ke_len() - 2,
    );
}

/// Conjugate gradients is invariant under scaling the load and the matrix: the solution of the
/// 1-D bars at every scale of `b` in 1e-300..1e300 (and of `A` in 1e-150..1e150) is the unscaled
/// solution scaled, on the device and on the host; a solution beyond f64's range is a typed error.
#[test]
fn cg_answers_at_every_scale_of_the_system() {
    let mut rng = common::rng(7);
    let elements = 24;
    let (map, ke) = bars(&mut rng, elements);
    let b0: Vec<f64> = (0..=elements).map(|_| rng.random_range(-1.0..1.0)).collect();
    let opts = CgOptions {
        tol: 1e-12,
        max_iter: 500,
    };
    let solve = |a_scale: f64, b_scale: f64| {
        let scaled: Vec<f64> = ke.iter().map(|k| k * a_scale).collect();
        let mut csr = assemble(&map, &scaled);
        let mut b: Vec<f64> = b0.iter().map(|v| v * b_scale).collect();
        sparse::apply_dirichlet(&mut csr, &[0], &[0.0], &mut b).unwrap();
        let device = sparse::cg(&csr, &b, None, &opts);
        let host = sparse::cg_host(&csr.to_host().unwrap(), &b, None, &opts);
        (device, host)
    };
    let (reference, _) = solve(1.0, 1.0);
    let reference = reference.unwrap().x;
    for (a_scale, b_scale) in [
        (1.0, 1e-300),
        (1.0, 1e-200),
        (1.0, 1e-160),
        (1.0, 1e160),
        (1.0, 1e300),
        (1e-150, 1e-150),
        (1e150, 1e150),
        (1e-150, 1e-300),
        (1e150, 1e300),
    ] {
        let (device, host) = solve(a_scale, b_scale);
        for (which, report) in [("device", device), ("host", host)] {
            let report = report.unwrap_or_else(|e| panic!("A·{a_scale:e}, b·{b_scale:e} on the {which}: {e}"));
            assert!(report.iterations > 0, "A·{a_scale:e}, b·{b_scale:e} on the {which}");
            let want: Vec<f64> = reference.iter().map(|x| x * (b_scale / a_scale)).collect();
            let err = rel_diff(&report.x, &want);
            assert!(
                err <= 1e-9,
                "A·{a_scale:e}, b·{b_scale:e} on the {which}: relative error {err:e}"
            );
        }
    }
    // x = A⁻¹ b ~ 1e300 / 1e-100 is beyond f64: refused, not infinite.
    let (device, host) = solve(1e-100, 1e300);
    for r in [device, host] {
        assert!(matches!(r, Err(Error::TooLarge { .. })), "{r:?}");
    }
}
