//! STAGE IR -> OpenCL C text, no Tera: the precedence printer (`expr.rs`), kernel signatures
//! (`signature.rs`), and each kind's statement lines (`stencil.rs`, `element.rs`).

pub mod c;
pub mod element;
pub mod expr;
pub mod forming;
pub mod lattice;
pub mod reduce;
pub mod signature;
pub mod stencil;
pub mod sweep;

/// User text (a doc line, a Rust expression) made safe inside a C comment: no `*/` or `/*`, no
/// line breaks, no trigraph `??`, no line splice.
pub fn comment(text: &str) -> String {
    let mut s: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    for (from, to) in [("*/", "* /"), ("/*", "/ *"), ("??", "? ?")] {
        while s.contains(from) {
            s = s.replace(from, to);
        }
    }
    s.trim_end_matches('\\').to_string()
}

/// The comment that opens the kernels a user template adds after the family's.
pub fn user_template_banner(shown: &str) -> String {
    format!("\n/* ---- kernels of the user template {shown} ---- */\n")
}

/// A file name made safe inside a `#line` string.
pub fn file_literal(file: &str) -> String {
    file.chars()
        .map(|c| {
            if c == '"' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// Keeps `#line` directives to where they are needed: the preprocessor numbers the lines
/// after a directive itself, so a statement needs one only when the line it would be given is
/// not its Rust line (a new statement from the next Rust line needs none).
#[derive(Default)]
pub struct LineMarks {
    /// The Rust line the preprocessor gives the next C line.
    presumed: Option<usize>,
}

impl LineMarks {
    /// The `#line` directive for a statement of `c_lines` C lines from `line` of `file`, if
    /// the preprocessor would number it otherwise.
    pub fn mark(&mut self, line: usize, file: &str, c_lines: usize) -> Option<String> {
        let directive = (self.presumed != Some(line)).then(|| format!("#line {line} \"{}\"", file_literal(file)));
        self.presumed = Some(line + c_lines);
        directive
    }
}

#[cfg(test)]
mod tests {
    use super::{comment, LineMarks};

    #[test]
    fn comments_cannot_close_early() {
        assert_eq!(comment("a */ b /* c"), "a * / b / * c");
        assert_eq!(comment("x ??/"), "x ? ?/");
        assert_eq!(comment("ends with \\"), "ends with ");
        assert_eq!(comment("two\nlines"), "two lines");
        assert_eq!(comment("***/"), "*** /");
    }

    #[test]
    fn line_directives_only_where_numbering_breaks() {
        let mut m = LineMarks::default();
        assert_eq!(m.mark(20, "a.rs", 1).as_deref(), Some("#line 20 \"a.rs\""));
        assert_eq!(m.mark(21, "a.rs", 3), None);
        assert_eq!(m.mark(24, "a.rs", 1), None);
        assert_eq!(m.mark(24, "a.rs", 1).as_deref(), Some("#line 24 \"a.rs\""));
        assert_eq!(m.mark(3, "a.rs", 1).as_deref(), Some("#line 3 \"a.rs\""));
    }
}
