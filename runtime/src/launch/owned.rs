//! Launching the runtime's own hand-written OpenCL (the sparse solver, the bond lattice and its
//! work queue): arguments are bound by name to the parameter list read from the kernel's C
//! signature, so the order is stated once, in the source, as the macro's IR states it for
//! generated kernels. A name the signature lacks or leaves unbound, or a buffer passed where the
//! signature takes a value, is a typed error naming the kernel, never a misplaced argument.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::program::{Arg, ArgClass};

/// What one parameter of a hand-written kernel takes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Decl {
    name: String,
    class: ArgClass,
}

/// The kernels' parameter lists of one OpenCL source, read once.
#[derive(Debug)]
pub(crate) struct Signatures {
    /// What the source was read as, for messages.
    what: &'static str,
    kernels: HashMap<String, Vec<Decl>>,
}

impl Signatures {
    /// Reads every `__kernel void name(...)` of `source` (`what` names it in messages).
    pub(crate) fn parse(what: &'static str, source: &str) -> Signatures {
        let text = strip_comments(source);
        let mut kernels = HashMap::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("__kernel") {
            rest = skip_attributes(&rest[at + "__kernel".len()..]);
            let Some(open) = rest.find('(') else { break };
            let Some(close) = rest[open..].find(')') else { break };
            let name = rest[..open].split_whitespace().last().unwrap_or_default().to_string();
            let decls = rest[open + 1..open + close]
                .split(',')
                .filter(|p| !p.trim().is_empty())
                .map(decl)
                .collect();
            kernels.insert(name, decls);
            rest = &rest[open + close..];
        }
        Signatures { what, kernels }
    }

    /// `named`'s arguments in `kernel`'s parameter order.
    pub(crate) fn bind<'a>(&self, kernel: &str, named: &[(&str, Arg<'a>)]) -> Result<Vec<Arg<'a>>> {
        let decls = self
            .kernels
            .get(kernel)
            .ok_or_else(|| Error::InvalidConfig(format!("`{}` has no kernel `{kernel}`", self.what)))?;
        let wrong = |detail: String| Error::InvalidConfig(format!("launch of `{kernel}` ({}): {detail}", self.what));
        if let Some((extra, _)) = named.iter().find(|(n, _)| !decls.iter().any(|d| d.name == *n)) {
            return Err(wrong(format!("it has no parameter `{extra}`")));
        }
        decls
            .iter()
            .map(|d| {
                let (_, arg) = named
                    .iter()
                    .find(|(n, _)| *n == d.name)
                    .ok_or_else(|| wrong(format!("parameter `{}` is not bound", d.name)))?;
                if arg.class() != d.class {
                    return Err(wrong(format!(
                        "parameter `{}` takes {}, the launch passed {}",
                        d.name,
                        d.class.describe(),
                        arg.class().describe()
                    )));
                }
                Ok(*arg)
            })
            .collect()
    }
}

/// `text` after any leading `__attribute__((...))`s.
fn skip_attributes(mut text: &str) -> &str {
    while let Some(after) = text.trim_start().strip_prefix("__attribute__") {
        let mut depth = 0usize;
        let end = after.char_indices().find_map(|(i, c)| {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            None
        });
        text = end.map_or("", |e| &after[e..]);
    }
    text
}

/// One C parameter declaration: its last identifier is its name; a pointer is a buffer unless
/// it is `__local` scratch.
fn decl(p: &str) -> Decl {
    let name = p
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|w| !w.is_empty())
        .unwrap_or_default()
        .to_string();
    let local = p
        .split(|c: char| c.is_whitespace() || c == '*')
        .any(|w| w == "__local" || w == "local");
    let class = if local {
        ArgClass::Local
    } else if p.contains('*') {
        ArgClass::Buffer
    } else {
        ArgClass::Value
    };
    Decl { name, class }
}

/// `source` without `/* */` and `//` comments (each replaced by a space).
fn strip_comments(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    loop {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.is_none_or(|l| b < l) => {
                out.push_str(&rest[..b]);
                out.push(' ');
                rest = rest[b + 2..].find("*/").map_or("", |e| &rest[b + 2 + e + 2..]);
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                out.push(' ');
                rest = rest[l..].find('\n').map_or("", |e| &rest[l + e..]);
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::Buffer;
    use crate::device::Device;

    const SOURCE: &str =
        "/* a (b, c) */ __kernel void k(__global const double* x, // y\n __local double* s,\n const uint n) {}\n\
                          __kernel __attribute__((reqd_work_group_size(64, 1, 1))) void two(__global uint* out) {}";

    #[test]
    fn binds_by_name_in_the_signatures_order() {
        let sigs = Signatures::parse("test", SOURCE);
        let dev = Device::default().unwrap();
        let x = Buffer::<f64>::new(&dev, 4).unwrap();
        let args = sigs
            .bind(
                "k",
                &[("n", Arg::u32(3)), ("x", Arg::buffer(&x)), ("s", Arg::local(64))],
            )
            .unwrap();
        let classes: Vec<ArgClass> = args.iter().map(Arg::class).collect();
        assert_eq!(classes, [ArgClass::Buffer, ArgClass::Local, ArgClass::Value]);
        assert_eq!(sigs.kernels["two"].len(), 1);
    }

    #[test]
    fn a_missing_extra_or_mistyped_argument_is_an_error_naming_it() {
        let sigs = Signatures::parse("test", SOURCE);
        let dev = Device::default().unwrap();
        let x = Buffer::<f64>::new(&dev, 4).unwrap();
        let err = |named: &[(&str, Arg<'_>)]| sigs.bind("k", named).unwrap_err().to_string();
        assert!(err(&[("x", Arg::buffer(&x)), ("s", Arg::local(8))]).contains("`n` is not bound"));
        let all = [("x", Arg::buffer(&x)), ("s", Arg::local(8)), ("n", Arg::u32(1))];
        assert!(err(&[all[0], all[1], all[2], ("m", Arg::u32(1))]).contains("no parameter `m`"));
        assert!(err(&[("x", Arg::u32(1)), all[1], all[2]]).contains("`x` takes a buffer"));
        assert!(sigs
            .bind("absent", &all)
            .unwrap_err()
            .to_string()
            .contains("no kernel `absent`"));
    }
}
