//! A no-panic property test of the expansion functions: every input, valid, mutated
//! or generated, expands to Rust that parses or to a `compile_error!` with a span; never a
//! panic, never a crash. The inputs are the stencils, elements and `Params` structs of the repo
//! (read from the files at test time), token-level mutations of them, and bodies generated from
//! the stencil and element grammars; a few hand-built deep nestings test the stack.
//!
//! `cargo test -p clforge-macros fuzz` runs `DEFAULT_CASES`. The long run (docs/SEMANTICS.md),
//! in the dev profile, whose overflow checks are those of the macro as cargo builds it:
//! `CLFORGE_FUZZ_CASES=100000 CLFORGE_FUZZ_SEED=2026 cargo test -p clforge-macros fuzz::expansion`.
//! A failure prints the seed, the case and its input; `CLFORGE_FUZZ_CASE=n` reruns one case and
//! prints it; `CLFORGE_FUZZ_TRACE=1` names each case before it runs (a stack overflow aborts).

use crate::{driver, kind};
use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use rand::rngs::SmallRng;
use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod deep;
mod element_gen;
mod mutate;
mod regressions;
mod seeds;
mod stencil_gen;

use deep::*;
use element_gen::*;
use mutate::*;
use seeds::*;
use stencil_gen::*;

/// Cases of a plain `cargo test`: about ten seconds in the dev profile.
const DEFAULT_CASES: u64 = 5000;
const DEFAULT_SEED: u64 = 0xC1F0_5EED;
/// The fuzz thread's stack: half the 8 MiB of rustc's thread, where proc macros run, so that a
/// pass leaves a margin for rustc's own frames.
const STACK: usize = 4 << 20;
/// Cases per fuzz thread: proc_macro2 keeps the text of every parsed input for span locations
/// in a thread-local map, so a fresh thread now and then keeps the memory flat.
const CHUNK: u64 = 2000;
const THREAD: &str = "clforge-fuzz";
/// A case that runs longer is as good as a hung compiler: a failure (the slowest legitimate
/// inputs take under a second in the dev profile).
const HANG: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------------
// Inputs and the property

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    Stencil,
    Element,
    Params,
    Sweep,
    Lattice,
}

/// One invocation: the attribute's arguments and the item, as text (what a failure prints).
#[derive(Clone, Debug)]
struct Input {
    target: Target,
    attr: String,
    item: String,
}

