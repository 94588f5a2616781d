//! Program objects and kernel objects: building with the build log, kernel lookup,
//! setting arguments and enqueueing.

use std::ffi::CString;

use ocl::core::{self, ArgVal};

use super::{describe, failed, Event, Mem, Queue};
use crate::error::{Error, Result};

/// A program object built for the device of a [`Queue`].
pub(crate) struct Program(core::Program);

impl Program {
    /// Builds `source` with `options` for the queue's device. The inner `Err` is the
    /// compiler's log (or, where the driver wrote none, what `clBuildProgram` returned).
    pub(crate) fn build(
        queue: &Queue,
        source: CString,
        options: &CString,
    ) -> Result<std::result::Result<Program, String>> {
        super::fault::check(super::fault::Site::Build)?;
        let program =
            core::create_program_with_source(&queue.context, &[source]).map_err(failed("clCreateProgramWithSource"))?;
        let device = queue.device;
        let built = core::build_program(&program, Some(&[device]), options, None, None);
        let status = core::get_program_build_info(&program, device, core::ProgramBuildInfo::BuildStatus);
        let succeeded = matches!(
            status,
            Ok(core::ProgramBuildInfoResult::BuildStatus(
                core::ProgramBuildStatus::Success
            ))
        );
        if built.is_ok() && succeeded {
            return Ok(Ok(Program(program)));
        }
        let mut log = match core::get_program_build_info(&program, device, core::ProgramBuildInfo::BuildLog) {
            Ok(core::ProgramBuildInfoResult::BuildLog(log)) => log.trim_end_matches('\0').trim_end().to_owned(),
            _ => String::new(),
        };
        // A build log is not always written (e.g. for rejected options):
        // then report what clBuildProgram returned.
        if let Err(e) = &built {
            if e.api_status().is_some() || log.trim().is_empty() {
                log = format!("{log}\nclBuildProgram failed: {}", describe(e))
                    .trim_start()
                    .to_owned();
            }
        } else if log.trim().is_empty() {
            log = format!("build status {status:?} without a build log");
        }
        Ok(Err(log))
    }

    /// The program's binaries as the driver gives them (`CL_PROGRAM_BINARIES`; PTX text on
    /// NVIDIA), one per device it was built for.
    pub(crate) fn binaries(&self) -> Result<Vec<Vec<u8>>> {
        match core::get_program_info(&self.0, core::ProgramInfo::Binaries) {
            Ok(core::ProgramInfoResult::Binaries(b)) => Ok(b),
            Ok(other) => Err(Error::Cl {
                op: "clGetProgramInfo",
                message: format!("unexpected {other:?}"),
            }),
            Err(e) => Err(failed("clGetProgramInfo")(e)),
        }
    }

    fn kernel_names(&self) -> String {
        match core::get_program_info(&self.0, core::ProgramInfo::KernelNames) {
            Ok(core::ProgramInfoResult::KernelNames(names)) => {
                names.trim_end_matches('\0').split(';').collect::<Vec<_>>().join(", ")
            }
            _ => "(unknown)".to_owned(),
        }
    }

    /// A new kernel object for the kernel `name`; `program` names this program in errors.
    pub(crate) fn kernel(&self, program: &str, name: &str) -> Result<Kernel> {
        let kernel = core::create_kernel(&self.0, name).map_err(|e| match e.api_status() {
            Some(core::Status::CL_INVALID_KERNEL_NAME) => Error::InvalidConfig(format!(
                "program `{program}` has no kernel `{name}`; available kernels: {}",
                self.kernel_names()
            )),
            _ => failed("clCreateKernel")(e),
        })?;
        let num_args = match core::get_kernel_info(&kernel, core::KernelInfo::NumArgs) {
            Ok(core::KernelInfoResult::NumArgs(n)) => n,
            Ok(other) => {
                return Err(Error::Cl {
                    op: "clGetKernelInfo",
                    message: format!("unexpected {other:?}"),
                })
            }
            Err(e) => return Err(failed("clGetKernelInfo")(e)),
        };
        Ok(Kernel { kernel, num_args })
    }
}

/// One kernel argument's value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ArgValue<'a> {
    /// A buffer object of the device with this index.
    Mem {
        mem: &'a Mem,
        device: usize,
    },
    I32(i32),
    U32(u32),
    F32(f32),
    F64(f64),
    /// `__local` scratch of this many bytes.
    Local(usize),
}

