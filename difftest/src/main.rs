//! clforge-difftest: random stencils from the whole accepted grammar, compiled through the real
//! `#[stencil]` macro in generated crates, each run on the host and in every variant on the
//! OpenCL device on inputs full of NaN, ±inf, ±0, subnormals and extremes. Every difference
//! is printed with a reproduction, and makes the run fail. docs/DIFFTEST.md says more.
//!
//! ```sh
//! cargo run --release -p clforge-difftest -- --count 200 --seed 1
//! cargo run --release -p clforge-difftest -- --seed 1 --first 17 --count 1 --keep --shrink 1
//! ```

mod ast;
mod cargo;
mod emit;
mod gen;
#[allow(dead_code)]
mod harness;
mod runner;
mod shrink;

use anyhow::{bail, Result};
use ast::Stencil;
use clap::Parser;
use runner::Record;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Parser, Debug)]
#[command(about = "Differential tester: random stencils, host function vs every generated kernel")]
struct Cli {
    /// Stencils to generate and test.
    #[arg(long, default_value_t = 50)]
    count: u64,
    /// Seed of the run: stencil `id` of seed `s` is always the same stencil.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stencils per generated crate (one cargo build and one harness run each).
    #[arg(long, default_value_t = 100)]
    batch: u64,
    /// Id of the first stencil (`--first 17 --count 1` reproduces stencil 17).
    #[arg(long, default_value_t = 0)]
    first: u64,
    /// These stencils instead of `--first`/`--count` (`--ids 17,4096`), in one batch per
    /// `--batch` of them: to rerun the ones a long run reported.
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["first", "count"])]
    ids: Vec<u64>,
    /// Keep the generated crates (`<dir>/gen-<first id>`).
    #[arg(long)]
    keep: bool,
    /// Harness processes per batch (default: the available parallelism).
    #[arg(long)]
    jobs: Option<usize>,
    /// Shrink up to this many failing stencils to the smallest that fails the same way.
    #[arg(long, default_value_t = 0)]
    shrink: usize,
    /// Rounds of shrinking per stencil (one build and run each).
    #[arg(long, default_value_t = 12)]
    shrink_rounds: usize,
    /// Seconds without progress before a stencil counts as hung.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// Print the stencils' source and stop.
    #[arg(long)]
    print: bool,
    /// Append a markdown row with the run's result to this file.
    #[arg(long)]
    summary: Option<PathBuf>,
    /// Generated crates and their target directory (default: `target/difftest`).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Build every batch and copy its harness binary to `<DIR>/gen-<first id>`, without running
    /// it: for a machine with more cores but no Rust toolchain (run there with `--prebuilt`).
    /// Stencils the macro rejects are reported here.
    #[arg(long, value_name = "DIR", conflicts_with = "prebuilt")]
    export: Option<PathBuf>,
    /// Run the harness binaries that `--export` left in `<DIR>` instead of building; the same
    /// `--seed`, `--first`, `--count` and `--batch` must be given. Shrinking needs cargo: use
    /// `--shrink 0` and shrink the stencils it reports where cargo is.
    #[arg(long, value_name = "DIR")]
    prebuilt: Option<PathBuf>,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("difftest/ sits in the repository")
        .to_path_buf()
}

struct Tester {
    cli: Cli,
    dir: PathBuf,
    target: PathBuf,
    jobs: usize,
}

/// What one generated crate reported.
#[derive(Default)]
struct Batch {
    records: Vec<Record>,
    millis: BTreeMap<u64, u64>,
    build: Duration,
    run: Duration,
}