impl Input {
    fn new(target: Target, attr: impl Into<String>, item: impl Into<String>) -> Input {
        Input {
            target,
            attr: attr.into(),
            item: item.into(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// Expanded code that parses as Rust.
    Code,
    /// A `compile_error!` with a span.
    Error,
    /// Text that does not lex, or no item: rustc never calls the macro with those.
    Skipped,
}

thread_local! {
    /// The last panic of this fuzz thread, recorded by the hook: location and message.
    static PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Runs the macro on one input and checks the property; `Err` says how it was broken.
fn check(input: &Input) -> Result<Verdict, String> {
    outcome(input).map(|(v, _)| v)
}

/// [`check`] with the expansion.
fn outcome(input: &Input) -> Result<(Verdict, TokenStream), String> {
    let (Ok(attr), Ok(item)) = (TokenStream::from_str(&input.attr), TokenStream::from_str(&input.item)) else {
        return Ok((Verdict::Skipped, TokenStream::new()));
    };
    if item.is_empty() {
        return Ok((Verdict::Skipped, TokenStream::new()));
    }
    PANIC.with(|p| p.borrow_mut().take());
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let out = match input.target {
            Target::Stencil => driver::run::<kind::Stencil>(attr.clone(), item.clone()),
            Target::Element => driver::run::<kind::Element>(attr.clone(), item.clone()),
            Target::Params => driver::derive_params(item.clone()),
            Target::Sweep => driver::run::<kind::Sweep>(attr.clone(), item.clone()),
            Target::Lattice => driver::run::<kind::Lattice>(attr.clone(), item.clone()),
        };
        judge(input.target, attr, item, out.clone()).map(|v| (v, out))
    }));
    match run {
        Ok(r) => r,
        Err(_) => Err(format!(
            "panicked at {}",
            PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_else(|| "an unknown place".into())
        )),
    }
}

/// Code that parses, or errors that each have a message and a span. An error may sit at the
/// call site (the attribute) only when the attribute's arguments are what is wrong.
fn judge(target: Target, attr: TokenStream, item: TokenStream, out: TokenStream) -> Result<Verdict, String> {
    let errors = compile_errors(out.clone());
    if errors.is_empty() {
        return match syn::parse2::<syn::File>(out) {
            Ok(_) => Ok(Verdict::Code),
            Err(e) => Err(format!("expanded code does not parse: {e}")),
        };
    }
    // The call site is the attribute: right for errors in its arguments. rustc derives only on
    // items that parse; syn's error for others sits at the call site too.
    let call_site_ok = || match target {
        Target::Stencil => syn::parse2::<crate::parse::attr::StencilArgs>(attr.clone()).is_err(),
        Target::Element => syn::parse2::<crate::parse::element::ElementArgs>(attr.clone()).is_err(),
        Target::Sweep => syn::parse2::<crate::parse::attr::SweepArgs>(attr.clone()).is_err(),
        Target::Lattice => syn::parse2::<crate::parse::attr::LatticeArgs>(attr.clone()).is_err(),
        Target::Params => crate::diag::nesting(&item).is_ok() && syn::parse2::<syn::DeriveInput>(item.clone()).is_err(),
    };
    for (span, msg) in errors {
        if msg.trim().is_empty() {
            return Err("an error without a message".into());
        }
        if msg.contains("internal error") {
            return Err(format!("an internal error: {msg}"));
        }
        if span.byte_range() == (0..0) && !call_site_ok() {
            return Err(format!("an error without a span: {msg}"));
        }
    }
    Ok(Verdict::Error)
}

/// The `compile_error!`s of an expansion: the span of each and its message.
fn compile_errors(out: TokenStream) -> Vec<(proc_macro2::Span, String)> {
    let mut found = Vec::new();
    let mut stack: Vec<Vec<TokenTree>> = vec![out.into_iter().collect()];
    while let Some(tokens) = stack.pop() {
        for (i, t) in tokens.iter().enumerate() {
            match t {
                TokenTree::Group(g) => stack.push(g.stream().into_iter().collect()),
                TokenTree::Ident(id) if id == "compile_error" => {
                    let msg = tokens[i..]
                        .iter()
                        .find_map(|t| match t {
                            TokenTree::Group(g) => g.stream().into_iter().find_map(|t| match t {
                                TokenTree::Literal(l) => syn::parse_str::<syn::LitStr>(&l.to_string()).ok(),
                                _ => None,
                            }),
                            _ => None,
                        })
                        .map(|l| l.value())
                        .unwrap_or_default();
                    found.push((id.span(), msg));
                }
                _ => {}
            }
        }
    }
    found
}

// ---------------------------------------------------------------------------------------------
// The run

struct Config {
    cases: u64,
    seed: u64,
    only: Option<u64>,
    trace: bool,
}

impl Config {
    fn from_env() -> Config {
        let var = |name: &str| {
            std::env::var(name).ok().map(|v| {
                let v = v.replace('_', "");
                match v.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16),
                    None => v.parse(),
                }
                .unwrap_or_else(|_| panic!("{name} must be a number"))
            })
        };
        Config {
            cases: var("CLFORGE_FUZZ_CASES").unwrap_or(DEFAULT_CASES),
            seed: var("CLFORGE_FUZZ_SEED").unwrap_or(DEFAULT_SEED),
            only: var("CLFORGE_FUZZ_CASE"),
            trace: std::env::var_os("CLFORGE_FUZZ_TRACE").is_some(),
        }
    }
}

/// A broken case, kept per kind of failure (the smallest input of each).
struct Failure {
    case: u64,
    input: Input,
    what: String,
}

