//! How the device schedule's law approaches the serial reference's as it is thinned
//! (docs/LATTICE.md): for one (K1, K2) pair and many seeds, the broken bonds and columns at the
//! stop of the serial reference and of the parallel schedule's exact host replay (which equals the
//! device bit for bit) at several thinnings, with 95 % confidence intervals.
//!
//! ```sh
//! cargo run --release --example fracture_thinning -- --size 32 --k1 3 --seeds 1000 --thinning 1,8,32
//! ```

use anyhow::{bail, Result};
use clap::Parser;
use clforge::runtime::lattice::bonds::{
    replay, serial_reference, BondGeometry, BondModel, BondSchedule, BondState, Fracture, Stop, VERTICAL_FACES,
};

#[derive(Parser, Debug)]
#[command(about = "Seed 003's fracture: the thinned parallel schedule against the serial reference")]
struct Cli {
    /// Grains per axis (a cube).
    #[arg(long, default_value_t = 32)]
    size: usize,
    #[arg(long, default_value_t = 3.0)]
    k1: f64,
    #[arg(long, default_value_t = 1.0)]
    k2: f64,
    /// Seeds per schedule (at least 2).
    #[arg(long, default_value_t = 200)]
    seeds: u64,
    /// Thinnings of the parallel schedule, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1,8,32")]
    thinning: Vec<u32>,
}

/// Mean ± the 95 % half width (normal quantile: many seeds).
fn mean_ci(v: &[f64]) -> String {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let sd = (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0)).sqrt();
    format!("{m:.0} ± {:.0}", 1.96 * sd / n.sqrt())
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    if cli.seeds < 2 || cli.thinning.contains(&0) {
        bail!("--seeds must be at least 2 and every --thinning at least 1");
    }
    let model = BondModel::fracture();
    let energy = Fracture { k1: cli.k1, k2: cli.k2 };
    let g = BondGeometry::new([cli.size; 3], 3)?;
    let mut samples = vec![(Vec::new(), Vec::new()); cli.thinning.len() + 1];
    for seed in 0..cli.seeds {
        for (i, sample) in samples.iter_mut().enumerate() {
            let mut s = BondState::nucleus(g, &model, 500 + seed)?;
            let stop = if i == 0 {
                serial_reference(&mut s, &model, &energy, VERTICAL_FACES, u64::MAX)?
            } else {
                let schedule = BondSchedule {
                    thinning: cli.thinning[i - 1],
                    ..BondSchedule::default()
                };
                replay(&mut s, &model, &energy, schedule, VERTICAL_FACES, u64::MAX)?
            };
            if stop != Stop::Reached {
                bail!("seed {seed} stopped before the faces ({stop:?})");
            }
            sample.0.push(s.broken as f64);
            sample.1.push(s.marked as f64);
        }
    }
    println!(
        "{0}^3 grains, K1 = {1}, K2 = {2}, {3} seeds: broken bonds and columns at the stop (mean ± 95 % CI)",
        cli.size, cli.k1, cli.k2, cli.seeds
    );
    for (i, (b, c)) in samples.iter().enumerate() {
        let label = if i == 0 {
            "serial reference".to_string()
        } else {
            format!("parallel, thinning {}", cli.thinning[i - 1])
        };
        println!("{label:>24}: {} bonds, {} columns", mean_ci(b), mean_ci(c));
    }
    Ok(())
}