impl Tester {
    /// Builds and runs `stencils` in the crate `name`; stencils the macro rejects (or the
    /// generator wrote wrongly) are recorded and left out of the build.
    fn batch(&self, name: &str, stencils: &[Stencil], extra: Vec<String>, keep: bool) -> Result<Batch> {
        let crate_dir = self.dir.join(name);
        let mut live: Vec<Stencil> = stencils.to_vec();
        let mut out = Batch::default();
        let t = Instant::now();
        let prebuilt = self.cli.prebuilt.as_ref().map(|d| d.join(name));
        let exe = if let Some(exe) = prebuilt.filter(|e| e.exists()) {
            exe
        } else if self.cli.prebuilt.is_some() {
            // Every stencil of the batch was rejected where it was built: nothing to run.
            return Ok(out);
        } else {
            loop {
                if live.is_empty() {
                    return Ok(out);
                }
                emit::write_crate(&crate_dir, &repo(), &live)?;
                let driver_lines: BTreeMap<u64, usize> = live
                    .iter()
                    .map(|s| (s.id, s.source(false).lines().count() + 1))
                    .collect();
                match cargo::build(&crate_dir, &self.target, &driver_lines)? {
                    Ok(exe) => break exe,
                    Err(errors) => {
                        if !errors.other.is_empty() || !errors.driver.is_empty() {
                            for e in errors.other.iter().chain(errors.driver.values().flatten()) {
                                eprintln!("{e}");
                            }
                            bail!(
                                "the generated crate {} failed to build outside the stencils (a difftest bug)",
                                crate_dir.display()
                            );
                        }
                        for (id, errs) in &errors.control {
                            out.records.push(build_record(*id, "generator", errs));
                        }
                        for (id, errs) in &errors.stencil {
                            if !errors.control.contains_key(id) {
                                out.records.push(build_record(*id, "rejected", errs));
                            }
                        }
                        live.retain(|s| !errors.control.contains_key(&s.id) && !errors.stencil.contains_key(&s.id));
                    }
                }
            }
        };
        out.build = t.elapsed();
        if let Some(dir) = &self.cli.export {
            std::fs::create_dir_all(dir)?;
            std::fs::copy(&exe, dir.join(name))?;
            let _ = std::fs::remove_dir_all(&crate_dir);
            return Ok(out);
        }
        if keep {
            std::fs::create_dir_all(crate_dir.join("cl"))?;
        }
        std::fs::create_dir_all(&crate_dir)?;
        let t = Instant::now();
        let outcome = runner::Run {
            exe: &exe,
            seed: self.cli.seed,
            jobs: self.jobs.min(live.len()).max(1),
            timeout: Duration::from_secs(self.cli.timeout),
            extra,
            log_dir: crate_dir.clone(),
            source_dir: keep.then(|| crate_dir.join("cl")),
        }
        .run()?;
        out.run = t.elapsed();
        out.records.extend(outcome.records);
        out.millis = outcome.millis;
        if !keep && self.cli.prebuilt.is_none() {
            let _ = std::fs::remove_dir_all(&crate_dir);
            let _ = std::fs::remove_file(&exe);
        }
        Ok(out)
    }

    /// Shrinks `st`, which diverged as `target` says, to the smallest stencil that still does.
    fn shrink(&self, st: &Stencil, target: &Record) -> Result<(Stencil, Record)> {
        let mut best = (st.clone(), target.clone());
        let mut extra = Vec::new();
        if target.config != "process" {
            extra.extend(["--only-config".to_string(), target.config.clone()]);
        }
        if let Some(i) = harness::shapes(st.rank)
            .iter()
            .position(|s| s.to_string() == target.shape)
        {
            extra.extend(["--only-shape".to_string(), i.to_string()]);
        }
        let mut next_id = 1_000_000 * (st.id + 1);
        for round in 0..self.cli.shrink_rounds {
            let mut cands = shrink::candidates(&best.0, 40);
            if cands.is_empty() {
                break;
            }
            for c in &mut cands {
                c.id = next_id;
                c.input_id = st.input_id;
                next_id += 1;
            }
            let b = self.batch(&format!("shrink-{}", st.id), &cands, extra.clone(), false)?;
            let same = |r: &&Record| r.kind == target.kind && (r.config == target.config || target.config == "process");
            let found = cands
                .iter()
                .filter_map(|c| b.records.iter().find(|r| r.id == c.id).filter(same).map(|r| (c, r)))
                .min_by_key(|(c, _)| c.size());
            match found {
                Some((c, r)) => {
                    eprintln!("  shrink round {round}: {} -> {} nodes", best.0.size(), c.size());
                    best = (c.clone(), r.clone());
                }
                None => break,
            }
        }
        Ok(best)
    }
}

