use super::*;
use crate::grid::Boundary;
use crate::grid::DeviceGrid;
use crate::launch::{Bind, KernelArg};
use crate::stencil::Variant;
use std::cell::Cell;
use std::fs;

/// The three variants of `out = u(-1, 0) + u(1, 0)` with a fixed boundary, written as
/// the macro would (the runtime's tests cannot use the macro).
const SOURCE: &str = r#"
#ifndef TILE_X
#define TILE_X 32
#endif
#ifndef TILE_Y
#define TILE_Y 32
#endif
#ifndef WG_Y
#define WG_Y 4
#endif
#define TW (TILE_X + 2)
__kernel void pair_plain(__global float* out, __global const float* u, int nx, int ny, int nz) {
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= 1 && x < nx - 1 && y < ny) out[x + nx * y] = u[x - 1 + nx * y] + u[x + 1 + nx * y];
}
__kernel __attribute__((reqd_work_group_size(TILE_X, WG_Y, 1)))
void pair_tiled(__global float* out, __global const float* u, int nx, int ny, int nz) {
    __local float t_u[TW * TILE_Y];
    int lx = get_local_id(0), x0 = get_group_id(0) * TILE_X, y0 = get_group_id(1) * TILE_Y;
    for (int row = get_local_id(1); row < TILE_Y; row += WG_Y) {
        for (int i = lx; i < TW; i += TILE_X) {
            int gx = clamp(x0 - 1 + i, 0, nx - 1), gy = min(y0 + row, ny - 1);
            t_u[i + TW * row] = u[gx + nx * gy];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int x = x0 + lx;
    for (int row = get_local_id(1); row < TILE_Y; row += WG_Y) {
        int y = y0 + row;
        if (x >= 1 && x < nx - 1 && y < ny) out[x + nx * y] = t_u[lx + TW * row] + t_u[lx + 2 + TW * row];
    }
}
__kernel void pair_vec8(__global float* out, __global const float* u, int nx, int ny, int nz) {
    int y = get_global_id(1);
    for (int x = get_global_id(0) * 8; x < min((int)get_global_id(0) * 8 + 8, nx); ++x)
        if (x >= 1 && x < nx - 1 && y < ny) out[x + nx * y] = u[x - 1 + nx * y] + u[x + 1 + nx * y];
}
"#;

fn spec() -> StencilSpec {
    StencilSpec {
        name: "pair",
        rank: 2,
        halo: [1, 0, 0],
        boundary: Boundary::Fixed,
        lanes: 8,
        narrow: None,
        point: false,
        folds: &[],
        packed: &[],
        variants: [
            ("pair_plain", 0),
            ("pair_tiled", 4),
            ("pair_vec8", 0),
            ("pair_steps", 8),
            ("pair_march", 4),
        ]
        .map(|(kernel, local_bytes_per_point)| crate::VariantSpec {
            kernel,
            unavailable: None,
            local_bytes_per_point,
            params: &[
                Bind::Out(0),
                Bind::Arg(0),
                Bind::Extent(0),
                Bind::Extent(1),
                Bind::Extent(2),
            ],
        }),
        default_tile: Tile { x: 32, y: 32, rows: 4 },
        origin: "tune.rs",
        source: SOURCE,
    }
}

fn info(max_work_group_size: usize, local_mem_bytes: u64) -> DeviceInfo {
    crate::cl::test_info(
        crate::DeviceKind::Gpu,
        "test platform",
        max_work_group_size,
        local_mem_bytes,
    )
}

/// A fresh cache path under the target directory (removed first).
fn cache_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("clforge-tune-test-{}", std::process::id()));
    let path = dir.join(name).join("tune.json");
    let _ = fs::remove_file(&path);
    path
}

/// Tunes `pair` for `shape`, counting the closure's calls, and checks every timed
/// launch computed the right numbers.
fn tune_counting(tuner: &mut Tuner, shape: Shape) -> (Tuned, usize) {
    let dev = Device::default().unwrap();
    let host: Vec<f32> = (0..shape.len()).map(|i| (i % 97) as f32).collect();
    let u = DeviceGrid::from_host(&dev, &crate::HostGrid::from_vec(shape, host.clone()).unwrap()).unwrap();
    let mut out = DeviceGrid::<f32>::new(&dev, shape).unwrap();
    let calls = Cell::new(0);
    let tuned = tuner
        .tune(&dev, spec(), shape, |plan| {
            calls.set(calls.get() + 1);
            plan.launch(&mut out, &[KernelArg::grid("u", &u)])
        })
        .unwrap();
    if calls.get() > 0 {
        let [nx, ny, _] = shape.dims();
        let got = out.to_host().unwrap();
        for y in 0..ny {
            for x in 1..nx - 1 {
                let want = host[x - 1 + nx * y] + host[x + 1 + nx * y];
                assert_eq!(got.get([x, y, 0]), Some(want), "({x}, {y})");
            }
        }
    }
    (tuned, calls.get())
}

