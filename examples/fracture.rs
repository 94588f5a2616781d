//! Seed 003: brittle intercrystalline fracture on a cubic lattice of grains. Every grain has 3
//! bonds (to x+1, y+1, z+1) of one bit each and every column of grains one bit; a crack grows
//! from one broken horizontal bond in the centre by Metropolis moves to the 12 neighbour bonds of
//! a broken one, with the energy K1·nb − K2·nhb^{3/2} (nb broken bonds, nhb columns holding a
//! broken horizontal bond), until it touches the four vertical faces.
//!
//! Runs on the default OpenCL device (the work queue of live bonds, one proposal per live bond
//! per launch, counters refreshed between launches), or the serial reference on one core.
//! Writes the side (XZ) and top (XY) projections of the crack as PNG (the thesis' appendix A
//! figures) and the broken bonds per site as VTK (ParaView: Threshold `broken > 0`).
//!
//! ```sh
//! cargo run --release --example fracture                                  # 128^3, K1 = K2 = 1
//! cargo run --release --example fracture -- --k1 3 --k2 1 --seed 7
//! cargo run --release --example fracture -- --size 1000x1000x500         # 1.5e9 bonds, a large GPU
//! cargo run --release --example fracture -- --checkpoint out/fracture/run.bin   # save every minute
//! cargo run --release --example fracture -- --resume out/fracture/run.bin       # continue bit for bit
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Parser, ValueEnum};
use clforge::prelude::*;
use clforge::runtime::lattice::bonds::{
    serial_reference, BondGeometry, BondRun, BondSchedule, BondState, Stop, VERTICAL_FACES,
};
use indicatif::{ProgressBar, ProgressStyle};

/// The energy's constants (units of k_B T).
#[derive(Clone, Copy, Debug)]
pub struct Energies {
    pub k1: f64,
    pub k2: f64,
}

/// Seed 003's model, declared in Rust: 3 bonds per grain (to x + 1, y + 1, z + 1), the 12
/// neighbours of each bond as data (thesis 3.3, printed order), the columns along z marked by
/// the horizontal bond (kind 2), and the energy of the global counters; Metropolis acceptance.
#[clforge::lattice(bonds = 3, group_kind = 2, group_axis = z)]
pub mod fracture {
    pub const NEIGHBOURS: [[[i32; 4]; 12]; 3] = clforge::runtime::lattice::bonds::SEED_003;

    /// K1·nb − K2·nhb^{3/2} (the thesis' `powf(nb + s, 1.5)` is a typo for `nhb + s`).
    pub fn energy(k: &super::Energies, broken: u64, columns: u64) -> f64 {
        k.k1 * broken as f64 - k.k2 * (columns as f64).powf(1.5)
    }

    /// Metropolis: min(1, e^-du).
    pub fn accept(du: f64) -> f64 {
        if du <= 0.0 {
            1.0
        } else {
            (-du).exp()
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// The work queue on the OpenCL device.
    Device,
    /// The thesis' reference algorithm, one proposal at a time, on one core.
    Serial,
}

#[derive(Parser, Debug)]
#[command(
    about = "Seed 003's intercrystalline fracture on the default OpenCL device",
    allow_negative_numbers = true
)]
struct Cli {
    /// Grains per axis: `128` (a cube) or `1000x1000x500`.
    #[arg(long, default_value = "128", value_parser = parse_size)]
    size: [usize; 3],
    /// Surface energy per broken bond (units of k_B T).
    #[arg(long, default_value_t = 1.0)]
    k1: f64,
    /// Elastic energy scale of the broken columns.
    #[arg(long, default_value_t = 1.0)]
    k2: f64,
    /// Seed of the random stream.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where the proposals run.
    #[arg(long, value_enum, default_value_t = Mode::Device)]
    mode: Mode,
    /// Thinning (device): each live bond proposes in a launch with probability 1 / thinning;
    /// larger values follow the serial reference more closely (docs/LATTICE.md).
    #[arg(long, default_value_t = 8)]
    thinning: u32,
    /// Stop after this many launches (device) or proposals (serial) if the crack has not
    /// reached the faces.
    #[arg(long, default_value_t = u64::MAX)]
    max_steps: u64,
    /// Save the state here every `--every` seconds and at the end.
    #[arg(long)]
    checkpoint: Option<PathBuf>,
    /// Seconds between checkpoints.
    #[arg(long, default_value_t = 60)]
    every: u64,
    /// Continue from a checkpoint (its size and seed; --k1/--k2 must be the run's).
    #[arg(long)]
    resume: Option<PathBuf>,
    /// Skip the VTK file (2 bytes per site: 1 GB at 1000x1000x500).
    #[arg(long)]
    no_vtk: bool,
    /// Directory for the pictures and the VTK file (`out/` is ignored by git).
    #[arg(long, default_value = "out/fracture")]
    out: PathBuf,
}