/// Where a kernel is enqueued, and the names its errors give.
pub(crate) struct Place<'a> {
    pub(crate) queue: &'a Queue,
    /// Index of the device the program was built for.
    pub(crate) device: usize,
    pub(crate) program: &'a str,
    pub(crate) kernel: &'a str,
    /// OpenCL's global work offset (global ids start there), if any.
    pub(crate) offset: Option<[usize; 3]>,
    /// Events (of this context) the launch waits for.
    pub(crate) after: &'a [Event],
}

/// A kernel object. Arguments are state of the kernel object, so callers set them and
/// enqueue under one lock.
pub(crate) struct Kernel {
    kernel: core::Kernel,
    num_args: u32,
}

impl Kernel {
    /// `CL_KERNEL_WORK_GROUP_SIZE` and `CL_KERNEL_LOCAL_MEM_SIZE` of this kernel on the
    /// queue's device: the largest work-group it can be launched with (at most the device's,
    /// lower where the kernel needs many registers) and the `__local` bytes it uses.
    pub(crate) fn limits(&self, queue: &Queue) -> Result<(usize, u64)> {
        use core::{KernelWorkGroupInfo as I, KernelWorkGroupInfoResult as R};
        let query = |what: I| {
            core::get_kernel_work_group_info(&self.kernel, queue.device, what)
                .map_err(failed("clGetKernelWorkGroupInfo"))
        };
        match (query(I::WorkGroupSize)?, query(I::LocalMemSize)?) {
            (R::WorkGroupSize(items), R::LocalMemSize(bytes)) => Ok((items, bytes)),
            other => Err(Error::Cl {
                op: "clGetKernelWorkGroupInfo",
                message: format!("unexpected {other:?}"),
            }),
        }
    }

    /// Sets `args` in declaration order and enqueues the kernel over the first `dims` of the
    /// validated work sizes `gws` (in groups of `lws`), filling in `event` if given.
    pub(crate) fn enqueue<'a>(
        &self,
        at: &Place<'_>,
        dims: usize,
        (gws, lws): ([usize; 3], Option<[usize; 3]>),
        args: impl ExactSizeIterator<Item = ArgValue<'a>>,
        event: Option<&mut Event>,
    ) -> Result<()> {
        let kernel = at.kernel;
        super::fault::check(super::fault::Site::Enqueue).map_err(|e| match e {
            Error::Cl { op, message } => Error::Cl {
                op,
                message: format!("kernel `{kernel}` of program `{}`: {message}", at.program),
            },
            e => e,
        })?;
        if args.len() != self.num_args as usize {
            return Err(Error::LengthMismatch {
                what: format!("arguments of kernel `{kernel}`"),
                expected: self.num_args as usize,
                found: args.len(),
            });
        }
        for (i, arg) in args.enumerate() {
            let val = match &arg {
                ArgValue::Mem { mem, device } => {
                    if *device != at.device {
                        return Err(Error::InvalidConfig(format!(
                            "argument {i} of kernel `{kernel}` is on device {device}, but program `{}` \
                             was built for device {}",
                            at.program, at.device
                        )));
                    }
                    ArgVal::mem(mem.raw())
                }
                ArgValue::I32(v) => ArgVal::scalar(v),
                ArgValue::U32(v) => ArgVal::scalar(v),
                ArgValue::F32(v) => ArgVal::scalar(v),
                ArgValue::F64(v) => ArgVal::scalar(v),
                ArgValue::Local(bytes) => ArgVal::local::<u8>(bytes),
            };
            core::set_kernel_arg(&self.kernel, i as u32, val).map_err(|e| Error::Cl {
                op: "clSetKernelArg",
                message: format!("argument {i} of kernel `{kernel}`: {}", describe(&e)),
            })?;
        }
        let wait = Event::wait_list(at.after);
        // SAFETY: every argument is set (count checked above) to a live memory
        // object or a value; OpenCL retains the memory objects until the kernel
        // has run, and the caller validated the work sizes.
        unsafe {
            core::enqueue_kernel(
                &at.queue.queue,
                &self.kernel,
                dims as u32,
                at.offset,
                &gws,
                lws,
                Some(&wait[..]),
                event.map(|e| &mut e.inner),
            )
        }
        .map_err(|e| Error::Cl {
            op: "clEnqueueNDRangeKernel",
            message: format!("kernel `{kernel}` of program `{}`: {}", at.program, describe(&e)),
        })
    }
}
