//! Completing generated source at run time: the one step where Rust values enter the OpenCL
//! text. The macro cannot see a params struct's fields nor a constant's value, so it hands
//! over the rendered text already cut into [`SourcePart`]s; this joins them with the
//! declarations and values, and points `#line` back at the generated file where the user's
//! code ends. Nothing here reads or searches the generated text.

/// One piece of a generated program's source, as the macro cut it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourcePart {
    /// Generated text, copied as is.
    Text(&'static str),
    /// Where the params structs' declarations go.
    Params,
    /// Where the constants' `#define NAME value` lines go.
    Constants,
    /// Where `#line` returns from the user's Rust file to the generated file itself.
    LineHere,
}

/// Joins `parts` with the params declarations `decls` and the constants `consts` (OpenCL name,
/// literal). `name` names the generated file in `#line` directives (`<name>.cl`).
pub fn complete(name: &str, parts: &[SourcePart], decls: &[String], consts: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(parts.iter().map(len).sum::<usize>() + 256);
    // Newlines in `out[..scanned]`: each directive counts only what came since the last one.
    let (mut lines, mut scanned) = (0, 0);
    for part in parts {
        match part {
            SourcePart::Text(t) => out.push_str(t),
            SourcePart::Params => decls.iter().for_each(|d| out.push_str(d)),
            SourcePart::Constants => {
                for (n, v) in consts {
                    out.push_str(&format!("#define {n} {v}\n"));
                }
            }
            SourcePart::LineHere => {
                lines += out[scanned..].matches('\n').count();
                // The directive names the line after itself: lines so far, + 1 for itself, + 1.
                out.push_str(&format!("#line {} \"{name}.cl\"\n", lines + 2));
                lines += 1;
                scanned = out.len();
            }
        }
    }
    out
}

fn len(p: &SourcePart) -> usize {
    match p {
        SourcePart::Text(t) => t.len(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_join_with_values_and_line_directives() {
        let parts = [
            SourcePart::Text("a\n"),
            SourcePart::Params,
            SourcePart::Constants,
            SourcePart::Text("b\n#line 7 \"user.rs\"\nx;\n"),
            SourcePart::LineHere,
            SourcePart::Text("c\n"),
        ];
        let s = complete(
            "k",
            &parts,
            &["typedef struct { float a; } P;\n".into()],
            &[("FLUID", "((uchar)1)".into())],
        );
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[2], "#define FLUID ((uchar)1)");
        let at = lines.iter().position(|l| *l == "#line 8 \"k.cl\"").expect("directive");
        // The directive names the line after itself (1-based): line 8 is "c".
        assert_eq!(at + 2, 8);
        assert_eq!(lines[at + 1], "c");
    }
}