fn parse_size(s: &str) -> Result<[usize; 3], String> {
    let p: Vec<usize> = s
        .split('x')
        .map(|v| {
            v.trim()
                .parse()
                .map_err(|_| format!("`{s}` is not a size like 128 or 1000x1000x500"))
        })
        .collect::<Result<_, _>>()?;
    match p[..] {
        [n] => Ok([n, n, n]),
        [x, y, z] => Ok([x, y, z]),
        _ => Err(format!("`{s}` needs one extent or three")),
    }
}

fn save(state: &BondState, path: &Path) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    // Complete and synced before it replaces the previous checkpoint: a full disk leaves the
    // previous one as it was.
    state.save_file(path)?;
    Ok(())
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    if !(cli.k1.is_finite() && cli.k2.is_finite()) {
        bail!("--k1 and --k2 must be finite numbers");
    }
    let model = fracture::model()?;
    let k = Energies { k1: cli.k1, k2: cli.k2 };
    let energy = fracture::Rule(&k);
    let mut state = match &cli.resume {
        Some(path) => {
            let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
            let s = BondState::load(std::io::BufReader::new(file))
                .with_context(|| format!("reading {}", path.display()))?;
            println!(
                "resumed {} at step {} ({} broken bonds)",
                path.display(),
                s.step,
                s.broken
            );
            s
        }
        None => BondState::nucleus(BondGeometry::new(cli.size, 3)?, &model, cli.seed)?,
    };
    let [nx, ny, nz] = state.geometry.sample();
    println!(
        "{nx} x {ny} x {nz} grains, {} bonds ({:.1} MB of bits), K1 = {}, K2 = {}, seed {}",
        state.geometry.bonds(),
        state.geometry.bonds() as f64 / 8e6,
        cli.k1,
        cli.k2,
        state.seed
    );
    let bar = ProgressBar::new_spinner();
    bar.set_style(ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")?);
    let started = Instant::now();
    let mut saved = Instant::now();
    let every = Duration::from_secs(cli.every.max(1));
    let faces = |f: u32| format!("{}/4 faces", (f & VERTICAL_FACES).count_ones());
    let stop = match cli.mode {
        Mode::Device => {
            let device = Device::default()?;
            println!("device: {} ({})", device.info().name, device.info().platform);
            let schedule = BondSchedule {
                thinning: cli.thinning,
                ..BondSchedule::default()
            };
            let mut run = BondRun::new(&device, &model, schedule, &state, None)?;
            let mut stop = Stop::Limit;
            while stop == Stop::Limit && run.step() < cli.max_steps {
                // Runs in stretches between checkpoints.
                let until = run.step().saturating_add(256).min(cli.max_steps);
                stop = run.run(&energy, VERTICAL_FACES, until, |r, l| {
                    bar.set_message(format!(
                        "launch {}: {} live, {} broken bonds, {} columns, {}",
                        r.step(),
                        l.entries,
                        r.broken(),
                        r.marked(),
                        faces(r.faces())
                    ));
                    bar.tick();
                })?;
                if let Some(path) = cli.checkpoint.as_ref().filter(|_| saved.elapsed() >= every) {
                    save(&run.state()?, path)?;
                    saved = Instant::now();
                }
            }
            state = run.state()?;
            stop
        }
        Mode::Serial => {
            let mut stop = Stop::Limit;
            while stop == Stop::Limit && state.proposals < cli.max_steps {
                let until = state.proposals.saturating_add(1 << 20).min(cli.max_steps);
                stop = serial_reference(&mut state, &model, &energy, VERTICAL_FACES, until)?;
                bar.set_message(format!(
                    "proposal {}: {} broken bonds, {} columns, {}",
                    state.proposals,
                    state.broken,
                    state.marked,
                    faces(state.faces)
                ));
                bar.tick();
                if let Some(path) = cli.checkpoint.as_ref().filter(|_| saved.elapsed() >= every) {
                    save(&state, path)?;
                    saved = Instant::now();
                }
            }
            stop
        }
    };
    bar.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    // The device schedule counts entry visits; each proposes with probability 1 / thinning.
    let proposals = match cli.mode {
        Mode::Device => state.proposals / u64::from(cli.thinning.max(1)),
        Mode::Serial => state.proposals,
    };
    println!(
        "{}: {} broken bonds, {} broken horizontal bonds (columns) of {}, {} proposals in {:.2} s ({:.1} M proposals/s, setup included)",
        match stop {
            Stop::Reached => "the crack reached the four vertical faces",
            Stop::Exhausted => "no live bond is left (the crack stopped)",
            Stop::Limit => "stopped at --max-steps",
        },
        state.broken,
        state.marked,
        nx * ny,
        proposals,
        secs,
        proposals as f64 / secs / 1e6
    );
    if let Some(path) = &cli.checkpoint {
        save(&state, path)?;
        println!("saved {}", path.display());
    }
    std::fs::create_dir_all(&cli.out).with_context(|| format!("creating {}", cli.out.display()))?;
    let side = cli.out.join("side-xz.png");
    let top = cli.out.join("top-xy.png");
    projection(&state, [0, 2], &side)?;
    projection(&state, [0, 1], &top)?;
    if cli.no_vtk {
        println!("wrote {} and {}", side.display(), top.display());
    } else {
        let vtk = cli.out.join("broken-bonds.vtk");
        write_vtk(&state, &vtk)?;
        println!("wrote {}, {} and {}", side.display(), top.display(), vtk.display());
    }
    Ok(())
}

