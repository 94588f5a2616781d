//! A no-panic property test of the expansion functions (issue 8): every input, valid, mutated
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

// ---------------------------------------------------------------------------------------------
// Seeds: every stencil, element and `Params` struct of the repository

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs" || e == "md") {
            out.push(p);
        }
    }
}

/// The Rust of a file: the file itself, or the fenced Rust blocks of a markdown file.
fn sources(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    if path.extension().is_some_and(|e| e == "rs") {
        return vec![text];
    }
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let fence = line.trim_start().starts_with("```");
        match (&mut current, fence) {
            (None, true) if matches!(line.trim_start()[3..].trim(), "" | "rust" | "rust,ignore" | "ignore") => {
                current = Some(String::new())
            }
            (Some(_), true) => blocks.extend(current.take()),
            (Some(b), false) => {
                b.push_str(line);
                b.push('\n');
            }
            _ => {}
        }
    }
    blocks
}

fn seeds() -> Vec<Input> {
    let root = root();
    let mut files = Vec::new();
    for dir in ["tests", "examples", "bench/src", "src", "docs"] {
        rust_files(&root.join(dir), &mut files);
    }
    files.push(root.join("README.md"));
    let mut out = Vec::new();
    for f in &files {
        for text in sources(f) {
            if let Ok(file) = syn::parse_file(&text) {
                items(&file.items, &root, &mut out);
            }
        }
    }
    out.extend(CURATED.iter().map(|(t, a, i)| Input::new(*t, *a, *i)));
    out
}

/// Walks items (modules and function bodies too) for the annotated ones.
fn items(list: &[syn::Item], root: &Path, out: &mut Vec<Input>) {
    for item in list {
        let attrs = match item {
            syn::Item::Fn(f) => {
                let inner: Vec<syn::Item> = f
                    .block
                    .stmts
                    .iter()
                    .filter_map(|s| match s {
                        syn::Stmt::Item(i) => Some(i.clone()),
                        _ => None,
                    })
                    .collect();
                items(&inner, root, out);
                &f.attrs
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    items(inner, root, out);
                }
                &m.attrs
            }
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Union(u) => &u.attrs,
            _ => continue,
        };
        for (i, a) in attrs.iter().enumerate() {
            let last = a
                .path()
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            let target = match last.as_str() {
                "stencil" => Target::Stencil,
                "element" => Target::Element,
                "sweep" => Target::Sweep,
                "lattice" => Target::Lattice,
                "derive" if derives_params(a) => Target::Params,
                _ => continue,
            };
            let attr = match &a.meta {
                syn::Meta::List(l) if target != Target::Params => l.tokens.to_string(),
                _ => String::new(),
            };
            let mut item = item.clone();
            if target != Target::Params {
                item_attrs(&mut item).remove(i);
            }
            out.push(Input::new(
                target,
                relocate_templates(&attr, root),
                quote::quote!(#item).to_string(),
            ));
        }
    }
}

/// `#[derive(..., Params, ...)]`, with any path to `Params`.
fn derives_params(a: &syn::Attribute) -> bool {
    a.parse_args_with(syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
        .is_ok_and(|paths| {
            paths
                .iter()
                .any(|p| p.segments.last().is_some_and(|s| s.ident == "Params"))
        })
}

fn item_attrs(item: &mut syn::Item) -> &mut Vec<syn::Attribute> {
    match item {
        syn::Item::Fn(f) => &mut f.attrs,
        syn::Item::Mod(m) => &mut m.attrs,
        syn::Item::Struct(s) => &mut s.attrs,
        syn::Item::Enum(e) => &mut e.attrs,
        syn::Item::Union(u) => &mut u.attrs,
        _ => unreachable!("only the kinds `items` matched"),
    }
}

/// Template paths are relative to the annotated crate; the fuzzer runs in `macros/`, so a path
/// that names a file of the repository (after any leading `../`) is rewritten to reach it.
fn relocate_templates(attr: &str, root: &Path) -> String {
    let Ok(tokens) = TokenStream::from_str(attr) else {
        return attr.to_string();
    };
    tokens
        .into_iter()
        .map(|t| match &t {
            TokenTree::Literal(l) => match syn::parse_str::<syn::LitStr>(&l.to_string()) {
                Ok(s) => {
                    let v = s.value();
                    let rest = v.trim_start_matches("../");
                    if root.join(rest).is_file() {
                        format!("{:?}", format!("../{rest}"))
                    } else {
                        t.to_string()
                    }
                }
                Err(_) => t.to_string(),
            },
            _ => t.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Inputs the files may not hold: the stage tests' items and the corners of the grammar.
const CURATED: &[(Target, &str, &str)] = &[
    (
        Target::Lattice,
        "boundary = fixed",
        "fn walk(s: &Lattice1<f64>, rng: &Draws, k: &Coeffs) -> f64 {
            let u = rng.uniform(2) as f64;
            if rng.draw(0) % 2 == 1 { s.at(1) * k.a + u } else { s.at(-1) - s.at(0) * u }
        }",
    ),
    (
        Target::Lattice,
        "",
        "fn potts(q: &Lattice3<u32>, rng: &Draws, w: &Grid3<f32>, t: u32) -> u32 {
            let same = (q.at(1, 0, 0) == q.at(0, 0, 0)) as u32 + (q.at(0, 0, -1) == q.at(0, 0, 0)) as u32;
            if rng.draw(1) < t && w.at(0, 0, 0) > 0.5 { q.at(0, 1, 0) } else { q.at(0, 0, 0) + same }
        }",
    ),
    (
        Target::Stencil,
        "boundary = periodic",
        "fn f(u: &Grid1<f64>) -> f64 { let h = 0.5; h * (u.at(1) - 2.0 * u.at(0) + u.at(-1)) }",
    ),
    (
        Target::Stencil,
        "",
        "fn jacobi(psi: &Grid<f32>, w: &Grid<f32>, cell: &Grid<u8>, k: &Coeffs) -> f32 {
            match cell.at(0, 0) {
                FLUID => k.a * (psi.at(1, 0) + psi.at(-1, 0)) + k.b * (psi.at(0, 1) + psi.at(0, -1)) + k.c * w.at(0, 0),
                OUTFLOW | 3 => psi.at(-1, 0),
                _ => psi.at(0, 0),
            }
        }",
    ),
    (
        Target::Stencil,
        "boundary = clamp",
        "/// Doc with */ and ψ.
        pub(crate) fn mix(u: &Grid3<f32>, m: &Grid3<u8>, a: f32, n: i32, s: u32) -> f32 {
            let v: f32 = u.at(1, 0, 0).max(u.at(-1, 0, 0)).clamp(0.0, 1.0);
            let w = if m.at(0, 0, 1) == 1 && !(n > 2) { v.mul_add(a, 1e-3) } else { f32::sqrt(v.abs()) };
            let q = ((n << 2) ^ 3 | 1 & 7) as f32 + (s % 4u32) as f32 + (m.at(0, 0, 0) as i32 >> 1) as f32;
            { let z = w.powi(2).recip(); z * q - crate::C + u.at(0, 0, -2).hypot(w).atan2(2.0f32) }
        }",
    ),
    (
        Target::Stencil,
        "",
        "fn count(mask: &Grid<u8>) -> i32 { (mask.at(1, 0) as i32) + (mask.at(0, -1) as i32) % 3 - 7i32 }",
    ),
    (
        Target::Element,
        "dim = 2, nodes = 4, operator = diffusion, quadrature = 2, template = \"../examples/templates/strain_energy.cl.tera\"",
        "mod quad4 {
            pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];
            pub fn shape(r: f64, s: f64) -> [f64; 4] {
                [0.25 * (1.0 - r) * (1.0 - s), 0.25 * (1.0 + r) * (1.0 - s),
                 0.25 * (1.0 + r) * (1.0 + s), 0.25 * (1.0 - r) * (1.0 + s)]
            }
            pub fn material(k: &f64) -> [[f64; 2]; 2] { [[*k, 0.0], [0.0, *k]] }
            pub fn density(_k: &f64) -> f64 { 1.0 }
            extern \"OpenCL\" {
                fn strain_energy(k: &[f32], elem_nodes: &[i32], u: &[f32], energy: &mut [f32], volume: f32, count: i32);
            }
        }",
    ),
    (
        Target::Element,
        "dim = 1, nodes = 3, operator = diffusion, quadrature = 3",
        "pub mod bar3 {
            pub const NODES: [[f64; 1]; 3] = [[-1.0], [0.0], [1.0]];
            pub fn shape(r: f64) -> [f64; 3] { let a = 0.5 * r; [a * (r - 1.0), 1.0 - r.powi(2), a * (r + 1.0)] }
            pub fn material(k: &f64) -> [[f64; 1]; 1] { [[*k]] }
            pub fn density(k: &f64) -> f64 { *k }
        }",
    ),
    (
        Target::Params,
        "",
        "#[derive(Params)] #[repr(C)] pub struct K { pub a: f32, pub b: f64, pub c: i32, pub d: u32, pub e: u8 }",
    ),
    (Target::Params, "", "struct One { x: f32 }"),
];

