//! Building a generated crate, and attributing its compile errors to stencils: an error in
//! `src/sNNNNNN.rs` whose control copy compiles means the macro rejected valid Rust; an
//! error in the control copy means the generator wrote invalid Rust.

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What a failed build says about each stencil.
#[derive(Debug, Default)]
pub struct BuildErrors {
    /// Stencil id -> rendered errors in its module (the macro's input or expansion).
    pub stencil: BTreeMap<u64, Vec<String>>,
    /// Stencil id -> rendered errors in its control copy (the generator's fault).
    pub control: BTreeMap<u64, Vec<String>>,
    /// Stencil id -> errors in the difftest driver code of its module (the tester's fault).
    pub driver: BTreeMap<u64, Vec<String>>,
    /// Errors no stencil owns.
    pub other: Vec<String>,
}

impl BuildErrors {
    pub fn is_empty(&self) -> bool {
        self.stencil.is_empty() && self.control.is_empty() && self.driver.is_empty() && self.other.is_empty()
    }
}

/// The generated crate's binary after `cargo build`, or the errors by stencil.
/// `driver_line`: stencil id -> first line of the driver code in its module.
pub fn build(
    dir: &Path,
    target: &Path,
    driver_line: &BTreeMap<u64, usize>,
) -> Result<std::result::Result<PathBuf, BuildErrors>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .arg("build")
        .arg("--message-format=json")
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_TERM_COLOR", "never")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .output()
        .context("running cargo build for the generated crate")?;
    let mut errors = BuildErrors::default();
    let mut exe = None;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        match v["reason"].as_str() {
            Some("compiler-artifact") if v["target"]["name"] == "difftest-gen" => {
                if let Some(e) = v["executable"].as_str() {
                    exe = Some(PathBuf::from(e));
                }
            }
            Some("compiler-message") => {
                let m = &v["message"];
                if m["level"] != "error" {
                    continue;
                }
                let rendered = m["rendered"].as_str().unwrap_or_default().to_string();
                let spans = m["spans"].as_array().cloned().unwrap_or_default();
                if spans.is_empty() {
                    // "aborting due to N previous errors" and the like
                    if !rendered.contains("aborting due to") {
                        errors.other.push(rendered);
                    }
                    continue;
                }
                let primary = spans.iter().find(|s| s["is_primary"] == true).unwrap_or(&spans[0]);
                let file = primary["file_name"].as_str().unwrap_or_default();
                let line = primary["line_start"].as_u64().unwrap_or(0) as usize;
                match owner(file) {
                    Some((id, true)) => errors.control.entry(id).or_default().push(rendered),
                    Some((id, false)) if driver_line.get(&id).is_some_and(|&d| line >= d) => {
                        errors.driver.entry(id).or_default().push(rendered)
                    }
                    Some((id, false)) => errors.stencil.entry(id).or_default().push(rendered),
                    None => errors.other.push(rendered),
                }
            }
            _ => {}
        }
    }
    if out.status.success() {
        return match exe {
            Some(e) => Ok(Ok(e)),
            None => bail!("cargo build succeeded but named no executable"),
        };
    }
    if errors.is_empty() {
        errors.other.push(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(Err(errors))
}

/// `src/s000123.rs` -> (123, false), `src/control/s000123.rs` -> (123, true).
fn owner(file: &str) -> Option<(u64, bool)> {
    let control = file.contains("control/");
    let name = Path::new(file).file_stem()?.to_str()?;
    let id = name.strip_prefix('s')?.parse().ok()?;
    Some((id, control))
}