/// Each divergent stencil of a batch with its source and what differed, as the batch ends.
fn report(records: &[Record], batch: &[Stencil], seed: u64) {
    let mut by_id: BTreeMap<u64, Vec<&Record>> = BTreeMap::new();
    for r in records {
        by_id.entry(r.id).or_default().push(r);
    }
    for (id, rs) in &by_id {
        let Some(st) = batch.iter().find(|s| s.id == *id) else {
            continue;
        };
        let kinds: std::collections::BTreeSet<String> =
            rs.iter().map(|r| format!("{} in {}", r.kind, r.config)).collect();
        println!(
            "==== divergence: stencil {id} of seed {seed}: {}",
            kinds.into_iter().collect::<Vec<_>>().join(", ")
        );
        println!("{}", show_stencil(st));
        for (r, configs, shapes) in dedup(rs) {
            println!(
                "-- {} in {} on {}\n{}",
                r.kind,
                configs.join(", "),
                shapes.join(", "),
                r.text.trim_end()
            );
        }
        println!(
            "reproduce: cargo run -p clforge-difftest -- --seed {seed} --first {id} --count 1 --keep [--shrink 1]\n"
        );
    }
}

/// A stencil's records, one per distinct failure: a device build error once with every
/// configuration and shape it happened in, a mismatch once per configuration (its first shape).
fn dedup<'a>(rs: &[&'a Record]) -> Vec<(&'a Record, Vec<String>, Vec<String>)> {
    let mut out: Vec<(String, &Record, Vec<String>, Vec<String>)> = Vec::new();
    for r in rs {
        let key = match r.kind.as_str() {
            // The first line names the configuration; the build log after it is the same.
            "device-error" => format!("{}{}", r.kind, r.text.split_once('\n').map_or("", |(_, t)| t)),
            _ => format!("{}/{}", r.kind, r.config),
        };
        match out.iter_mut().find(|(k, ..)| *k == key) {
            Some((_, _, configs, shapes)) => {
                if !configs.contains(&r.config) {
                    configs.push(r.config.clone());
                }
                if !shapes.contains(&r.shape) {
                    shapes.push(r.shape.clone());
                }
            }
            None => out.push((key, r, vec![r.config.clone()], vec![r.shape.clone()])),
        }
    }
    out.into_iter().map(|(_, r, c, s)| (r, c, s)).collect()
}

/// A coarse signature of a divergence, to group stencils that likely share a cause: the first
/// compiler error of a build failure, else the kind, the configuration and the output type.
fn signature(r: &Record, st: &Stencil) -> String {
    match r.kind.as_str() {
        "device-error" | "rejected" | "generator" | "host-panic" => format!("{}: {}", r.kind, first_error(&r.text)),
        "crash" | "hang" => r.kind.clone(),
        _ => {
            let variant = r.config.split('-').next().unwrap_or_default();
            format!("{} in {variant}, output {}", r.kind, st.out.rust())
        }
    }
}