#[test]
fn tunes_once_then_answers_from_memory_and_file() {
    let path = cache_path("roundtrip");
    let shape = Shape::d2(70, 40);
    let mut tuner = Tuner::with_cache(Some(path.clone())).repetitions(2);
    let (first, calls) = tune_counting(&mut tuner, shape);
    assert!(!first.from_cache);
    assert!(tuner.save_error().is_none(), "{:?}", tuner.save_error());
    let dev = Device::default().unwrap();
    let tried = candidates(&spec(), dev.info(), shape);
    assert_eq!(first.trials.len(), tried.len());
    assert!(first.trials.iter().all(|t| t.median_ns.is_some() != t.error.is_some()));
    let ran = first.trials.iter().filter(|t| t.median_ns.is_some()).count();
    // One warm-up and two timed launches per candidate that ran.
    assert!(ran >= 3 && calls == 3 * ran, "{ran} candidates ran, {calls} calls");
    let fastest = first.trials.iter().filter_map(|t| t.median_ns).min();
    assert_eq!(Some(first.median_ns), fastest);

    let (again, calls) = tune_counting(&mut tuner, shape);
    assert_eq!((calls, again.from_cache), (0, true));
    assert_eq!(again.config, first.config);

    // A new tuner (a new process) reads the file.
    let mut fresh = Tuner::with_cache(Some(path.clone()));
    assert_eq!(fresh.cached(&dev, &spec(), shape), Some(first.config.clone()));
    let (from_file, calls) = tune_counting(&mut fresh, shape);
    assert_eq!(
        (calls, from_file.from_cache, from_file.median_ns),
        (0, true, first.median_ns)
    );
    assert_eq!(from_file.config, first.config);

    // Another shape is another key, and both survive in the file.
    let (other, calls) = tune_counting(&mut fresh, Shape::d2(33, 9));
    assert!(!other.from_cache && calls > 0);
    let text = fs::read_to_string(&path).unwrap();
    let file: CacheFile = serde_json::from_str(&text).unwrap();
    assert_eq!(file.entries.len(), 2, "{text}");
    assert!(text.contains("70x40") && text.contains("33x9"), "{text}");
}

#[test]
fn unwritable_or_corrupt_cache_is_not_fatal() {
    // A cache "directory" that is a file cannot be created.
    let blocker = cache_path("blocked");
    fs::create_dir_all(blocker.parent().unwrap()).unwrap();
    fs::write(blocker.parent().unwrap().join("file"), b"x").unwrap();
    let path = blocker.parent().unwrap().join("file").join("tune.json");
    let mut tuner = Tuner::with_cache(Some(path)).repetitions(1);
    let (tuned, calls) = tune_counting(&mut tuner, Shape::d2(40, 8));
    assert!(!tuned.from_cache && calls > 0);
    assert!(tuner.save_error().is_some());
    let (_, calls) = tune_counting(&mut tuner, Shape::d2(40, 8));
    assert_eq!(calls, 0, "kept in memory");

    let corrupt = cache_path("corrupt");
    fs::create_dir_all(corrupt.parent().unwrap()).unwrap();
    fs::write(&corrupt, b"{ not json").unwrap();
    let mut tuner = Tuner::with_cache(Some(corrupt.clone())).repetitions(1);
    let (tuned, calls) = tune_counting(&mut tuner, Shape::d2(40, 8));
    assert!(!tuned.from_cache && calls > 0);
    assert!(tuner.save_error().is_none());
    let file: CacheFile = serde_json::from_slice(&fs::read(&corrupt).unwrap()).unwrap();
    assert_eq!(file.entries.len(), 1);
}

#[test]
fn failing_candidates_are_skipped_and_all_failing_is_an_error() {
    let dev = Device::default().unwrap();
    let shape = Shape::d2(64, 16);
    let mut tuner = Tuner::in_memory().repetitions(1);
    let tuned = tuner
        .tune(&dev, spec(), shape, |plan| {
            if plan.variant() == Variant::Plain {
                Err(Error::InvalidConfig("refused".into()))
            } else {
                let u = DeviceGrid::<f32>::new(&dev, shape)?;
                let mut out = DeviceGrid::<f32>::new(&dev, shape)?;
                plan.launch(&mut out, &[KernelArg::grid("u", &u)])
            }
        })
        .unwrap();
    assert_ne!(tuned.config.variant, Variant::Plain);
    assert!(tuned
        .trials
        .iter()
        .any(|t| t.error.as_deref().is_some_and(|e| e.contains("refused"))));

    let err = Tuner::in_memory().tune(&dev, spec(), shape, |_| Err(Error::InvalidConfig("nope".into())));
    assert!(
        matches!(&err, Err(Error::InvalidConfig(m)) if m.contains("nope") && m.contains("pair")),
        "{err:?}"
    );
    let err = Tuner::in_memory().tune(&dev, spec(), Shape::d1(64), |_| unreachable!());
    assert!(matches!(err, Err(Error::InvalidConfig(_))));
}