#[derive(Default)]
struct Tally {
    /// Cases per target and verdict.
    verdicts: BTreeMap<(Target, &'static str), u64>,
    failures: BTreeMap<String, (u64, Failure)>,
    slowest: (Duration, u64),
}

impl Tally {
    fn record(&mut self, case: u64, input: Input, result: Result<Verdict, String>, took: Duration) {
        if took > self.slowest.0 {
            self.slowest = (took, case);
        }
        let target = input.target;
        let name = match result {
            Ok(Verdict::Code) => "code",
            Ok(Verdict::Error) => "error",
            Ok(Verdict::Skipped) => "skipped",
            Err(what) => {
                // One entry per place: a panic's location, or the broken rule's first words.
                let key = what.split_once(" at ").map_or_else(
                    || what.chars().take(40).collect(),
                    |(_, at)| at.split(':').take(2).collect(),
                );
                let size = input.attr.len() + input.item.len();
                let entry = self.failures.entry(key).or_insert((
                    0,
                    Failure {
                        case,
                        input: input.clone(),
                        what: what.clone(),
                    },
                ));
                entry.0 += 1;
                if size < entry.1.input.attr.len() + entry.1.input.item.len() {
                    entry.1 = Failure { case, input, what };
                }
                "broken"
            }
        };
        *self.verdicts.entry((target, name)).or_default() += 1;
    }
}

/// What a fuzz thread is running and since when, for the watchdog.
#[derive(Clone, Default)]
struct Progress(Arc<Mutex<Option<(String, Instant)>>>);

impl Progress {
    fn start(&self, what: String) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some((what, Instant::now()));
    }

    /// What has run longer than `limit`, if anything.
    fn stuck(&self, limit: Duration) -> Option<String> {
        let now = self.0.lock().unwrap_or_else(|e| e.into_inner());
        now.as_ref()
            .filter(|(_, since)| since.elapsed() > limit)
            .map(|(what, _)| what.clone())
    }
}