/// The first error line of a compiler's output without its location and qualifiers:
/// `error: src/s000012.rs:8:87 <Spelling=...>: call to '_cl_min' is ambiguous` ->
/// `error: call to '_cl_min' is ambiguous`.
fn first_error(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("error"))
        .unwrap_or_else(|| text.lines().next().unwrap_or_default());
    let mut s = line.trim().to_string();
    while let Some(a) = s.find("<Spelling") {
        match s[a..].find('>') {
            Some(b) => s.replace_range(a..=a + b, ""),
            None => break,
        }
    }
    while let Some(a) = s.find(" (aka '") {
        match s[a + 7..].find("')") {
            Some(b) => s.replace_range(a..a + 7 + b + 2, ""),
            None => break,
        }
    }
    for q in ["const __private ", "const __constant ", "const __global "] {
        s = s.replace(q, "");
    }
    let words: Vec<&str> = s.split_whitespace().filter(|w| !w.contains(".rs:")).collect();
    words.join(" ").replace(" :", "")
}

/// Shrinking order of classes: wrong values first (the silent bugs), then everything else.
fn priority(signature: &str) -> u8 {
    match signature.split([' ', ':']).next().unwrap_or_default() {
        "value" | "nan" | "zero-sign" => 0,
        "crash" | "hang" => 1,
        _ => 2,
    }
}

fn build_record(id: u64, kind: &str, errs: &[String]) -> Record {
    Record {
        id,
        kind: kind.to_string(),
        config: "build".to_string(),
        shape: String::new(),
        text: errs.join("\n"),
    }
}

