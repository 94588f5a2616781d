//! Built programs and kernel launches.

use std::collections::HashMap;
use std::ffi::CString;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use crate::buffer::{Buffer, ConstBuffer, Scalar};
use crate::cl::{self, ArgValue, Kernel, Place};
use crate::device::{Device, DeviceInfo};
use crate::error::{Error, Result};
use crate::sync::lock;

pub use crate::cl::Event;

/// An OpenCL program built for one [`Device`]. Cheap to clone; clones share
/// the program and its kernel objects.
#[derive(Clone)]
pub struct Program {
    inner: Arc<ProgramInner>,
}

struct ProgramInner {
    name: String,
    program: cl::Program,
    queue: cl::Queue,
    device_index: usize,
    /// The device's work-group limits, checked before every launch.
    device_info: DeviceInfo,
    /// One kernel object per name. Arguments are per kernel object, so they
    /// are set and the kernel enqueued under that kernel's lock.
    kernels: Mutex<HashMap<String, Arc<Mutex<Kernel>>>>,
}

/// A kernel of a [`Program`] looked up once by name, for launch plans.
#[derive(Clone)]
pub(crate) struct KernelRef {
    slot: Arc<Mutex<Kernel>>,
}

impl fmt::Debug for KernelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KernelRef")
    }
}

/// A built kernel's own limits, as its driver reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KernelLimits {
    /// `CL_KERNEL_WORK_GROUP_SIZE`: the largest work-group this kernel runs with.
    pub(crate) work_group_size: usize,
    /// `CL_KERNEL_LOCAL_MEM_SIZE`: the `__local` bytes the kernel uses.
    pub(crate) local_mem_bytes: u64,
}

/// The size of a `__local` scratch parameter, chosen by the launch: what a generated launcher
/// takes for a kernel's `__local T*` parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Local(pub usize);

impl Local {
    /// `n` bytes.
    pub fn bytes(n: usize) -> Local {
        Local(n)
    }

    /// `n` doubles.
    pub fn doubles(n: usize) -> Local {
        Local(n.saturating_mul(8))
    }
}

/// What kind of parameter an argument fills: a buffer, `__local` scratch or a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArgClass {
    Buffer,
    Local,
    Value,
}

impl ArgClass {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            ArgClass::Buffer => "a buffer",
            ArgClass::Local => "`__local` scratch",
            ArgClass::Value => "a value",
        }
    }
}

/// One kernel argument; build it with the constructors.
#[derive(Clone, Copy, Debug)]
pub struct Arg<'a>(ArgValue<'a>);

impl<'a> Arg<'a> {
    /// A `__global T*` argument.
    pub fn buffer<T: Scalar>(b: &'a Buffer<T>) -> Arg<'a> {
        Arg(ArgValue::Mem {
            mem: b.mem(),
            device: b.device().info().index,
        })
    }

    /// A `__constant` parameter-block argument.
    pub fn constant(b: &'a ConstBuffer) -> Arg<'a> {
        Arg(ArgValue::Mem {
            mem: b.mem(),
            device: b.device_index(),
        })
    }

    /// An `int` argument.
    pub fn i32(v: i32) -> Arg<'a> {
        Arg(ArgValue::I32(v))
    }

    /// A `uint` argument.
    pub fn u32(v: u32) -> Arg<'a> {
        Arg(ArgValue::U32(v))
    }

    /// A `float` argument.
    pub fn f32(v: f32) -> Arg<'a> {
        Arg(ArgValue::F32(v))
    }

    /// A `double` argument.
    pub fn f64(v: f64) -> Arg<'a> {
        Arg(ArgValue::F64(v))
    }

    /// A `__local` scratch argument of `bytes` bytes.
    pub fn local(bytes: usize) -> Arg<'a> {
        Arg(ArgValue::Local(bytes))
    }

    pub(crate) fn class(&self) -> ArgClass {
        match self.0 {
            ArgValue::Mem { .. } => ArgClass::Buffer,
            ArgValue::Local(_) => ArgClass::Local,
            _ => ArgClass::Value,
        }
    }

    /// A `__local` scratch argument of the given size.
    pub fn scratch(size: Local) -> Arg<'a> {
        Arg(ArgValue::Local(size.0))
    }
}