// ---------------------------------------------------------------------------------------------
// Cases

/// Case `n` of `seed`: independent of every other case, so that one reruns alone.
fn case(seeds: &[Input], seed: u64, n: u64) -> Input {
    let mut rng = SmallRng::seed_from_u64(seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    if (n as usize) < seeds.len() {
        return seeds[n as usize].clone();
    }
    let mut input = match rng.random_range(0..100) {
        0..2 => return deep(&mut rng),
        2..45 => {
            let mut s = seeds.choose(&mut rng).expect("seeds").clone();
            let times = 1 + rng.random_range(0..4) * rng.random_range(0..3);
            mutate(&mut s, seeds, times, &mut rng);
            return s;
        }
        45..75 => gen_stencil(&mut rng),
        75..90 => gen_element(&mut rng),
        _ => gen_params(&mut rng),
    };
    if rng.random_bool(0.3) {
        let times = rng.random_range(1..4);
        mutate(&mut input, seeds, times, &mut rng);
    }
    input
}

// ---------------------------------------------------------------------------------------------
// Token-level mutations

#[derive(Clone)]
enum Tok {
    Leaf(TokenTree),
    Group(Delimiter, Vec<Tok>),
}

fn toks(ts: TokenStream) -> Vec<Tok> {
    ts.into_iter()
        .map(|t| match t {
            TokenTree::Group(g) => Tok::Group(g.delimiter(), toks(g.stream())),
            other => Tok::Leaf(other),
        })
        .collect()
}

fn stream(toks: &[Tok]) -> TokenStream {
    toks.iter()
        .map(|t| match t {
            Tok::Leaf(l) => l.clone(),
            Tok::Group(d, inner) => TokenTree::Group(Group::new(*d, stream(inner))),
        })
        .collect()
}

fn lex(s: &str) -> Vec<Tok> {
    toks(TokenStream::from_str(s).unwrap_or_else(|e| panic!("pool entry `{s}` does not lex: {e}")))
}

/// Every token list of the tree (the root and each group's contents), by path.
fn lists(toks: &[Tok], path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    out.push(path.clone());
    for (i, t) in toks.iter().enumerate() {
        if let Tok::Group(_, inner) = t {
            path.push(i);
            lists(inner, path, out);
            path.pop();
        }
    }
}

fn list_mut<'a>(mut toks: &'a mut Vec<Tok>, path: &[usize]) -> &'a mut Vec<Tok> {
    for &i in path {
        match &mut toks[i] {
            Tok::Group(_, inner) => toks = inner,
            Tok::Leaf(_) => unreachable!("paths lead through groups"),
        }
    }
    toks
}

/// Positions (list path, index) of the leaves that `pick` accepts.
fn leaves(toks: &[Tok], pick: &dyn Fn(&TokenTree) -> bool) -> Vec<(Vec<usize>, usize)> {
    let mut paths = Vec::new();
    lists(toks, &mut Vec::new(), &mut paths);
    let mut out = Vec::new();
    for p in paths {
        let mut list = toks;
        for &i in &p {
            if let Tok::Group(_, inner) = &list[i] {
                list = inner;
            }
        }
        for (i, t) in list.iter().enumerate() {
            if let Tok::Leaf(l) = t {
                if pick(l) {
                    out.push((p.clone(), i));
                }
            }
        }
    }
    out
}

/// Identifiers a mutation puts in place of one: keywords, raw identifiers, OpenCL keywords and
/// builtins, names the generated OpenCL and Rust use, non-ASCII and odd names.
#[rustfmt::skip]
const IDENTS: &[&str] = &[
    "fn", "let", "match", "if", "else", "as", "mut", "ref", "self", "Self", "super", "crate", "async", "await",
    "dyn", "impl", "move", "return", "loop", "for", "while", "in", "where", "type", "struct", "enum", "static",
    "const", "pub", "unsafe", "extern", "true", "false", "_", "r#yield", "r#match", "r#fn", "r#type", "r#async",
    "r#try", "r#u", "r#f32", "r#at", "r#abs", "r#Grid", "local", "global", "kernel", "half", "constant", "floor",
    "private", "float", "double", "int", "uint", "uchar", "sqrt", "select", "read_only", "restrict", "__kernel",
    "get_global_id", "__local", "real", "real8", "HX", "HY", "UX", "INTERIOR", "AT", "WRAP", "LOAD", "TILE_X",
    "STEPS", "DIM", "NODES", "ND", "c", "x", "y", "z", "t", "nx", "ny", "out_arg", "t_u", "k_", "match0", "p",
    "out", "shape", "config", "plan", "device", "params", "coords", "bytes", "decl", "spec", "source", "launch",
    "dshape", "material", "density", "thickness", "at", "abs", "powi", "powf", "mul_add", "clamp", "recip", "f32",
    "f64", "u8", "i32", "u32", "bool", "usize", "f16", "Grid", "Grid1", "Grid2", "Grid3", "Grid4", "Coeffs", "ψ",
    "δx", "ñ", "Ω", "_u", "__", "_1", "a1", "A", "ZZ", "x_p1", "u_1", "compile", "core", "std", "clforge",
];

/// Literals a mutation puts in place of one: extremes of every numeric form.
#[rustfmt::skip]
const LITERALS: &[&str] = &[
    "1e39", "1e-46", "0.0", "-0.0", "18446744073709551616", "255u8", "256u8", "4294967296u32", "1_000_000_000.25",
    "0x7fffffff", "0xffffffffu32", "0b1010", "0o777", "2147483647", "2147483648", "-2147483648",
    "9223372036854775807", "340282366920938463463374607431768211456", "1e308", "1e309f64", "3.4e38f32", "1f32",
    "2f64", "1.", "1E5", "0.1e-1_0", "7i64", "3usize", "1.5f16", "0", "1", "-1", "2", "16", "17", "'c'", "\"s\"",
    "b'x'", "b\"x\"", "r\"*/\"", "\"*/ ψ\"", "true", "false", "1u128", "1e", "0.", "1_f32",
];

/// Punctuation and short sequences a mutation puts in place of one.
#[rustfmt::skip]
const PUNCTS: &[&str] = &[
    "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", ">", "<=", ">=", "&&", "||", "!", "?", ":",
    ";", ",", ".", "..", "..=", "=", "+=", "@", "#", "$", "~", "::", "->", "=>", "'a", "&mut", "as f32", "as u8",
];

/// Fragments a mutation inserts: pieces of the grammar, doc comments, items.
const SNIPPETS: &[&str] = &[
    ".at(0, 0)",
    ".at(2147483647, 0)",
    ".at(-2147483648, 1)",
    ".at(9223372036854775807)",
    ".at(1, 2, 3, 4)",
    "as f32",
    "let x = 1.0;",
    "let c: u8 = 3;",
    "match u.at(0, 0) { 1 => 1.0, _ => 0.0 }",
    "if true { 1.0 } else { 0.0 }",
    "#[doc = \"*/ /* ψ \\u{7f}\"]",
    "/// */ ψ */",
    "/** */ */",
    "#[cfg(any())]",
    "#[inline]",
    "..",
    "::",
    "<f32>",
    "&mut",
    "extern \"OpenCL\" { fn k(u: &[f32], out: &mut [f32], n: i32); }",
    "extern \"OpenCL\" { fn r#yield(r#loop: &[f32]); }",
    "extern \"C\" { fn k(); }",
    "self",
    "?",
    ".await",
    "async {}",
    "unsafe { 1.0 }",
    "|x| x",
    "[1; 3]",
    "(1, 2)",
    "x[0]",
    "loop {}",
    "return 1.0",
    "const _: () = ();",
    "fn dshape() {}",
    "pub fn thickness(m: &f64) -> f64 { 1.0 }",
    "pub const NODES: [[f64; 2]; 1] = [[2.0, 0.0]];",
    "pub fn shape(r: f64) -> [f64; 1] { [1.0] }",
    "u.at(0, 0).powi(16).powi(16)",
    "r.powi(16).powi(16).powi(16)",
    "(1.0 + r).powi(16).powi(16).powi(16).powi(16).powi(16).powi(16).powi(16).powi(16)",
    "(r + s + t + 1.0).powi(16).powi(16)",
    "(1e309 * r - 1e309 * r)",
    "1e308 * 1e308 * (r * r - 1.0)",
    "1e307 * r.powi(16)",
    "f32::sqrt(1.0)",
    "f64::mul_add(1.0, 2.0, 3.0)",
    "k.0",
    "k.a.b",
    "std::f32::consts::PI",
    "<Self as T>::X",
    "1 ..= 2",
    "Some(x)",
    "x @ 1",
    "ref x",
    "mut x",
    "'a: loop {}",
    "'static",
    "dyn T",
    "impl T",
    "fn(f32) -> f32",
    "[f64; 18446744073709551616]",
    "[[f64; 0]; 0]",
    "&&Grid<f32>",
    "Grid<f32, f32>",
    "Grid<'a, f32>",
    "Grid<N = f32>",
    "Grid<{ 1 + 1 }>",
    "Grid::<f32>",
    "<Grid<f32> as T>::U",
];