/// The stencil part of a generated module (without the difftest driver).
fn show_stencil(s: &Stencil) -> String {
    s.source(false)
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let dir = cli.dir.clone().unwrap_or_else(|| repo().join("target/difftest"));
    let jobs = cli
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let ids: Vec<u64> = if cli.ids.is_empty() {
        (cli.first..cli.first + cli.count).collect()
    } else {
        cli.ids.clone()
    };
    if cli.print {
        for &id in &ids {
            println!(
                "// stencil {id} of seed {}\n{}",
                cli.seed,
                show_stencil(&gen::stencil(cli.seed, id))
            );
        }
        return Ok(());
    }
    std::fs::create_dir_all(&dir)?;
    let t = Tester {
        target: dir.join("target"),
        dir,
        jobs,
        cli,
    };
    let started = Instant::now();
    let mut stencils: BTreeMap<u64, Stencil> = BTreeMap::new();
    let mut records: Vec<Record> = Vec::new();
    let mut millis: BTreeMap<u64, u64> = BTreeMap::new();
    let (mut build, mut run) = (Duration::ZERO, Duration::ZERO);
    for (b, chunk) in ids.chunks(t.cli.batch.max(1) as usize).enumerate() {
        let batch: Vec<Stencil> = chunk.iter().map(|&id| gen::stencil(t.cli.seed, id)).collect();
        let out = t.batch(&format!("gen-{}", chunk[0]), &batch, Vec::new(), t.cli.keep)?;
        eprintln!(
            "batch {b}: stencils {}..={}: build {:.1} s, run {:.1} s, {} divergent",
            chunk[0],
            chunk[chunk.len() - 1],
            out.build.as_secs_f64(),
            out.run.as_secs_f64(),
            out.records
                .iter()
                .map(|r| r.id)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        );
        report(&out.records, &batch, t.cli.seed);
        build += out.build;
        run += out.run;
        records.extend(out.records);
        millis.extend(out.millis);
        stencils.extend(batch.into_iter().map(|s| (s.id, s)));
    }

    let mut by_id: BTreeMap<u64, Vec<&Record>> = BTreeMap::new();
    for r in &records {
        by_id.entry(r.id).or_default().push(r);
    }
    let seed = t.cli.seed;
    // Classes: stencils grouped by a coarse signature of their first divergence.
    let mut classes: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (id, rs) in &by_id {
        classes.entry(signature(rs[0], &stencils[id])).or_default().push(*id);
    }
    if !classes.is_empty() {
        println!("==== divergence classes (signature: stencils)");
        for (sig, ids) in &classes {
            let shown: Vec<String> = ids.iter().take(8).map(|i| i.to_string()).collect();
            let more = if ids.len() > 8 { " ..." } else { "" };
            println!("{:5}  {sig}: {}{more}", ids.len(), shown.join(" "));
        }
        println!();
    }
    // Shrink the first stencil of each class (up to --shrink of them), wrong values first.
    let mut order: Vec<(&String, &Vec<u64>)> = classes.iter().collect();
    order.sort_by_key(|(sig, _)| priority(sig));
    let mut shrunk = 0;
    for (_, ids) in order {
        let id = &ids[0];
        let rs = &by_id[id];
        if shrunk >= t.cli.shrink || t.cli.prebuilt.is_some() {
            break;
        }
        let Some(target) = rs
            .iter()
            .find(|r| !matches!(r.kind.as_str(), "rejected" | "generator" | "host-panic"))
        else {
            continue;
        };
        shrunk += 1;
        eprintln!("shrinking stencil {id} ({} in {})", target.kind, target.config);
        let (small, r) = t.shrink(&stencils[id], target)?;
        // Once more on its own, kept: `repro-<id>/` holds the crate and `cl/` the OpenCL.
        let name = format!("repro-{id}");
        t.batch(&name, std::slice::from_ref(&small), Vec::new(), true)?;
        let mut small = small;
        small.id = *id;
        println!(
            "==== minimal reproduction of stencil {id} ({} nodes, from {}): {} in {}",
            small.size(),
            stencils[id].size(),
            r.kind,
            r.config
        );
        println!("{}", show_stencil(&small));
        println!("-- {} in {} on {}\n{}", r.kind, r.config, r.shape, r.text.trim_end());
        println!("(crate and generated OpenCL: {})\n", t.dir.join(&name).display());
    }

    let mut per_kind: BTreeMap<&str, usize> = BTreeMap::new();
    for rs in by_id.values() {
        let kinds: std::collections::BTreeSet<&str> = rs.iter().map(|r| r.kind.as_str()).collect();
        for k in kinds {
            *per_kind.entry(k).or_default() += 1;
        }
    }
    let mean_ms = if millis.is_empty() {
        0.0
    } else {
        millis.values().sum::<u64>() as f64 / millis.len() as f64
    };
    let kinds_text = if per_kind.is_empty() {
        "none".to_string()
    } else {
        per_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    eprintln!(
        "difftest: {} stencils (seed {seed}, first {}), {} divergent [{kinds_text}]; build {:.0} s, run {:.0} s \
         ({mean_ms:.0} ms per stencil in the harness), total {:.0} s",
        ids.len(),
        ids.first().copied().unwrap_or(t.cli.first),
        by_id.len(),
        build.as_secs_f64(),
        run.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    if let Some(path) = &t.cli.summary {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        writeln!(
            f,
            "| {} | {} | {seed} | {} | {} | {kinds_text} | {:.0} s |",
            ids.len(),
            ids.first().copied().unwrap_or(t.cli.first),
            harness_device(),
            by_id.len(),
            started.elapsed().as_secs_f64()
        )?;
    }
    if !by_id.is_empty() {
        std::process::exit(1);
    }
    Ok(())
}

/// The OpenCL device the harness runs on, in words.
fn harness_device() -> String {
    match clforge::prelude::Device::default() {
        Ok(d) => format!("{d:?}"),
        Err(e) => format!("no device ({e})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiler_errors_lose_their_locations() {
        let log = "LaunchConfig { .. }: failed to build\nerror: src/s000012.rs:8:87 <Spelling=/x/_builtin_renames.h:140:24>: call to '_cl_min' is ambiguous\n";
        assert_eq!(first_error(log), "error: call to '_cl_min' is ambiguous");
        let log = "error: src/s1.rs:3:4: requested shift is a vector of type 'uint8' but the first operand is not a vector ('const __private uint' (aka 'const __private unsigned int'))";
        assert_eq!(
            first_error(log),
            "error: requested shift is a vector of type 'uint8' but the first operand is not a vector ('uint')"
        );
    }
}
