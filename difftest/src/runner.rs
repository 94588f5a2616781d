//! Running a generated crate's binary: `jobs` processes, each a shard of the stencils, read
//! line by line. A process that dies or falls silent inside a stencil is recorded as a crash
//! or a hang of that stencil and restarted after it.

use anyhow::{bail, Result};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// One divergence as the harness (or the runner) reported it.
#[derive(Clone, Debug)]
pub struct Record {
    pub id: u64,
    /// `value`, `nan`, `zero-sign`, `device-error`, `host-panic`, `crash`, `hang`,
    /// `rejected`, `generator`.
    pub kind: String,
    /// The configuration's label (`vector`, `steps-3-8x8x2`), or `build` / `process`.
    pub config: String,
    pub shape: String,
    pub text: String,
}

/// What a run reported: divergences, and the milliseconds each finished stencil took.
#[derive(Debug, Default)]
pub struct Outcome {
    pub records: Vec<Record>,
    pub millis: BTreeMap<u64, u64>,
}

pub struct Run<'a> {
    pub exe: &'a Path,
    pub seed: u64,
    pub jobs: usize,
    pub timeout: Duration,
    /// More harness arguments (`--ids`, `--only-config`, ...).
    pub extra: Vec<String>,
    /// Where each shard's stderr goes.
    pub log_dir: PathBuf,
    /// Where the harness writes each stencil's OpenCL source (`--keep`).
    pub source_dir: Option<PathBuf>,
}

impl Run<'_> {
    pub fn run(&self) -> Result<Outcome> {
        let results: Vec<Result<Outcome>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..self.jobs).map(|k| s.spawn(move || self.shard(k))).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| bail!("a runner thread panicked")))
                .collect()
        });
        let mut all = Outcome::default();
        for r in results {
            let r = r?;
            all.records.extend(r.records);
            all.millis.extend(r.millis);
        }
        all.records.sort_by_key(|r| r.id);
        Ok(all)
    }

    fn shard(&self, k: usize) -> Result<Outcome> {
        let mut out = Outcome::default();
        let mut after: Option<u64> = None;
        let log = self.log_dir.join(format!("stderr-{k}.log"));
        loop {
            let mut cmd = Command::new(self.exe);
            cmd.arg("--seed")
                .arg(self.seed.to_string())
                .arg("--shard")
                .arg(format!("{k}/{}", self.jobs))
                .args(&self.extra)
                // Random programs would fill PoCL's kernel cache.
                .env("POCL_KERNEL_CACHE", "0")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(std::fs::File::create(&log)?);
            if let Some(d) = &self.source_dir {
                cmd.env("DIFFTEST_SOURCE_DIR", d);
            }
            if let Some(a) = after {
                cmd.arg("--after").arg(a.to_string());
            }
            let mut child = cmd.spawn()?;
            let stdout = child.stdout.take().expect("piped stdout");
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            let mut current: Option<u64> = None;
            let mut hung = false;
            loop {
                match rx.recv_timeout(self.timeout) {
                    Ok(line) => {
                        let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
                            continue;
                        };
                        let id = v["id"].as_u64().unwrap_or(0);
                        match v["event"].as_str() {
                            Some("start") => current = Some(id),
                            Some("done") => {
                                current = None;
                                out.millis.insert(id, v["ms"].as_u64().unwrap_or(0));
                            }
                            Some("mismatch") => out.records.push(Record {
                                id,
                                kind: v["kind"].as_str().unwrap_or("value").to_string(),
                                config: v["config"].as_str().unwrap_or_default().to_string(),
                                shape: v["shape"].as_str().unwrap_or_default().to_string(),
                                text: v["text"].as_str().unwrap_or_default().to_string(),
                            }),
                            _ => {}
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        let _ = child.kill();
                        hung = true;
                        break;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
            let status = child.wait()?;
            let Some(id) = current else {
                if status.success() {
                    return Ok(out);
                }
                bail!(
                    "the harness failed outside any stencil ({status}); see {}",
                    log.display()
                );
            };
            let stderr = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            let (kind, what) = if hung {
                ("hang", format!("no progress for {:?}", self.timeout))
            } else {
                ("crash", format!("the process ended with {status}"))
            };
            out.records.push(Record {
                id,
                kind: kind.to_string(),
                config: "process".to_string(),
                shape: String::new(),
                text: format!("{what} inside this stencil; stderr ends:\n{}\n", tail.join("\n")),
            });
            after = Some(id);
        }
    }
}