/// The first `file.rs:LINE` (with `:COL` if given; `file.rs(LINE)` also
/// accepted) mentioned in a build log.
fn rust_location(log: &str) -> Option<String> {
    fn digits(s: &str) -> &str {
        &s[..s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len())]
    }
    let is_delim = |c: char| c.is_whitespace() || "\"'`()<>[],;".contains(c);
    let mut from = 0;
    while let Some(pos) = log[from..].find(".rs") {
        let dot = from + pos;
        from = dot + 3;
        let start = log[..dot]
            .char_indices()
            .rev()
            .find(|&(_, c)| is_delim(c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let rest = &log[from..];
        let Some(after) = rest.strip_prefix(':').or_else(|| rest.strip_prefix('(')) else {
            continue;
        };
        let line = digits(after);
        if start == dot || line.is_empty() {
            continue;
        }
        let mut loc = format!("{}:{line}", &log[start..from]);
        if rest.starts_with(':') {
            let col = after[line.len()..].strip_prefix(':').map(digits).unwrap_or_default();
            if !col.is_empty() {
                loc = format!("{loc}:{col}");
            }
        }
        return Some(loc);
    }
    None
}

/// Validates work sizes and pads them to three dimensions.
fn work_sizes(global: &[usize], local: Option<&[usize]>) -> Result<([usize; 3], Option<[usize; 3]>)> {
    let bad = |msg: String| Err(Error::InvalidConfig(msg));
    if !(1..=3).contains(&global.len()) {
        return bad(format!("global work size {global:?} must have 1 to 3 dimensions"));
    }
    if global.contains(&0) {
        return bad(format!("global work size {global:?} must not contain 0"));
    }
    let pad = |s: &[usize]| std::array::from_fn(|i| s.get(i).copied().unwrap_or(1));
    let Some(local) = local else {
        return Ok((pad(global), None));
    };
    if local.len() != global.len() || local.contains(&0) {
        return bad(format!(
            "local work size {local:?} must be non-zero and have as many dimensions as global {global:?}"
        ));
    }
    if let Some(d) = (0..global.len()).find(|&d| !global[d].is_multiple_of(local[d])) {
        return bad(format!(
            "global work size {global:?} is not a multiple of local work size {local:?} in dimension \
             {d}; round the global size up to a multiple of the local size"
        ));
    }
    Ok((pad(global), Some(pad(local))))
}

/// A work-group within the device's `CL_DEVICE_MAX_WORK_ITEM_SIZES` per axis and
/// `CL_DEVICE_MAX_WORK_GROUP_SIZE` in all (shared by the stencil and element launches).
pub(crate) fn check_work_group(info: &DeviceInfo, local: &[usize; 3], what: impl Fn() -> String) -> Result<()> {
    if let Some(d) = (0..3).find(|&d| local[d] > info.max_work_item_sizes[d]) {
        return Err(Error::DeviceLimit {
            what: what(),
            needed: local[d] as u64,
            limit: info.max_work_item_sizes[d] as u64,
            limit_name: [
                "CL_DEVICE_MAX_WORK_ITEM_SIZES[0]",
                "CL_DEVICE_MAX_WORK_ITEM_SIZES[1]",
                "CL_DEVICE_MAX_WORK_ITEM_SIZES[2]",
            ][d],
            hint: format!("make axis {d} of the work-group smaller"),
        });
    }
    let items = local
        .iter()
        .try_fold(1usize, |a, &n| a.checked_mul(n))
        .unwrap_or(usize::MAX);
    if items > info.max_work_group_size {
        return Err(Error::DeviceLimit {
            what: what(),
            needed: items as u64,
            limit: info.max_work_group_size as u64,
            limit_name: "CL_DEVICE_MAX_WORK_GROUP_SIZE",
            hint: "choose a work-group of fewer work-items".into(),
        });
    }
    Ok(())
}

/// Names a folder into which every program built is written as the driver compiled it
/// (`CL_PROGRAM_BINARIES`: PTX on NVIDIA, where it shows e.g. which fence a `mem_fence`
/// became), beside its source and build options.
pub const DUMP_ENV: &str = "CLFORGE_DUMP_BINARIES";

/// Extra build options for experiments (a vendor's register cap, a probe's `-D`): appended to
/// every program's options, or with a `name:` prefix (`quad4:-cl-nv-maxrregcount=64`) to the
/// programs of that name only. A diagnostic: results built with it are not the defaults'.
pub const OPTIONS_ENV: &str = "CLFORGE_BUILD_OPTIONS";

/// The options [`OPTIONS_ENV`] adds to program `name`'s build.
fn extra_options(name: &str) -> Option<String> {
    options_for(&std::env::var(OPTIONS_ENV).ok()?, name)
}

/// The options a [`OPTIONS_ENV`] value adds to program `name`: all of it, or with a `name:`
/// prefix (a word before the first `:` that is not an option) the rest for that program only.
fn options_for(value: &str, name: &str) -> Option<String> {
    let value = value.trim();
    match value.split_once(':') {
        Some((program, rest)) if !program.is_empty() && !program.starts_with('-') && !program.contains(' ') => {
            (program == name && !rest.trim().is_empty()).then(|| rest.trim().to_owned())
        }
        _ => (!value.is_empty()).then(|| value.to_owned()),
    }
}

#[cfg(test)]
mod options_tests {
    use super::options_for;

    #[test]
    fn build_options_from_the_environment_go_to_every_program_or_the_named_one() {
        assert_eq!(options_for(" -D A=1 ", "quad4").as_deref(), Some("-D A=1"));
        assert_eq!(options_for("", "quad4"), None);
        assert_eq!(
            options_for("quad4:-cl-nv-maxrregcount=48", "quad4").as_deref(),
            Some("-cl-nv-maxrregcount=48")
        );
        assert_eq!(options_for("quad4:-cl-nv-maxrregcount=48", "hex8"), None);
        assert_eq!(options_for("quad4:", "quad4"), None);
        // A colon inside an option is not a program name.
        assert_eq!(options_for("-D X=a:b", "quad4").as_deref(), Some("-D X=a:b"));
    }
}

/// Writes `<dir>/<name>-<hash>.{cl,options,bin}`; the hash tells apart the variants one name
/// is built in.
fn dump_binaries(program: &cl::Program, dir: &std::path::Path, name: &str, options: &str, source: &str) -> Result<()> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (source, options).hash(&mut h);
    let stem: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let stem = dir.join(format!("{stem}-{:016x}", h.finish()));
    let io = |source| Error::Io {
        what: format!("{DUMP_ENV}: writing {}.*", stem.display()),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    let write = |path: std::path::PathBuf, bytes: &[u8]| {
        crate::files::replace_file(&path, |w| std::io::Write::write_all(w, bytes)).map_err(io)
    };
    write(stem.with_extension("cl"), source.as_bytes())?;
    write(stem.with_extension("options"), options.as_bytes())?;
    for (i, bin) in program.binaries()?.iter().enumerate() {
        let ext = if i == 0 { "bin".to_owned() } else { format!("{i}.bin") };
        write(stem.with_extension(ext), bin)?;
    }
    Ok(())
}

impl Program {
    /// Builds `source` for `dev`; see [`Device::program`].
    pub(crate) fn build(dev: &Device, name: &str, source: &str, options: &str) -> Result<Program> {
        let mut options = if options.contains("-cl-std") {
            options.to_owned()
        } else if options.trim().is_empty() {
            "-cl-std=CL1.2".to_owned()
        } else {
            format!("{options} -cl-std=CL1.2")
        };
        // Rust divides and takes square roots correctly rounded; OpenCL allows `float` 2.5 and
        // 3 ulp unless asked, which a device can honour only when it says so.
        const ROUNDED: &str = "-cl-fp32-correctly-rounded-divide-sqrt";
        if dev.info().fp32_correctly_rounded_divide_sqrt
            && !options.contains(ROUNDED)
            && !options.contains("-cl-fast-relaxed-math")
        {
            options.push(' ');
            options.push_str(ROUNDED);
        }
        // GPU builds unroll what only pays on a GPU (the steps variant's slot loops).
        if dev.info().kind == crate::DeviceKind::Gpu && !options.contains("-D CLFORGE_GPU") {
            options.push_str(" -D CLFORGE_GPU");
        }
        if let Some(extra) = extra_options(name) {
            options.push(' ');
            options.push_str(&extra);
        }
        let nul = |what: &str| Error::InvalidConfig(format!("{what} of program `{name}` contains a NUL byte"));
        let src = CString::new(source).map_err(|_| nul("source"))?;
        let opts = CString::new(options.as_str()).map_err(|_| nul("options"))?;
        let program = match cl::Program::build(dev.queue(), src, &opts)? {
            Ok(program) => program,
            Err(log) => {
                return Err(Error::Build {
                    program: name.to_owned(),
                    options,
                    rust_location: rust_location(&log),
                    log,
                })
            }
        };
        if let Some(dir) = std::env::var_os(DUMP_ENV).filter(|d| !d.is_empty()) {
            dump_binaries(&program, std::path::Path::new(&dir), name, &options, source)?;
        }
        Ok(Program {
            inner: Arc::new(ProgramInner {
                name: name.to_owned(),
                program,
                queue: dev.queue().clone(),
                device_index: dev.info().index,
                device_info: dev.info().clone(),
                kernels: Mutex::default(),
            }),
        })
    }

    /// The name given when the program was built.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    fn kernel(&self, name: &str) -> Result<Arc<Mutex<Kernel>>> {
        let mut kernels = lock(&self.inner.kernels);
        if let Some(k) = kernels.get(name) {
            return Ok(k.clone());
        }
        let slot = Arc::new(Mutex::new(self.inner.program.kernel(&self.inner.name, name)?));
        kernels.insert(name.to_owned(), slot.clone());
        Ok(slot)
    }

    /// What the driver reports of kernel `kernel`: its largest work-group
    /// (`CL_KERNEL_WORK_GROUP_SIZE`) and its `__local` memory (`CL_KERNEL_LOCAL_MEM_SIZE`).
    pub(crate) fn kernel_limits(&self, kernel: &str) -> Result<KernelLimits> {
        let slot = self.kernel(kernel)?;
        let (work_group_size, local_mem_bytes) = lock(&slot).limits(&self.inner.queue)?;
        Ok(KernelLimits {
            work_group_size,
            local_mem_bytes,
        })
    }

    /// Enqueues kernel `kernel` over `global` work items (1 to 3 dimensions),
    /// in work groups of `local` if given (each global size must then be a
    /// multiple of the local one), with `args` in declaration order.
    /// Returns without waiting; use the [`Event`] to wait or time it.
    pub fn launch(&self, kernel: &str, global: &[usize], local: Option<&[usize]>, args: &[Arg<'_>]) -> Result<Event> {
        let sizes = self.work_sizes(global, local)?;
        let slot = self.kernel(kernel)?;
        let mut ev = Event::null();
        let at = Placed::default();
        self.enqueue(&slot, kernel, (global.len(), sizes), args, Some(&mut ev), at)?;
        Ok(ev)
    }

    /// The kernel object named `kernel`, for launching it repeatedly without looking it up
    /// by name ([`Program::launch_kernel`]).
    pub(crate) fn kernel_ref(&self, kernel: &str) -> Result<KernelRef> {
        Ok(KernelRef {
            slot: self.kernel(kernel)?,
        })
    }

    /// The kernel object `kernel`, looked up by name once and kept in `cell`.
    pub(crate) fn cached_kernel<'c>(&self, cell: &'c OnceLock<KernelRef>, kernel: &str) -> Result<&'c KernelRef> {
        match cell.get() {
            Some(k) => Ok(k),
            None => {
                let k = self.kernel_ref(kernel)?;
                Ok(cell.get_or_init(|| k))
            }
        }
    }

    /// [`Program::launch`] of a kernel resolved by [`Program::kernel_ref`]; `name` labels
    /// errors. Without `event` no event is asked of the driver (see `StencilPlan::enqueue`)
    /// and `None` is returned.
    pub(crate) fn launch_kernel(
        &self,
        k: &KernelRef,
        name: &str,
        global: &[usize],
        local: Option<&[usize]>,
        args: &[Arg<'_>],
        event: bool,
    ) -> Result<Option<Event>> {
        self.launch_kernel_at(k, name, (global, local), None, args, event, &[])
    }

    /// [`Program::launch_kernel`] with global ids starting at `offset` (OpenCL's global work
    /// offset) and after the events `after` (of any queue of this device's context).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch_kernel_at(
        &self,
        k: &KernelRef,
        name: &str,
        (global, local): (&[usize], Option<&[usize]>),
        offset: Option<[usize; 3]>,
        args: &[Arg<'_>],
        event: bool,
        after: &[Event],
    ) -> Result<Option<Event>> {
        let sizes = self.work_sizes(global, local)?;
        let at = Placed { offset, after };
        if event {
            let mut ev = Event::null();
            self.enqueue(&k.slot, name, (global.len(), sizes), args, Some(&mut ev), at)?;
            Ok(Some(ev))
        } else {
            self.enqueue(&k.slot, name, (global.len(), sizes), args, None, at)?;
            Ok(None)
        }
    }

    /// Validated, padded work sizes, within the device's work-group limits.
    fn work_sizes(&self, global: &[usize], local: Option<&[usize]>) -> Result<([usize; 3], Option<[usize; 3]>)> {
        let sizes = work_sizes(global, local)?;
        if let (Some(l), Some(padded)) = (local, sizes.1) {
            check_work_group(&self.inner.device_info, &padded, || format!("local work size {l:?}"))?;
        }
        Ok(sizes)
    }

    /// Sets the arguments of `slot`'s kernel and enqueues it.
    fn enqueue(
        &self,
        slot: &Mutex<Kernel>,
        kernel: &str,
        (dims, sizes): (usize, ([usize; 3], Option<[usize; 3]>)),
        args: &[Arg<'_>],
        event: Option<&mut Event>,
        at: Placed<'_>,
    ) -> Result<()> {
        let target = Place {
            queue: &self.inner.queue,
            device: self.inner.device_index,
            program: &self.inner.name,
            kernel,
            offset: at.offset,
            after: at.after,
        };
        let result = lock(slot).enqueue(&target, dims, sizes, args.iter().map(|a| a.0), event);
        match (result, sizes.1) {
            (Err(e @ Error::Cl { .. }), Some(local)) => Err(self.over_kernel_limit(slot, kernel, local).unwrap_or(e)),
            (r, _) => r,
        }
    }

    /// A failed launch explained: a work-group larger than the kernel's own limit (its registers
    /// or private memory allow fewer work-items than the device's largest group) is a
    /// [`Error::DeviceLimit`] that says so, instead of the driver's `CL_OUT_OF_RESOURCES`.
    fn over_kernel_limit(&self, slot: &Mutex<Kernel>, kernel: &str, local: [usize; 3]) -> Option<Error> {
        let group: usize = local.iter().product();
        let (limit, _) = lock(slot).limits(&self.inner.queue).ok()?;
        (group > limit).then(|| Error::DeviceLimit {
            what: format!(
                "work-group of {group} work-items for kernel `{kernel}` of program `{}`",
                self.inner.name
            ),
            needed: group as u64,
            limit: limit as u64,
            limit_name: "CL_KERNEL_WORK_GROUP_SIZE",
            hint: "this kernel's registers or private memory allow fewer work-items per group on this device; \
                   choose a smaller work-group (fewer elements or points per group)"
                .into(),
        })
    }

    #[cfg(test)]
    pub(crate) fn same_as(&self, other: &Program) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// Where a launch starts (global work offset) and what it waits for.
#[derive(Clone, Copy, Default)]
struct Placed<'a> {
    offset: Option<[usize; 3]>,
    after: &'a [Event],
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("name", &self.inner.name)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAXPY: &str = r#"
        __kernel void saxpy(__global float* y, __global const float* x, float a, uint n) {
            uint i = get_global_id(0);
            if (i < n) y[i] = a * x[i] + y[i];
        }
        __kernel void fill(__global float* y, float v) { y[get_global_id(0)] = v; }
    "#;

    fn saxpy_run(dev: &Device, n: usize, a: f32) -> Event {
        let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let y0: Vec<f32> = (0..n).map(|i| 1.0 - i as f32 * 0.5).collect();
        let prog = dev.program("saxpy", SAXPY, "").unwrap();
        let xb = Buffer::from_slice(dev, &x).unwrap();
        let yb = Buffer::from_slice(dev, &y0).unwrap();
        let global = n.div_ceil(64) * 64;
        let args = [Arg::buffer(&yb), Arg::buffer(&xb), Arg::f32(a), Arg::u32(n as u32)];
        let ev = prog.launch("saxpy", &[global], Some(&[64]), &args).unwrap();
        let y = yb.to_vec().unwrap();
        for i in 0..n {
            assert_eq!(y[i], a * x[i] + y0[i], "element {i}");
        }
        ev
    }

    #[test]
    fn saxpy_gives_right_numbers_and_timing() {
        let dev = Device::default().unwrap();
        let ev = saxpy_run(&dev, 100_000, 2.5);
        assert!(ev.duration_ns().unwrap() > 0);
    }

    #[test]
    fn build_error_points_at_rust_source() {
        let dev = Device::default().unwrap();
        let src = "#line 7 \"src/foo.rs\"\n__kernel void k(__global float* y) { y[0] = ; }\n";
        match dev.program("broken", src, "") {
            Err(Error::Build {
                program,
                options,
                log,
                rust_location,
            }) => {
                assert_eq!(program, "broken");
                assert!(options.starts_with("-cl-std=CL1.2"), "{options}");
                assert!(!log.trim().is_empty());
                let loc = rust_location.unwrap_or_default();
                assert!(loc.starts_with("src/foo.rs:7"), "{loc:?} from log {log}");
            }
            other => panic!("expected Error::Build, got {other:?}"),
        }
    }

    #[test]
    fn invalid_option_is_a_build_error() {
        let dev = Device::default().unwrap();
        match dev.program("opts", SAXPY, "-cl-std=CL1.2 -definitely-not-an-option") {
            Err(Error::Build { options, log, .. }) => {
                assert!(
                    options.starts_with("-cl-std=CL1.2 -definitely-not-an-option"),
                    "{options}"
                );
                assert!(!log.trim().is_empty());
            }
            other => panic!("expected Error::Build, got {other:?}"),
        }
    }

    #[test]
    fn launch_rejects_bad_configs() {
        let dev = Device::default().unwrap();
        let prog = dev.program("saxpy", SAXPY, "").unwrap();
        let y = Buffer::<f32>::new(&dev, 100).unwrap();
        let args = [Arg::buffer(&y), Arg::f32(1.0)];
        let err = |r: Result<Event>| r.unwrap_err();
        let e = err(prog.launch("fill", &[100], Some(&[64]), &args));
        assert!(matches!(&e, Error::InvalidConfig(m) if m.contains("multiple")), "{e}");
        for global in [&[][..], &[1, 1, 1, 1], &[0]] {
            assert!(matches!(
                prog.launch("fill", global, None, &args),
                Err(Error::InvalidConfig(_))
            ));
        }
        let e = err(prog.launch("fill", &[100, 1], Some(&[10]), &args));
        assert!(matches!(e, Error::InvalidConfig(_)), "{e}");
        let e = err(prog.launch("nope", &[100], None, &args));
        assert!(
            matches!(&e, Error::InvalidConfig(m) if m.contains("saxpy") && m.contains("fill")),
            "{e}"
        );
        let e = err(prog.launch("fill", &[100], None, &args[..1]));
        assert!(
            matches!(
                e,
                Error::LengthMismatch {
                    expected: 2,
                    found: 1,
                    ..
                }
            ),
            "{e}"
        );
        prog.launch("fill", &[100], Some(&[10]), &args).unwrap().wait().unwrap();
        assert_eq!(y.to_vec().unwrap(), vec![1.0; 100]);
    }

    #[test]
    fn constant_and_local_args() {
        let dev = Device::default().unwrap();
        let src = r#"
            typedef struct { float scale; int offset; } Params;
            __kernel void k(__global float* y, __constant Params* p, __local float* tmp) {
                size_t i = get_global_id(0), l = get_local_id(0);
                tmp[l] = (float)(i + p->offset);
                barrier(CLK_LOCAL_MEM_FENCE);
                y[i] = p->scale * tmp[get_local_size(0) - 1 - l];
            }
        "#;
        let prog = dev.program("params", src, "").unwrap();
        let mut params = 3.0f32.to_ne_bytes().to_vec();
        params.extend(10i32.to_ne_bytes());
        let p = dev.constant_bytes(&params).unwrap();
        let y = Buffer::<f32>::new(&dev, 8).unwrap();
        let args = [Arg::buffer(&y), Arg::constant(&p), Arg::local(4 * 4)];
        prog.launch("k", &[8], Some(&[4]), &args).unwrap();
        let want: Vec<f32> = [3, 2, 1, 0, 7, 6, 5, 4]
            .iter()
            .map(|&i| 3.0 * (i + 10) as f32)
            .collect();
        assert_eq!(y.to_vec().unwrap(), want);
    }

    #[test]
    fn concurrent_default_and_launch() {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|t| {
                    s.spawn(move || {
                        let dev = Device::default().unwrap();
                        for _ in 0..5 {
                            saxpy_run(&dev, 1000 + t * 37, t as f32).wait().unwrap();
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
        });
    }

    #[test]
    fn finds_rust_locations() {
        let cases = [
            ("src/foo.rs:7:5: error: expected expression", Some("src/foo.rs:7:5")),
            ("<source>:3:1: note\n/a b/x.rs:12: warning", Some("b/x.rs:12")),
            ("src/k.rs(42): error", Some("src/k.rs:42")),
            ("in file.rs: no line\nlib.rsx:4", None),
            ("plain.cl:4:2: error", None),
            ("ünï.rs:9:x", Some("ünï.rs:9")),
        ];
        for (log, want) in cases {
            assert_eq!(rust_location(log).as_deref(), want, "{log}");
        }
    }
}