#[test]
fn candidates_respect_device_limits() {
    let shape = Shape::d2(512, 256);
    let all = candidates(&spec(), &info(1024, 48 << 10), shape);
    assert_eq!(all[0], LaunchConfig::default());
    for t in SEED_002_TILES {
        assert!(all.contains(&LaunchConfig::tiled(t)), "{t:?}");
    }
    assert!(all.iter().any(|c| c.variant == Variant::Vector));
    let unique: std::collections::HashSet<_> = all.iter().collect();
    assert_eq!(unique.len(), all.len());

    // 128 work-items and 4 KiB of local memory: (32 + 2) * 32 * 4 B = 4352 B is too much.
    let small = candidates(&spec(), &info(128, 4096), shape);
    for c in &small {
        let items: usize = match (c.variant, c.tile, c.work_group) {
            (Variant::Tiled, Some(t), _) => t.x * t.rows,
            (_, _, Some(wg)) => wg.iter().product(),
            _ => 128,
        };
        assert!(items <= 128, "{c:?}");
        if let Some(t) = c.tile {
            assert!((t.x + 2) * t.y * 4 <= 4096, "{c:?}");
        }
    }
    assert!(!small.contains(&LaunchConfig::tiled(Tile { x: 32, y: 32, rows: 4 })));
    assert!(small.contains(&LaunchConfig::tiled(Tile { x: 32, y: 16, rows: 4 })));

    // A narrow grid gets no work-groups much wider than itself.
    let narrow = candidates(&spec(), &info(1024, 48 << 10), Shape::d2(20, 256));
    assert!(
        narrow.iter().all(|c| c.work_group.is_none_or(|wg| wg[0] <= 32)),
        "{narrow:?}"
    );
}

/// 3-D stencils get march candidates (at most as deep as the grid), others none; the
/// cache file keeps the variant and its depth.
#[test]
fn march_candidates_for_3d_stencils_only() {
    let mut s3 = spec();
    s3.rank = 3;
    s3.halo = [1, 1, 1];
    s3.default_tile = Tile { x: 32, y: 8, rows: 4 };
    let gpu = candidates(&s3, &info(1024, 48 << 10), Shape::d3(512, 512, 512));
    let marches = gpu.iter().filter(|c| c.variant == Variant::March).count();
    assert!(marches >= 6, "{gpu:?}");
    assert!(gpu.contains(&LaunchConfig::march(Tile { x: 32, y: 8, rows: 4 }, 16)));
    let shallow = candidates(&s3, &info(1024, 48 << 10), Shape::d3(64, 64, 20));
    assert!(shallow.iter().any(|c| c.march == Some(20)), "{shallow:?}");
    assert!(shallow.iter().all(|c| c.march.is_none_or(|m| m <= 20)), "{shallow:?}");
    let flat = candidates(&spec(), &info(1024, 48 << 10), Shape::d2(512, 256));
    assert!(flat.iter().all(|c| c.variant != Variant::March && c.march.is_none()));

    let c = LaunchConfig::march(Tile { x: 64, y: 8, rows: 4 }, 32);
    let e = Entry::new(&c, 5);
    assert_eq!((e.variant.as_str(), e.march), ("march", Some(32)));
    let text = serde_json::to_string(&e).unwrap();
    let back: Entry = serde_json::from_str(&text).unwrap();
    assert_eq!(back.config(), Some(c));
}

/// Every variant is a candidate on every device kind and shape: a 3-D grid whose rows hold
/// fewer vectors than any work-group is wide still gets the vector kernel (in its default
/// launch), on a CPU as on a GPU.
#[test]
fn the_vector_kernel_is_a_candidate_on_narrow_rows_and_every_device() {
    let mut s3 = spec();
    s3.rank = 3;
    s3.halo = [1, 1, 1];
    for kind in [crate::DeviceKind::Cpu, crate::DeviceKind::Gpu] {
        let info = crate::cl::test_info(kind.clone(), "test platform", 1024, 48 << 10);
        for shape in [Shape::d3(64, 64, 64), Shape::d3(9, 5, 3), Shape::d3(512, 512, 512)] {
            let c = candidates(&s3, &info, shape);
            assert!(
                c.iter().any(|c| c.variant == Variant::Vector),
                "{kind:?} {shape}: {c:?}"
            );
            assert!(c.iter().any(|c| c.variant == Variant::Plain), "{kind:?} {shape}: {c:?}");
        }
    }
}

#[test]
fn key_names_device_stencil_source_and_shape() {
    let i = info(256, 1 << 15);
    let a = Tuner::key(&i, &spec(), Shape::d2(8, 8));
    assert!(
        a.contains("test device") && a.contains("1.0") && a.contains("pair") && a.contains("8x8"),
        "{a}"
    );
    assert_ne!(a, Tuner::key(&i, &spec(), Shape::d2(8, 9)));
    let other = StencilSpec {
        source: "// changed\n",
        ..spec()
    };
    assert_ne!(a, Tuner::key(&i, &other, Shape::d2(8, 8)));
    assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
}