/// Whole attributes, right and wrong.
const STENCIL_ATTRS: &[&str] = &[
    "",
    "boundary = fixed",
    "boundary = periodic",
    "boundary = clamp",
    "boundary = banana",
    "boundary = periodic, boundary = clamp",
    "boundary",
    "boundary =",
    "= periodic",
    "boundary = \"periodic\"",
    "boundary = r#periodic",
    "r#boundary = clamp",
    "boundary = periodic,",
    ",",
    "foo = bar",
    "boundary = periodic extra",
    "boundary: periodic",
    "(boundary = periodic)",
    "boundary = 1",
    "boundary = self",
    "boundary = ψ",
    "state = u",
    "state = psi",
    "state = k",
    "state = banana",
    "state = r#u",
    "state = 1",
    "boundary = periodic, state = u",
    "state = u, state = v",
    "state = u, boundary = clamp",
];

fn element_attr(rng: &mut SmallRng) -> String {
    let dim = [
        "1",
        "2",
        "3",
        "0",
        "4",
        "7",
        "-1",
        "2.0",
        "\"2\"",
        "18446744073709551616",
        "1e3",
        "0x2",
        "2usize",
        "2_i8",
    ];
    let nodes = ["2", "3", "4", "8", "9", "27", "0", "1", "64", "65", "1000000", "-4"];
    let quadrature = ["1", "2", "3", "6", "0", "7", "100000", "4294967296"];
    let operator = [
        "plane_stress",
        "plane_strain",
        "elasticity",
        "diffusion",
        "banana",
        "r#diffusion",
        "\"diffusion\"",
        "1",
    ];
    let dofs = ["1", "2", "3", "0", "6", "65"];
    let template = [
        "\"nope.tera\"",
        "\"\"",
        "\".\"",
        "\"..\"",
        "\"/\"",
        "\"../examples/templates/strain_energy.cl.tera\"",
        "\"../Cargo.toml\"",
        "\"/dev/zero\"",
        "\"/dev/stdin\"",
        "\"../tests/ui/template/templates/syntax_error.cl.tera\"",
        "\"../tests/ui/template/templates/unknown_field.cl.tera\"",
        "r\"../examples/templates/strain_energy.cl.tera\"",
        "b\"x\"",
        "strain_energy",
    ];
    let mut parts: Vec<String> = Vec::new();
    let mut kv = |key: &str, values: &[&str], rng: &mut SmallRng| {
        let v = if rng.random_bool(0.8) {
            values[..values.len().min(4)].choose(rng)
        } else {
            values.choose(rng)
        };
        parts.push(format!("{key} = {}", v.expect("values")));
    };
    for (key, values, p) in [
        ("dim", &dim[..], 0.95),
        ("nodes", &nodes[..], 0.95),
        ("operator", &operator[..], 0.95),
        ("quadrature", &quadrature[..], 0.95),
        ("dofs", &dofs[..], 0.2),
        ("template", &template[..], 0.1),
        ("banana", &dim[..], 0.02),
        ("dim", &dim[..], 0.02),
    ] {
        if rng.random_bool(p) {
            kv(key, values, rng);
        }
    }
    parts.shuffle(rng);
    parts.join(", ")
}

/// Applies `times` random mutations, to the item mostly and the attribute sometimes, and keeps
/// the result only if it still lexes (rustc would not call the macro otherwise).
fn mutate(input: &mut Input, seeds: &[Input], times: usize, rng: &mut SmallRng) {
    for _ in 0..times {
        if input.target != Target::Params && rng.random_bool(0.12) {
            input.attr = match input.target {
                Target::Stencil if rng.random_bool(0.6) => STENCIL_ATTRS.choose(rng).expect("attrs").to_string(),
                Target::Element if rng.random_bool(0.6) => element_attr(rng),
                _ => mutate_text(&input.attr, seeds, rng),
            };
        } else {
            input.item = mutate_text(&input.item, seeds, rng);
        }
    }
}

fn mutate_text(text: &str, seeds: &[Input], rng: &mut SmallRng) -> String {
    let Ok(ts) = TokenStream::from_str(text) else {
        return text.to_string();
    };
    let mut root = toks(ts);
    mutate_tokens(&mut root, seeds, rng);
    let out = stream(&root).to_string();
    if TokenStream::from_str(&out).is_ok() {
        out
    } else {
        text.to_string()
    }
}

fn mutate_tokens(root: &mut Vec<Tok>, seeds: &[Input], rng: &mut SmallRng) {
    let mut paths = Vec::new();
    lists(root, &mut Vec::new(), &mut paths);
    let path = paths.choose(rng).expect("the root").clone();
    let pick_leaf = |root: &mut Vec<Tok>, rng: &mut SmallRng, pred: &dyn Fn(&TokenTree) -> bool| {
        let found = leaves(root, pred);
        found.choose(rng).cloned()
    };
    let op = rng.random_range(0..16);
    match op {
        // Replace an identifier.
        0..3 => {
            if let Some((p, i)) = pick_leaf(root, rng, &|t| matches!(t, TokenTree::Ident(_))) {
                let new = lex(IDENTS.choose(rng).expect("idents"));
                list_mut(root, &p).splice(i..=i, new);
            }
        }
        // Replace a literal.
        3 | 4 => {
            if let Some((p, i)) = pick_leaf(root, rng, &|t| matches!(t, TokenTree::Literal(_))) {
                let new = lex(LITERALS.choose(rng).expect("literals"));
                list_mut(root, &p).splice(i..=i, new);
            }
        }
        // Replace a punctuation.
        5 => {
            if let Some((p, i)) = pick_leaf(root, rng, &|t| matches!(t, TokenTree::Punct(_))) {
                let new = lex(PUNCTS.choose(rng).expect("puncts"));
                list_mut(root, &p).splice(i..=i, new);
            }
        }
        // New offsets for a read: `at(...)`.
        6 => {
            let at = leaves(root, &|t| matches!(t, TokenTree::Ident(id) if id == "at"));
            if let Some((p, i)) = at.choose(rng).cloned() {
                let list = list_mut(root, &p);
                if let Some(Tok::Group(Delimiter::Parenthesis, args)) = list.get_mut(i + 1) {
                    let offsets = [
                        "0",
                        "1",
                        "-1",
                        "3",
                        "-7",
                        "2147483647",
                        "-2147483648",
                        "9223372036854775807",
                        "-9223372036854775807",
                        "18446744073709551615",
                        "4294967296",
                        "1_000_000",
                        "(-(-2))",
                        "0u8",
                        "1.0",
                        "i",
                    ];
                    let n = if rng.random_bool(0.8) {
                        args.iter().filter(|t| is_comma(t)).count() + 1
                    } else {
                        rng.random_range(0..5)
                    };
                    let text: Vec<&str> = (0..n).map(|_| *offsets.choose(rng).expect("offsets")).collect();
                    *args = lex(&text.join(", "));
                }
            }
        }
        _ => {
            let list = list_mut(root, &path);
            if list.is_empty() {
                list.extend(lex(SNIPPETS.choose(rng).expect("snippets")));
                return;
            }
            let i = rng.random_range(0..list.len());
            match op {
                7 => {
                    list.remove(i);
                }
                8 => {
                    let t = list[i].clone();
                    list.insert(i, t);
                }
                9 => {
                    let j = if rng.random_bool(0.5) {
                        (i + 1).min(list.len() - 1)
                    } else {
                        rng.random_range(0..list.len())
                    };
                    list.swap(i, j);
                }
                // Wrap a run of tokens in groups.
                10 => {
                    let j = rng.random_range(i..list.len()) + 1;
                    let mut inner: Vec<Tok> = list.drain(i..j).collect();
                    let delim = *[
                        Delimiter::Parenthesis,
                        Delimiter::Bracket,
                        Delimiter::Brace,
                        Delimiter::None,
                    ]
                    .choose(rng)
                    .expect("delims");
                    for _ in 0..rng.random_range(1..8) {
                        inner = vec![Tok::Group(delim, inner)];
                    }
                    list.splice(i..i, inner);
                }
                // Unwrap a group, or change its delimiter.
                11 => {
                    if let Tok::Group(d, inner) = list[i].clone() {
                        if rng.random_bool(0.5) {
                            list.splice(i..=i, inner);
                        } else {
                            let new = *[
                                Delimiter::Parenthesis,
                                Delimiter::Bracket,
                                Delimiter::Brace,
                                Delimiter::None,
                            ]
                            .iter()
                            .find(|x| **x != d)
                            .expect("another delimiter");
                            list[i] = Tok::Group(new, inner);
                        }
                    }
                }
                // Insert a fragment.
                12 | 13 => {
                    let new = lex(SNIPPETS.choose(rng).expect("snippets"));
                    list.splice(i..i, new);
                }
                // Cross over: a piece of another seed.
                _ => {
                    let other = seeds.choose(rng).expect("seeds");
                    if let Ok(ts) = TokenStream::from_str(&other.item) {
                        let other = toks(ts);
                        let mut paths = Vec::new();
                        lists(&other, &mut Vec::new(), &mut paths);
                        let p = paths.choose(rng).expect("the root");
                        let mut src = &other;
                        for &k in p {
                            if let Tok::Group(_, inner) = &src[k] {
                                src = inner;
                            }
                        }
                        if !src.is_empty() {
                            let a = rng.random_range(0..src.len());
                            let b = rng.random_range(a..src.len().min(a + 6)) + 1;
                            let take = if rng.random_bool(0.5) { i..i + 1 } else { i..i };
                            list.splice(take, src[a..b].iter().cloned());
                        }
                    }
                }
            }
        }
    }
}