/// Runs `f` on a thread named [`THREAD`] with [`STACK`], with panics recorded in [`PANIC`]
/// instead of printed (the previous hook is restored after). A step of `f` that runs longer
/// than [`HANG`] is a failure too: `Err` is what it said it started (the thread is left behind).
fn on_fuzz_thread<T: Send + 'static>(f: impl FnOnce(&Progress) -> T + Send + 'static) -> Result<T, String> {
    type Hook = dyn Fn(&std::panic::PanicHookInfo<'_>) + Send + Sync;
    static HOOK: Mutex<usize> = Mutex::new(0);
    let installed = {
        let mut users = HOOK.lock().unwrap_or_else(|e| e.into_inner());
        *users += 1;
        if *users == 1 {
            let previous: Arc<Hook> = Arc::from(std::panic::take_hook());
            let keep = previous.clone();
            std::panic::set_hook(Box::new(move |info| {
                if std::thread::current().name() == Some(THREAD) {
                    let msg = info
                        .payload()
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| info.payload().downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    let at = info
                        .location()
                        .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                    PANIC.with(|p| *p.borrow_mut() = Some(format!("{}: {msg}", at.unwrap_or_default())));
                } else {
                    keep(info)
                }
            }));
            Some(previous)
        } else {
            None
        }
    };
    let progress = Progress::default();
    let watched = progress.clone();
    let handle = std::thread::Builder::new()
        .name(THREAD.into())
        .stack_size(STACK)
        .spawn(move || f(&watched))
        .expect("spawn the fuzz thread");
    let result = loop {
        if handle.is_finished() {
            break Ok(handle.join());
        }
        if let Some(what) = progress.stuck(HANG) {
            break Err(what);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut users = HOOK.lock().unwrap_or_else(|e| e.into_inner());
    *users -= 1;
    if let Some(previous) = installed {
        // The last user puts the previous hook back (a test thread may still be inside).
        while *users > 0 {
            drop(users);
            std::thread::sleep(Duration::from_millis(10));
            users = HOOK.lock().unwrap_or_else(|e| e.into_inner());
        }
        let _ = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| previous(info)));
    }
    result.map(|r| r.unwrap_or_else(|e| std::panic::resume_unwind(e)))
}

fn report(seed: u64, tally: &Tally) -> String {
    let mut s = String::new();
    for (n, f) in tally.failures.values() {
        s += &format!(
            "\n--- {} ({n} case(s)); smallest: case {} \
             (rerun: CLFORGE_FUZZ_SEED={seed:#x} CLFORGE_FUZZ_CASE={} cargo test -p clforge-macros fuzz::expansion)\n\
             target: {:?}\nattr: {}\nitem:\n{}\n",
            f.what, f.case, f.case, f.input.target, f.input.attr, f.input.item
        );
    }
    s
}

#[test]
fn expansion_never_panics() {
    let cfg = Config::from_env();
    let seeds = Arc::new(seeds());
    assert!(
        seeds.iter().filter(|s| s.target == Target::Stencil).count() >= 10
            && seeds.iter().filter(|s| s.target == Target::Element).count() >= 5
            && seeds.iter().filter(|s| s.target == Target::Params).count() >= 3,
        "the seeds were not found: {} inputs read from the repository",
        seeds.len()
    );
    let cases: Vec<u64> = match cfg.only {
        Some(n) => vec![n],
        None => (0..cfg.cases).collect(),
    };
    let start = Instant::now();
    let tally = Arc::new(Mutex::new(Tally::default()));
    let mut next = 0;
    while next < cases.len() {
        let chunk = cases[next..cases.len().min(next + CHUNK as usize)].to_vec();
        let (shared, seed, size) = (seeds.clone(), cfg.seed, chunk.len());
        let verbose = cfg.only.is_some();
        let trace = cfg.trace;
        let into = tally.clone();
        let run = on_fuzz_thread(move |progress| {
            for n in chunk {
                progress.start(n.to_string());
                let input = case(&shared, seed, n);
                if verbose {
                    eprintln!(
                        "target: {:?}\nattr: {}\nitem:\n{}",
                        input.target, input.attr, input.item
                    );
                }
                if trace {
                    // A stack overflow aborts the process: the last line names the case.
                    let _ = writeln!(std::io::stderr(), "clforge fuzz: case {n}");
                }
                let t = Instant::now();
                let result = check(&input);
                let took = t.elapsed();
                into.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .record(n, input, result, took);
            }
        });
        match run {
            Ok(()) => next += size,
            Err(hung) => {
                // Go on after the case that hangs, on a new thread.
                let n: u64 = hung.parse().expect("a case number");
                let what = format!("hangs: ran for more than {HANG:?}");
                let input = case(&seeds, cfg.seed, n);
                tally
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .record(n, input, Err(what), HANG);
                next = cases.iter().position(|&c| c == n).expect("a case of this run") + 1;
            }
        }
    }
    let tally = std::mem::take(&mut *tally.lock().unwrap_or_else(|e| e.into_inner()));
    eprintln!(
        "clforge fuzz: {} case(s) of seed {:#x} in {:.1?}: {:?}; slowest case {} ({:.1?})",
        cases.len(),
        cfg.seed,
        start.elapsed(),
        tally.verdicts,
        tally.slowest.1,
        tally.slowest.0
    );
    assert!(tally.failures.is_empty(), "{}", report(cfg.seed, &tally));
    if cfg.only.is_none() {
        // The generators must reach the back end, not only the parser's errors.
        // Sweeps and lattice rules have fewer seeds in the repository: 1 in 500 must expand.
        for (target, per) in [
            (Target::Stencil, 100),
            (Target::Element, 100),
            (Target::Params, 100),
            (Target::Sweep, 500),
            (Target::Lattice, 500),
        ] {
            let code = tally.verdicts.get(&(target, "code")).copied().unwrap_or(0);
            assert!(
                code * per >= cases.len() as u64,
                "too few inputs expand: {:?}",
                tally.verdicts
            );
        }
    }
}