/// Broken bonds per site summed along the third axis, on axes `[a, b]` (b upwards), as a PNG:
/// white where nothing broke, darker with more broken bonds behind the pixel (log scale).
fn projection(s: &BondState, axes: [usize; 2], path: &Path) -> Result<()> {
    // Drawn into a temporary file renamed over `path` once complete: a previous picture
    // survives any failure, and no partial picture is left.
    let mut drawn = None;
    clforge::runtime::files::replace_file_at(path, |tmp| {
        drawn = Some(projection_at(s, axes, tmp).map_err(std::io::Error::other)?);
        Ok(())
    })
    .with_context(|| format!("writing {}", path.display()))?;
    drawn.ok_or_else(|| anyhow::anyhow!("{} was not drawn", path.display()))
}

fn projection_at(s: &BondState, axes: [usize; 2], path: &Path) -> Result<()> {
    use plotters::prelude::*;
    let sites = s.geometry.sites();
    let (w, h) = (sites[axes[0]], sites[axes[1]]);
    let mut count = vec![0u32; w * h];
    for b in s.bonds.ones() {
        let (p, _) = s.geometry.site(b as u32);
        count[p[axes[0]] + w * p[axes[1]]] += 1;
    }
    let max = f64::from(count.iter().copied().max().unwrap_or(1).max(1));
    let scale = (1024 / w.max(h)).max(1);
    let (pw, ph) = ((w * scale).min(2048), (h * scale).min(2048));
    let root = BitMapBackend::new(path, (pw as u32, ph as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    for py in 0..ph {
        for px in 0..pw {
            let (x, y) = (px * w / pw, (ph - 1 - py) * h / ph);
            let c = count[x + w * y];
            if c > 0 {
                let t = (1.0 + f64::from(c)).ln() / (1.0 + max).ln();
                let v = (200.0 * (1.0 - t)) as u8;
                root.draw_pixel((px as i32, py as i32), &RGBColor(v, v / 2, 40 + v / 2))?;
            }
        }
    }
    root.present().with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// The broken bonds as a legacy binary VTK structured-points file: per site, `broken` is the
/// bit mask of its broken bonds (1: to x+1, 2: to y+1, 4: to z+1) and `count` their number.
fn write_vtk(s: &BondState, path: &Path) -> Result<()> {
    use std::io::Write;
    let [px, py, pz] = s.geometry.sites();
    let mut mask = vec![0u8; px * py * pz];
    for b in s.bonds.ones() {
        let (p, kind) = s.geometry.site(b as u32);
        mask[p[0] + px * (p[1] + py * p[2])] |= 1 << kind;
    }
    let mut out = Vec::with_capacity(2 * mask.len() + 512);
    write!(
        out,
        "# vtk DataFile Version 3.0\nclforge fracture: broken bonds per site\nBINARY\nDATASET STRUCTURED_POINTS\n\
         DIMENSIONS {px} {py} {pz}\nORIGIN 0 0 0\nSPACING 1 1 1\nPOINT_DATA {}\n\
         SCALARS broken unsigned_char 1\nLOOKUP_TABLE default\n",
        mask.len()
    )?;
    out.extend_from_slice(&mask);
    write!(out, "\nSCALARS count unsigned_char 1\nLOOKUP_TABLE default\n")?;
    out.extend(mask.iter().map(|m| m.count_ones() as u8));
    out.push(b'\n');
    clforge::runtime::files::replace_file(path, |w| w.write_all(&out))
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