fn is_comma(t: &Tok) -> bool {
    matches!(t, Tok::Leaf(TokenTree::Punct(p)) if p.as_char() == ',')
}

// ---------------------------------------------------------------------------------------------
// Generators: stencils, elements, params structs from their grammars

#[rustfmt::skip]
const NAMES: &[&str] = &[
    "u", "v", "w", "psi", "mask", "cell", "k", "alpha", "beta", "h", "dt", "phi", "rho", "temp", "flux",
];

/// A name for an argument or a binding: ordinary mostly, else one that collides with the
/// generated code, a keyword of OpenCL or a raw identifier.
fn name(rng: &mut SmallRng) -> String {
    if rng.random_bool(0.85) {
        NAMES.choose(rng).expect("names").to_string()
    } else {
        let odd = [
            "x", "c", "t", "out", "nx", "HX", "AT", "float", "local", "global", "kernel", "half", "constant", "floor",
            "p", "shape", "config", "plan", "r#yield", "r#match", "r#u", "ψ", "_u", "u_1", "x_p1", "t_u", "match0",
            "select", "WRAP", "i", "row", "lane", "sqrt", "s_cur", "k_", "TILE_X", "int", "uchar", "_",
        ];
        odd.choose(rng).expect("odd").to_string()
    }
}

fn fn_name(rng: &mut SmallRng) -> String {
    let names = [
        "jacobi", "heat", "smooth", "f", "step_2d", "a_b_", "__", "_1", "_x", "r#yield", "r#match", "ψ_step", "Jacobi",
        "x", "kernel", "local", "out", "plan", "source", "heat_", "_", "AT", "z9",
    ];
    if rng.random_bool(0.9) {
        names[..6].choose(rng).expect("names").to_string()
    } else {
        names.choose(rng).expect("names").to_string()
    }
}

const SCALARS: &[&str] = &["f32", "f64", "u8", "i32", "u32"];

fn int_lit(rng: &mut SmallRng) -> String {
    let lits = [
        "0",
        "1",
        "2",
        "3",
        "42",
        "255u8",
        "7u32",
        "1i32",
        "3f32",
        "2f64",
        "0x7fffffff",
        "0b1010",
        "0o17",
        "1_000",
        "2147483648",
        "4294967296u32",
        "18446744073709551616",
        "256u8",
        "-1",
    ];
    if rng.random_bool(0.7) {
        lits[..4].choose(rng)
    } else {
        lits.choose(rng)
    }
    .expect("lits")
    .to_string()
}

fn float_lit(rng: &mut SmallRng) -> String {
    let lits = [
        "0.5",
        "1.0",
        "2.0",
        "0.25",
        "1.",
        "1e10",
        "1.5e-3",
        "2.0f64",
        "0.5f32",
        "1e39",
        "1e-46",
        "0.0",
        "1_000_000_000.25",
        "1e308f32",
        "1E5",
        "6.02214076e23",
        "3.4028235e38",
    ];
    if rng.random_bool(0.7) {
        lits[..4].choose(rng)
    } else {
        lits.choose(rng)
    }
    .expect("lits")
    .to_string()
}

struct StencilGen<'a> {
    rng: &'a mut SmallRng,
    rank: usize,
    grids: Vec<String>,
    scalars: Vec<String>,
    params: Vec<String>,
    locals: Vec<String>,
}

const METHODS: &[(&str, usize)] = &[
    ("abs", 0),
    ("sqrt", 0),
    ("cbrt", 0),
    ("exp", 0),
    ("ln", 0),
    ("log10", 0),
    ("log2", 0),
    ("sin", 0),
    ("cos", 0),
    ("tan", 0),
    ("tanh", 0),
    ("atan", 0),
    ("atan2", 1),
    ("hypot", 1),
    ("powf", 1),
    ("powi", 1),
    ("min", 1),
    ("max", 1),
    ("floor", 0),
    ("ceil", 0),
    ("round", 0),
    ("mul_add", 2),
    ("clamp", 2),
    ("recip", 0),
    ("signum", 0),
    ("to_bits", 0),
    ("at", 2),
];

impl StencilGen<'_> {
    fn offsets(&mut self) -> String {
        let n = if self.rng.random_bool(0.95) {
            self.rank
        } else {
            self.rng.random_range(0..5)
        };
        (0..n)
            .map(|_| {
                if self.rng.random_bool(0.9) {
                    self.rng.random_range(-3i32..=3).to_string()
                } else {
                    [
                        "2147483647",
                        "-2147483648",
                        "i",
                        "1.5",
                        "(1)",
                        "-(2)",
                        "9223372036854775807",
                        "1u8",
                    ]
                    .choose(self.rng)
                    .expect("offsets")
                    .to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn leaf(&mut self) -> String {
        match self.rng.random_range(0..10) {
            0 | 1 if !self.grids.is_empty() => {
                let g = self.grids.choose(self.rng).expect("grids").clone();
                format!("{g}.at({})", self.offsets())
            }
            2 if !self.scalars.is_empty() => self.scalars.choose(self.rng).expect("scalars").clone(),
            3 if !self.params.is_empty() => {
                let p = self.params.choose(self.rng).expect("params").clone();
                let m = ["a", "b", "c", "0", "r#type"].choose(self.rng).expect("members");
                format!("{p}.{m}")
            }
            4 if !self.locals.is_empty() => self.locals.choose(self.rng).expect("locals").clone(),
            5 => [
                "FLUID",
                "crate::C",
                "f32::MAX",
                "std::f32::consts::PI",
                "Self::X",
                "B",
                "u8::MAX",
            ]
            .choose(self.rng)
            .expect("consts")
            .to_string(),
            6 => ["true", "false"].choose(self.rng).expect("bools").to_string(),
            7 => int_lit(self.rng),
            _ => float_lit(self.rng),
        }
    }

    fn expr(&mut self, depth: usize) -> String {
        if depth == 0 {
            return self.leaf();
        }
        let d = depth - 1;
        // 20: an expression the DSL rejects, rarely, so that most bodies reach the back end.
        let pick = match self.rng.random_range(0..100) {
            0 => 20,
            n => n % 20,
        };
        match pick {
            0..4 => self.leaf(),
            4 => format!("-{}", self.expr(d)),
            5 => format!("!{}", self.expr(d)),
            6..10 => {
                let ops = [
                    "+", "-", "*", "/", "%", "&&", "||", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">", ">=",
                ];
                let op = if self.rng.random_bool(0.7) {
                    ops[..4].choose(self.rng)
                } else {
                    ops.choose(self.rng)
                };
                format!("{} {} {}", self.expr(d), op.expect("ops"), self.expr(d))
            }
            10 => format!("({})", self.expr(d)),
            11 => {
                let t = ["f32", "f64", "i32", "u32", "u8", "bool", "f16", "usize"];
                let t = if self.rng.random_bool(0.8) {
                    t[..5].choose(self.rng)
                } else {
                    t.choose(self.rng)
                };
                format!("({}) as {}", self.expr(d), t.expect("types"))
            }
            12 | 13 => {
                let (m, n) = *METHODS.choose(self.rng).expect("methods");
                let n = if self.rng.random_bool(0.9) {
                    n
                } else {
                    self.rng.random_range(0..4)
                };
                let args: Vec<String> = (0..n).map(|_| self.expr(d)).collect();
                format!("({}).{m}({})", self.expr(d), args.join(", "))
            }
            14 => {
                let (m, n) = *METHODS.choose(self.rng).expect("methods");
                let ty = ["f32", "f64", "i32", "Self", "foo", "std::f32"]
                    .choose(self.rng)
                    .expect("types");
                let args: Vec<String> = (0..=n).map(|_| self.expr(d)).collect();
                format!("{ty}::{m}({})", args.join(", "))
            }
            15 | 16 => {
                let els = if self.rng.random_bool(0.95) {
                    if self.rng.random_bool(0.3) {
                        format!(
                            " else if {} {{ {} }} else {{ {} }}",
                            self.expr(d),
                            self.expr(d),
                            self.expr(d)
                        )
                    } else {
                        format!(" else {{ {} }}", self.expr(d))
                    }
                } else {
                    String::new()
                };
                format!("if {} {{ {} }}{els}", self.expr(d), self.block(d))
            }
            17 | 18 => {
                let grid = self
                    .grids
                    .choose(self.rng)
                    .cloned()
                    .filter(|_| self.rng.random_bool(0.7));
                let scrut = match grid {
                    Some(g) => format!("{g}.at({})", self.offsets()),
                    None => self.expr(d),
                };
                let mut arms = Vec::new();
                for _ in 0..self.rng.random_range(0..4) {
                    let pats = [
                        "0",
                        "1",
                        "2 | 3",
                        "FLUID",
                        "OUTFLOW | BODY",
                        "crate::X",
                        "255u8",
                        "-1",
                        "1..=3",
                        "x",
                        "Some(x)",
                        "(1)",
                        "ref y",
                        "1.5",
                    ];
                    let pat = if self.rng.random_bool(0.8) {
                        pats[..7].choose(self.rng)
                    } else {
                        pats.choose(self.rng)
                    };
                    let guard = if self.rng.random_bool(0.03) { " if true" } else { "" };
                    arms.push(format!("{}{guard} => {},", pat.expect("pats"), self.expr(d)));
                }
                if self.rng.random_bool(0.9) {
                    arms.push(format!("_ => {},", self.expr(d)));
                }
                format!("match {scrut} {{ {} }}", arms.join(" "))
            }
            19 => format!("{{ {} }}", self.block(d)),
            20 => {
                let bad = [
                    "u[0]",
                    "loop { break 1.0 }",
                    "for i in 0..3 {}",
                    "x = 1.0",
                    "return 1.0",
                    "|a| a",
                    "vec![1.0]",
                    "\"s\"",
                    "'c'",
                    "*k",
                    "&u",
                    "(1.0, 2.0)",
                    "[1.0; 2]",
                    "async { 1.0 }",
                    "u.at::<f32>(0, 0)",
                    "k.a.b",
                    "k.0",
                    "u.at(0, 0)?",
                    "u.at(0, 0).abs::<f32>()",
                    "(u).at(0, 0)",
                    "foo.at(0, 0)",
                    "Grid::at(u, 0, 0)",
                ];
                bad.choose(self.rng).expect("bad").to_string()
            }
            _ => self.expr(d),
        }
    }

    /// `let`s and a tail.
    fn block(&mut self, depth: usize) -> String {
        let saved = self.locals.len();
        let mut out = String::new();
        for _ in 0..self.rng.random_range(0..3) {
            let n = name(self.rng);
            let ty = if self.rng.random_bool(0.3) {
                format!(
                    ": {}",
                    ["f32", "f64", "i32", "u32", "u8", "bool", "Foo"]
                        .choose(self.rng)
                        .expect("types")
                )
            } else {
                String::new()
            };
            let pat = if self.rng.random_bool(0.98) {
                n.clone()
            } else {
                format!("(mut {n})")
            };
            let value = self.expr(depth);
            out += &format!("let {pat}{ty} = {value}; ");
            self.locals.push(n);
        }
        out += &self.expr(depth);
        self.locals.truncate(saved);
        out
    }
}

fn gen_stencil(rng: &mut SmallRng) -> Input {
    let rank = if rng.random_bool(0.9) {
        rng.random_range(1..=3)
    } else {
        rng.random_range(0..5)
    };
    let grid_ty = |rng: &mut SmallRng, r: usize| {
        let name = match r {
            2 if rng.random_bool(0.5) => "Grid".to_string(),
            r => format!("Grid{r}"),
        };
        let elem = if rng.random_bool(0.95) {
            SCALARS.choose(rng).expect("scalars").to_string()
        } else {
            ["bool", "f16", "Vec<f32>", "", "f32, f32", "'a, f32"]
                .choose(rng)
                .expect("elems")
                .to_string()
        };
        let path = ["", "", "", "clforge::", "crate::"].choose(rng).expect("paths");
        format!("&{path}{name}<{elem}>")
    };
    let mut g = StencilGen {
        rng,
        rank,
        grids: Vec::new(),
        scalars: Vec::new(),
        params: Vec::new(),
        locals: Vec::new(),
    };
    let mut args = Vec::new();
    let n_args = g.rng.random_range(1..=5);
    for i in 0..n_args {
        let n = name(g.rng);
        let kind = if i == 0 { 0 } else { g.rng.random_range(0..100) };
        let ty = match kind {
            0..65 => {
                let r = if g.rng.random_bool(0.99) {
                    rank
                } else {
                    g.rng.random_range(1..4)
                };
                g.grids.push(n.clone());
                grid_ty(g.rng, r)
            }
            65..85 => {
                g.scalars.push(n.clone());
                let tys = ["f32", "f64", "i32", "u32", "u8", "bool"];
                let tys = if g.rng.random_bool(0.9) { &tys[..4] } else { &tys[..] };
                tys.choose(g.rng).expect("scalars").to_string()
            }
            85..97 => {
                g.params.push(n.clone());
                let tys = [
                    "&Coeffs",
                    "&crate::K",
                    "&super::P<f32>",
                    "&Self",
                    "&mut Coeffs",
                    "Coeffs",
                ];
                let tys = if g.rng.random_bool(0.9) { &tys[..3] } else { &tys[..] };
                tys.choose(g.rng).expect("params").to_string()
            }
            _ => [
                "&[f32]",
                "&Grid<f32>",
                "impl Fn()",
                "(f32, f32)",
                "&&Grid<f32>",
                "*const f32",
            ]
            .choose(g.rng)
            .expect("odd")
            .to_string(),
        };
        let pat = if g.rng.random_bool(0.99) {
            n
        } else {
            ["mut u", "_", "(a, b)", "ref u", "self"]
                .choose(g.rng)
                .expect("pats")
                .to_string()
        };
        args.push(format!("{pat}: {ty}"));
    }
    let out = if g.rng.random_bool(0.9) {
        format!(
            " -> {}",
            ["f32", "f64", "i32", "u32", "u8"].choose(g.rng).expect("outs")
        )
    } else {
        [" -> bool", "", " -> ()", " -> Grid<f32>", " -> impl Sized", " -> f16"]
            .choose(g.rng)
            .expect("outs")
            .to_string()
    };
    let depth = g.rng.random_range(1..5);
    let body = g.block(depth);
    let vis = ["", "pub ", "pub(crate) ", "pub(super) "].choose(g.rng).expect("vis");
    let extra = if g.rng.random_bool(0.05) {
        ["async ", "const ", "unsafe ", "extern \"C\" "]
            .choose(g.rng)
            .expect("qualifiers")
            .to_string()
    } else {
        String::new()
    };
    let generics = if g.rng.random_bool(0.03) { "<T>" } else { "" };
    let doc = if g.rng.random_bool(0.2) {
        [
            "/// A doc with */ in it.\n",
            "/** ψ */\n",
            "#[doc = \"\\u{0}\"]\n",
            "#[inline]\n",
            "/// \n",
        ]
        .choose(g.rng)
        .expect("docs")
        .to_string()
    } else {
        String::new()
    };
    let fname = fn_name(g.rng);
    let mut attr = STENCIL_ATTRS[..4].choose(g.rng).expect("attrs").to_string();
    if g.rng.random_bool(0.2) {
        let grid = g.grids.choose(g.rng).cloned().unwrap_or_else(|| "u".into());
        let sep = if attr.is_empty() { "" } else { ", " };
        attr = format!("{attr}{sep}state = {grid}");
    }
    Input::new(
        Target::Stencil,
        attr,
        format!(
            "{doc}{vis}{extra}fn {fname}{generics}({}){out} {{ {body} }}",
            args.join(", ")
        ),
    )
}

/// The 1-D Lagrange polynomial of node `i` of `order + 1` equidistant nodes in [-1, 1], as Rust.
fn lagrange(coord: &str, i: usize, order: usize) -> String {
    let x = |j: usize| -1.0 + 2.0 * j as f64 / order as f64;
    let mut factors = Vec::new();
    for j in (0..=order).filter(|&j| j != i) {
        factors.push(format!("({coord} - {:?}) / {:?}", x(j), x(i) - x(j)));
    }
    if factors.is_empty() {
        "1.0".into()
    } else {
        factors.join(" * ")
    }
}

fn gen_element(rng: &mut SmallRng) -> Input {
    let dim = if rng.random_bool(0.95) {
        rng.random_range(1..=3)
    } else {
        rng.random_range(0..5)
    };
    let order = if rng.random_bool(0.8) {
        1
    } else {
        rng.random_range(2..=3)
    };
    let coords: Vec<String> = (0..dim.min(3))
        .map(|a| {
            if rng.random_bool(0.9) {
                ["r", "s", "t"][a].to_string()
            } else {
                ["x", "c", "r#yield", "ψ", "_", "local", "real", "s", "at", "m"]
                    .choose(rng)
                    .expect("coords")
                    .to_string()
            }
        })
        .collect();
    // The tensor grid of nodes, in a random order: shape functions follow the same order.
    let mut grid: Vec<Vec<usize>> = vec![vec![]];
    for _ in 0..dim.min(3) {
        grid = grid
            .into_iter()
            .flat_map(|p| {
                (0..=order).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    if rng.random_bool(0.5) {
        grid.shuffle(rng);
    }
    let nodes = grid.len();
    let x = |i: usize| -1.0 + 2.0 * i as f64 / order as f64;
    let node_rows: Vec<String> = grid
        .iter()
        .map(|p| {
            format!(
                "[{}]",
                p.iter().map(|&i| format!("{:?}", x(i))).collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    let use_lets = rng.random_bool(0.3);
    let mut lets = String::new();
    if use_lets {
        for (a, c) in coords.iter().enumerate() {
            for i in 0..=order {
                lets += &format!("let l{a}_{i} = {};\n", lagrange(c, i, order));
            }
        }
    }
    let mut shapes: Vec<String> = grid
        .iter()
        .map(|p| {
            let f: Vec<String> = p
                .iter()
                .enumerate()
                .map(|(a, &i)| {
                    if use_lets {
                        format!("l{a}_{i}")
                    } else {
                        format!("({})", lagrange(&coords[a], i, order))
                    }
                })
                .collect();
            if f.is_empty() {
                "1.0".into()
            } else {
                f.join(" * ")
            }
        })
        .collect();
    if rng.random_bool(0.1) {
        let i = rng.random_range(0..shapes.len());
        shapes[i] = [
            "0.0",
            "r.sin()",
            "1.0 / r",
            "r.powi(17)",
            "r.powi()",
            "r.powi(16).powi(16).powi(16)",
            "(1.0 + r).powi(16).powi(16).powi(16).powi(16).powi(16).powi(16).powi(16).powi(16)",
            "(r + 1.0).powi(16).powi(16)",
            "m",
            "shape(r)",
            "-r",
            "shapes[0] + 1e309 * r - 1e309 * r",
            "shapes[0] + 1e309 * (r * r - 1.0)",
            "shapes[0] + 1e307 * 100.0 * r * r * 0.0",
        ]
        .choose(rng)
        .expect("odd")
        .replace("shapes[0]", &shapes[i]);
    }
    let ops: &[&str] = match dim {
        2 => &["plane_stress", "plane_strain", "diffusion"],
        3 => &["elasticity", "diffusion"],
        _ => &["diffusion"],
    };
    let op = if rng.random_bool(0.9) {
        ops.choose(rng).expect("ops").to_string()
    } else {
        ["plane_stress", "elasticity", "diffusion", "banana"]
            .choose(rng)
            .expect("ops")
            .to_string()
    };
    let strains = match op.as_str() {
        "plane_stress" | "plane_strain" => 3,
        "elasticity" => 6,
        _ => dim,
    };
    let strains = if rng.random_bool(0.95) {
        strains
    } else {
        rng.random_range(0..7)
    };
    let mat_ty = [
        "Plate",
        "f64",
        "super::M",
        "[f64; 2]",
        "crate::a::B<f64>",
        "Self",
        "(f64, f64)",
    ];
    let mat_ty = if rng.random_bool(0.8) {
        mat_ty[..3].choose(rng)
    } else {
        mat_ty.choose(rng)
    }
    .expect("types");
    let entry = |rng: &mut SmallRng, i: usize, j: usize| -> String {
        if i == j {
            ["m.e", "*m", "2.0", "c * m.nu", "1e39"]
                .choose(rng)
                .expect("entries")
                .to_string()
        } else {
            "0.0".into()
        }
    };
    let rows: Vec<String> = (0..strains)
        .map(|i| {
            format!(
                "[{}]",
                (0..strains).map(|j| entry(rng, i, j)).collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    let quadrature = if rng.random_bool(0.9) {
        rng.random_range(1..=6)
    } else {
        rng.random_range(0..9)
    };
    let mut attr = format!("dim = {dim}, nodes = {nodes}, operator = {op}, quadrature = {quadrature}");
    if rng.random_bool(0.2) {
        attr += &format!(", dofs = {}", rng.random_range(0..4));
    }
    let mut extra = String::new();
    if rng.random_bool(0.15) {
        attr += ", template = \"../examples/templates/strain_energy.cl.tera\"";
        let kernel = if rng.random_bool(0.6) {
            "fn strain_energy(k: &[f32], elem_nodes: &[i32], u: &[f32], energy: &mut [f32], volume: f32, count: i32);"
                .to_string()
        } else {
            let params = [
                "k: &[f32]",
                "u: &mut [u8]",
                "n: i32",
                "r#yield: f32",
                "self",
                "at: f32",
                "Self: u32",
                "x: f64",
                "v: &[f64]",
                "local: f32",
                "_: f32",
                "mut q: i32",
                "a: &mut [u32]",
            ];
            let n = rng.random_range(0..5);
            let ps: Vec<&str> = (0..n).map(|_| *params.choose(rng).expect("params")).collect();
            let kname = [
                "strain_energy",
                "r#yield",
                "coloured",
                "kernel",
                "get_id",
                "__k",
                "ψ",
                "_",
                "launch",
            ]
            .choose(rng)
            .expect("names");
            format!("fn {kname}({});", ps.join(", "))
        };
        extra = format!("extern \"OpenCL\" {{ /// Doc */ here.\n {kernel} }}");
    }
    let thickness = if dim == 2 && rng.random_bool(0.3) {
        format!("pub fn thickness(m: &{mat_ty}) -> f64 {{ 1.0 }}")
    } else {
        String::new()
    };
    let name = ["quad4", "hex8", "bar2", "e", "r#yield", "__", "_1", "ψ", "Quad", "a_b_"];
    let name = if rng.random_bool(0.8) {
        name[..4].choose(rng)
    } else {
        name.choose(rng)
    }
    .expect("names");
    let vis = ["pub ", "", "pub(crate) "];
    let v = |rng: &mut SmallRng| {
        if rng.random_bool(0.95) {
            vis[0]
        } else {
            vis.choose(rng).expect("vis")
        }
    };
    let (v1, v2, v3, v4) = (v(rng), v(rng), v(rng), v(rng));
    let item = format!(
        "pub mod {name} {{
            use super::*;
            {v1}const NODES: [[f64; {dim}]; {nodes}] = [{}];
            {v2}fn shape({}) -> [f64; {nodes}] {{ {lets} [{}] }}
            {v3}fn material(m: &{mat_ty}) -> [[f64; {strains}]; {strains}] {{ let c = 1.0; [{}] }}
            {v4}fn density(m: &{mat_ty}) -> f64 {{ 1.0 }}
            {thickness}
            {extra}
        }}",
        node_rows.join(", "),
        coords
            .iter()
            .map(|c| format!("{c}: f64"))
            .collect::<Vec<_>>()
            .join(", "),
        shapes.join(", "),
        rows.join(", "),
    );
    Input::new(Target::Element, attr, item)
}

fn gen_params(rng: &mut SmallRng) -> Input {
    let tys = [
        "f32",
        "f64",
        "i32",
        "u32",
        "u8",
        "bool",
        "String",
        "[f32; 3]",
        "Vec<f32>",
        "&'a f32",
        "Option<f32>",
        "T",
        "r#f32",
        "crate::f32",
        "()",
    ];
    let fields: Vec<String> = (0..rng.random_range(0..6))
        .map(|_| {
            let ty = if rng.random_bool(0.8) {
                tys[..5].choose(rng)
            } else {
                tys.choose(rng)
            }
            .expect("types");
            let vis = if rng.random_bool(0.5) { "pub " } else { "" };
            let doc = if rng.random_bool(0.1) { "/// */ ψ\n" } else { "" };
            format!("{doc}{vis}{}: {ty}", name(rng))
        })
        .collect();
    let name = ["Coeffs", "K", "r#yield", "ψ", "__", "_1", "Params", "float", "local"]
        .choose(rng)
        .expect("names");
    let generics = if rng.random_bool(0.05) { "<'a, T>" } else { "" };
    let body = match rng.random_range(0..20) {
        0 => format!("struct {name}{generics}(f32, f64);"),
        1 => format!("struct {name};"),
        2 => format!("enum {name} {{ A, B }}"),
        3 => format!("union {name} {{ a: f32, b: u32 }}"),
        _ => format!("struct {name}{generics} {{ {} }}", fields.join(", ")),
    };
    let attrs = if rng.random_bool(0.3) {
        "#[derive(Clone, Copy, Params)] #[repr(C)]\n"
    } else {
        ""
    };
    Input::new(Target::Params, "", format!("{attrs}pub {body}"))
}

// ---------------------------------------------------------------------------------------------
// Deep nesting: the stack of the pipeline (and of syn) on pathological but lexable input

/// Kinds of deep input; `DEEP_SIZES` of each are checked by `deep_nesting_is_an_error_not_a_crash`.
const DEEP_KINDS: usize = 16;
const DEEP_SIZES: &[usize] = &[100, 1000, 5000, 10000];

fn deep(rng: &mut SmallRng) -> Input {
    let kind = rng.random_range(0..DEEP_KINDS);
    let n = *[10, 100, 300, 1000, 5000].choose(rng).expect("sizes");
    deep_input(kind, n)
}

fn deep_input(kind: usize, n: usize) -> Input {
    let stencil = |body: String| {
        Input::new(
            Target::Stencil,
            "",
            format!("fn f(u: &Grid<f32>, k: &K) -> f32 {{ {body} }}"),
        )
    };
    let element = |shape: String, nodes: String| {
        Input::new(
            Target::Element,
            "dim = 1, nodes = 2, operator = diffusion, quadrature = 2",
            format!(
                "mod bar {{ pub const NODES: [[f64; 1]; 2] = {nodes};
                   pub fn shape(r: f64) -> [f64; 2] {{ {shape} }}
                   pub fn material(k: &f64) -> [[f64; 1]; 1] {{ [[*k]] }}
                   pub fn density(k: &f64) -> f64 {{ *k }} }}"
            ),
        )
    };
    let linear = "[0.5 * (1.0 - r), 0.5 * (1.0 + r)]".to_string();
    let nodes = "[[-1.0], [1.0]]".to_string();
    let rep = |s: &str, n: usize| s.repeat(n);
    match kind {
        0 => stencil(format!("{}u.at(0, 0){}", rep("(", n), rep(")", n))),
        1 => stencil(vec!["u.at(0, 0)"; n].join(" + ")),
        2 => stencil(format!("{}u.at(0, 0)", rep("- ", n))),
        3 => stencil(format!("{}(u.at(0, 0) > 1.0)", rep("!", n)) + " as i32 as f32"),
        4 => stencil(format!("u.at(0, 0){}", rep(".abs()", n))),
        5 => stencil(format!("u.at(0, 0){}", rep(" as f32", n))),
        6 => stencil(format!("{}u.at(0, 0){}", rep("{ ", n), rep(" }", n))),
        7 => stencil(format!(
            "{}u.at(0, 0){}",
            rep("if true { 1.0 } else if false { 2.0 } else { ", n),
            rep(" }", n)
        )),
        8 => stencil(format!("{}0.0{}", rep("match 1 { 0 => 1.0, _ => ", n), rep(" }", n))),
        9 => stencil(
            (0..n)
                .map(|i| format!("let a{i} = a{} + 1.0; ", i.saturating_sub(1)))
                .collect::<String>()
                .replacen("let a0 = a0 + 1.0;", "let a0 = u.at(0, 0);", 1)
                + &format!("a{}", n.saturating_sub(1)),
        ),
        10 => stencil(format!("k{}", rep(".a", n))),
        11 => Input::new(
            Target::Stencil,
            "",
            format!("fn f(u: {}Grid<f32>) -> f32 {{ u.at(0, 0) }}", rep("&", n)),
        ),
        12 => Input::new(
            Target::Stencil,
            "",
            format!(
                "fn f(u: &Grid<{}f32{}>) -> f32 {{ u.at(0, 0) }}",
                rep("Grid<", n),
                rep(">", n)
            ),
        ),
        13 => element(linear, format!("{}{nodes}{}", rep("[", n), rep("]", n))),
        14 => element(
            format!("[0.5 * (1.0 - r), 0.5 * (1.0 + r){}]", rep(" + 0.0 * r", n)),
            nodes,
        ),
        _ => element(
            format!("[0.5 * (1.0 - r), (0.5 * (1.0 + r)){}]", rep(".powi(1)", n)),
            nodes,
        ),
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let broken = on_fuzz_thread(|progress| {
        let mut broken = Vec::new();
        for kind in 0..DEEP_KINDS {
            // The deepest input the bound lets through needs the most stack.
            let accepted = (1..300)
                .rev()
                .find(|&n| {
                    let item = TokenStream::from_str(&deep_input(kind, n).item).expect("lexes");
                    crate::diag::nesting(&item).is_ok()
                })
                .unwrap_or(1);
            for &n in DEEP_SIZES.iter().chain([&accepted]) {
                if std::env::var_os("CLFORGE_FUZZ_TRACE").is_some() {
                    let _ = writeln!(std::io::stderr(), "clforge fuzz: deep kind {kind}, size {n}");
                }
                progress.start(format!("kind {kind}, size {n}"));
                if let Err(what) = check(&deep_input(kind, n)) {
                    broken.push(format!("kind {kind}, size {n}: {what}"));
                }
            }
        }
        broken
    })
    .unwrap_or_else(|hung| panic!("deep input of {hung} hangs: ran for more than {HANG:?}"));
    assert!(broken.is_empty(), "{broken:#?}");
}

// ---------------------------------------------------------------------------------------------
// Regressions: what the fuzzer found, one test each (docs/SEMANTICS.md, "Fuzzing the macros")

/// Checks one input as the fuzzer does, on a fuzz thread; the verdict and the expansion's text.
fn expands(target: Target, attr: &str, item: &str) -> (Verdict, String) {
    let input = Input::new(target, attr, item);
    on_fuzz_thread(move |progress| {
        progress.start("the regression".into());
        outcome(&input).map(|(v, out)| (v, out.to_string()))
    })
    .unwrap_or_else(|hung| panic!("{hung} hangs"))
    .unwrap_or_else(|broken| panic!("{broken}"))
}

/// `type_name` of a raw identifier gave `R#match`, of `__` nothing, of `_1` `1`: each panicked
/// in `syn::Ident::new` (expand/stencil.rs, expand/element.rs).
#[test]
fn item_names_give_a_type_name_or_an_error() {
    let stencil = |name: &str| {
        expands(
            Target::Stencil,
            "",
            &format!("fn {name}(u: &Grid1<f32>) -> f32 {{ u.at(0) }}"),
        )
    };
    let (v, out) = stencil("r#match");
    assert_eq!(v, Verdict::Code, "{out}");
    assert!(out.contains("struct Match"), "{out}");
    for (name, gives) in [("__", "gives nothing"), ("_1", "gives `1`"), ("self_", "gives `Self`")] {
        let (v, out) = stencil(name);
        assert_eq!(v, Verdict::Error, "{out}");
        assert!(out.contains(gives), "{out}");
    }
    let module = |name: &str| {
        format!(
            "mod {name} {{ pub const NODES: [[f64; 1]; 2] = [[-1.0], [1.0]];
               pub fn shape(r: f64) -> [f64; 2] {{ [0.5 * (1.0 - r), 0.5 * (1.0 + r)] }}
               pub fn material(k: &f64) -> [[f64; 1]; 1] {{ [[*k]] }}
               pub fn density(k: &f64) -> f64 {{ *k }} }}"
        )
    };
    let attr = "dim = 1, nodes = 2, operator = diffusion, quadrature = 2";
    let (v, out) = expands(Target::Element, attr, &module("r#yield"));
    assert_eq!(v, Verdict::Code, "{out}");
    assert!(out.contains("struct Yield"), "{out}");
    assert_eq!(expands(Target::Element, attr, &module("__")).0, Verdict::Error);
}

/// 10000 parentheses, a 5000-term sum, 10000 `-`: syn and every stage recurse per level and
/// overflowed the stack (a crash of rustc); now an error at the token past the bound.
#[test]
fn deep_nesting_is_an_error() {
    for (kind, n) in [(0, 10000), (1, 5000), (2, 10000), (6, 10000), (12, 5000), (13, 10000)] {
        let input = deep_input(kind, n);
        let (v, out) = expands(input.target, &input.attr, &input.item);
        assert_eq!(v, Verdict::Error, "kind {kind}");
        assert!(out.contains("nests too deeply"), "kind {kind}");
    }
}

/// Printing each level twice made the emitter exponential in the nesting: 100 casts, a
/// right-nested sum and a chain of `&&` over vector masks hung (emit/expr.rs).
#[test]
fn nesting_is_emitted_in_linear_time() {
    let casts = deep_input(5, 100);
    assert_eq!(expands(casts.target, &casts.attr, &casts.item).0, Verdict::Code);
    let sum = format!("{}u.at(0, 0){}", "u.at(1, 0) + (".repeat(35), ")".repeat(35));
    let all = vec!["u.at(1, 0) > 0.5"; 35].join(" && ");
    for body in [sum, format!("if {all} {{ 1.0 }} else {{ 0.0 }}")] {
        let (v, out) = expands(Target::Stencil, "", &format!("fn f(u: &Grid<f32>) -> f32 {{ {body} }}"));
        assert_eq!(v, Verdict::Code, "{}", &out[out.len().saturating_sub(300)..]);
    }
}

/// A sweep reading a grid at `i64::MAX` overflowed the strip schedule's ring length (halo x +
/// halo y + 1, render/sweep.rs; fuzz seed 0xc1f05eed case 1321): now saturating, and the
/// expansion is code whose absurd halo the runtime refuses.
#[test]
fn sweep_ring_of_an_extreme_halo() {
    let item = "fn f(u: &Sweep3<f64>, f: &Grid3<f64>) -> f64 { u.new(1, 0, 0) * 0.5 + f.at(9223372036854775807, 1_000_000, -1) }";
    let (v, out) = expands(Target::Sweep, "order = backward", item);
    assert!(matches!(v, Verdict::Code | Verdict::Error), "{out}");
}

/// `r.powi(16)` eight times overflowed the `u32` exponents (a panic in `Poly::mul`); with a
/// binomial base it ran for ever. Shape functions now have a bounded degree (parse/element.rs).
#[test]
fn shape_degree_is_bounded() {
    let attr = "dim = 1, nodes = 2, operator = diffusion, quadrature = 2";
    for base in ["r", "(1.0 + r)"] {
        let item = format!(
            "mod bar {{ pub const NODES: [[f64; 1]; 2] = [[-1.0], [1.0]];
               pub fn shape(r: f64) -> [f64; 2] {{ [0.5 * (1.0 - r), 0.5 * (1.0 + r) + 0.0 * {base}{}] }}
               pub fn material(k: &f64) -> [[f64; 1]; 1] {{ [[*k]] }}
               pub fn density(k: &f64) -> f64 {{ *k }} }}",
            ".powi(16)".repeat(8)
        );
        let (v, out) = expands(Target::Element, attr, &item);
        assert_eq!(v, Verdict::Error, "{out}");
        assert!(out.contains("degree 24 at most"), "{out}");
    }
}

/// `1e309 * r - 1e309 * r` is `NaN * r`: it passed the interpolation check (NaN compares false)
/// and panicked in `Literal::f64_unsuffixed` (expand/element.rs); now an error at the function.
#[test]
fn shape_coefficients_are_finite() {
    let attr = "dim = 1, nodes = 2, operator = diffusion, quadrature = 2";
    for extra in ["1e309 * r - 1e309 * r", "1e309 * (r * r - 1.0)", "1e307 * 100.0 * r"] {
        let item = format!(
            "mod bar {{ pub const NODES: [[f64; 1]; 2] = [[-1.0], [1.0]];
               pub fn shape(r: f64) -> [f64; 2] {{ [0.5 * (1.0 - r) + {extra}, 0.5 * (1.0 + r)] }}
               pub fn material(k: &f64) -> [[f64; 1]; 1] {{ [[*k]] }}
               pub fn density(k: &f64) -> f64 {{ *k }} }}"
        );
        let (v, out) = expands(Target::Element, attr, &item);
        assert_eq!(v, Verdict::Error, "{extra}: {out}");
    }
}

/// Errors spanned on tokens that do not exist fell back to the call site: the fields of a unit
/// struct (parse/params.rs) and the arguments of `.powi()` (parse/element.rs).
#[test]
fn errors_have_spans() {
    assert_eq!(expands(Target::Params, "", "pub struct K;").0, Verdict::Error);
    let item = "mod bar { pub const NODES: [[f64; 1]; 2] = [[-1.0], [1.0]];
        pub fn shape(r: f64) -> [f64; 2] { [0.5 * (1.0 - r), 0.5 * (1.0 + r.powi())] }
        pub fn material(k: &f64) -> [[f64; 1]; 1] { [[*k]] }
        pub fn density(k: &f64) -> f64 { *k } }";
    let attr = "dim = 1, nodes = 2, operator = diffusion, quadrature = 2";
    assert_eq!(expands(Target::Element, attr, item).0, Verdict::Error);
}

/// Expansions that did not parse: a kernel parameter named by a keyword (`r#async`, `SELF`)
/// became a launcher parameter `async`, `self` (expand/launch.rs); a `Params` field `_` became
/// `self._`.
#[test]
fn generated_names_are_identifiers() {
    let module = |params: &str| {
        format!(
            "mod quad4 {{
                pub const NODES: [[f64; 2]; 4] = [[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]];
                pub fn shape(r: f64, s: f64) -> [f64; 4] {{
                    [0.25 * (1.0 - r) * (1.0 - s), 0.25 * (1.0 + r) * (1.0 - s),
                     0.25 * (1.0 + r) * (1.0 + s), 0.25 * (1.0 - r) * (1.0 + s)]
                }}
                pub fn material(k: &f64) -> [[f64; 2]; 2] {{ [[*k, 0.0], [0.0, *k]] }}
                pub fn density(_k: &f64) -> f64 {{ 1.0 }}
                extern \"OpenCL\" {{ fn strain_energy({params}); }}
            }}"
        )
    };
    let attr = "dim = 2, nodes = 4, operator = diffusion, quadrature = 2, \
                template = \"../examples/templates/strain_energy.cl.tera\"";
    let params = "k: &[f32], elem_nodes: &[i32], u: &[f32], energy: &mut [f32], volume: f32, count: i32";
    for p in ["r#async: i32", "SELF: i32", "Loop: i32"] {
        let (v, out) = expands(Target::Element, attr, &module(&params.replace("count: i32", p)));
        assert_eq!(v, Verdict::Code, "{p}: {out}");
    }
    let (v, out) = expands(Target::Params, "", "pub struct K { pub _: f32 }");
    assert_eq!(v, Verdict::Error, "{out}");
}

/// `template = "/dev/zero"` was read for ever (parse/family.rs); devices and pipes are refused.
#[test]
fn templates_are_regular_files() {
    for path in ["/dev/zero", "/dev/stdin", ".."] {
        let attr = format!("dim = 1, nodes = 2, operator = diffusion, quadrature = 2, template = {path:?}");
        let item = "mod bar { pub const NODES: [[f64; 1]; 2] = [[-1.0], [1.0]];
            pub fn shape(r: f64) -> [f64; 2] { [0.5 * (1.0 - r), 0.5 * (1.0 + r)] }
            pub fn material(k: &f64) -> [[f64; 1]; 1] { [[*k]] }
            pub fn density(k: &f64) -> f64 { *k }
            extern \"OpenCL\" { fn k(u: &[f32]); } }";
        let (v, out) = expands(Target::Element, &attr, item);
        assert_eq!(v, Verdict::Error, "{out}");
        assert!(out.contains("not a regular file"), "{out}");
    }
}
