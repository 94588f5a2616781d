//! A small OpenCL C statement tree and its printer, for statements that clforge builds itself
//! (the element family's loads, packs, row products, scatters, register shifts): the code that
//! decides them builds [`E`] and [`S`] values, and C syntax, precedence and parentheses live
//! only here. The DSL's own expressions go through `expr.rs`, which prints `ir::Expr`.

/// An expression.
#[derive(Clone, Debug)]
pub enum E {
    /// A name: variable, macro, parameter.
    Var(String),
    Int(i64),
    /// `a[i]`.
    Index(Box<E>, Box<E>),
    /// `a op b` with C's precedence and left associativity.
    Bin(Op, Box<E>, Box<E>),
    /// `f(a, b)`.
    Call(String, Vec<E>),
    /// `(real8)(a, b, ...)`: a vector literal of type `ty`.
    Vector(String, Vec<E>),
    /// `-a`.
    Neg(Box<E>),
}

/// Binary operators, by C precedence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shr,
    Ge,
    Lt,
    Eq,
    And,
}

impl Op {
    fn text(self) -> &'static str {
        match self {
            Op::Mul => "*",
            Op::Div => "/",
            Op::Rem => "%",
            Op::Add => "+",
            Op::Sub => "-",
            Op::Shr => ">>",
            Op::Ge => ">=",
            Op::Lt => "<",
            Op::Eq => "==",
            Op::And => "&&",
        }
    }

    fn prec(self) -> u8 {
        match self {
            Op::Mul | Op::Div | Op::Rem => 6,
            Op::Add | Op::Sub => 5,
            Op::Shr => 4,
            Op::Ge | Op::Lt => 3,
            Op::Eq => 2,
            Op::And => 1,
        }
    }
}

/// A statement; several may share a line ([`S::Line`]).
#[derive(Clone, Debug)]
pub enum S {
    /// `const ty a = x, b = y; /* comment */` (`konst`), or `ty a = x, b = y;`.
    Decl {
        konst: bool,
        ty: String,
        vars: Vec<(String, E)>,
        comment: Option<String>,
    },
    /// `lhs op= rhs;` (`op` is `""` for plain assignment).
    Assign { lhs: E, op: &'static str, rhs: E },
    /// Statements on one line, separated by spaces.
    Line(Vec<S>),
    /// `{ a; b; }` on one line: a scope for temporaries.
    Block(Vec<S>),
    /// `e;`: an expression for its effect (a `vstore2` call).
    Expr(E),
}

// Constructors that keep the building code short.
pub fn var(name: impl Into<String>) -> E {
    E::Var(name.into())
}
pub fn int(v: usize) -> E {
    E::Int(v as i64)
}
pub fn index(base: impl Into<String>, i: E) -> E {
    E::Index(Box::new(var(base)), Box::new(i))
}
pub fn bin(op: Op, a: E, b: E) -> E {
    E::Bin(op, Box::new(a), Box::new(b))
}
pub fn call(f: impl Into<String>, args: Vec<E>) -> E {
    E::Call(f.into(), args)
}
pub fn neg(a: E) -> E {
    E::Neg(Box::new(a))
}
/// `a0 op a1 op a2 ...` (left associative); `None` for no terms.
pub fn chain(op: Op, terms: impl IntoIterator<Item = E>) -> Option<E> {
    terms.into_iter().reduce(|a, b| bin(op, a, b))
}
pub fn decl(ty: &str, name: impl Into<String>, value: E) -> S {
    S::Decl {
        konst: true,
        ty: ty.into(),
        vars: vec![(name.into(), value)],
        comment: None,
    }
}
pub fn assign(lhs: E, op: &'static str, rhs: E) -> S {
    S::Assign { lhs, op, rhs }
}

/// The printed expression.
pub fn expr(e: &E) -> String {
    print(e).0
}

/// Text and precedence (7 for primaries).
fn print(e: &E) -> (String, u8) {
    match e {
        E::Var(n) => (n.clone(), 7),
        E::Int(v) => (v.to_string(), 7),
        E::Index(a, i) => (format!("{}[{}]", wrap(a, 7), expr(i)), 7),
        E::Call(f, args) => (format!("{f}({})", list(args)), 7),
        E::Vector(ty, args) => (format!("({ty})({})", list(args)), 7),
        // Unary minus binds tighter than any binary operator.
        E::Neg(a) => (format!("-{}", wrap(a, 7)), 7),
        E::Bin(op, a, b) => {
            let p = op.prec();
            // Left associative: the right operand needs parentheses at equal precedence.
            (format!("{} {} {}", wrap(a, p), op.text(), wrap(b, p + 1)), p)
        }
    }
}

fn wrap(e: &E, min: u8) -> String {
    let (t, p) = print(e);
    if p < min {
        format!("({t})")
    } else {
        t
    }
}

fn list(args: &[E]) -> String {
    args.iter().map(expr).collect::<Vec<_>>().join(", ")
}

/// The printed statement, on one line.
pub fn stmt(s: &S) -> String {
    match s {
        S::Decl {
            konst,
            ty,
            vars,
            comment,
        } => {
            let vars: Vec<String> = vars.iter().map(|(n, v)| format!("{n} = {}", expr(v))).collect();
            let c = if *konst { "const " } else { "" };
            let comment = comment
                .as_ref()
                .map(|c| format!(" /* {} */", super::comment(c)))
                .unwrap_or_default();
            format!("{c}{ty} {};{comment}", vars.join(", "))
        }
        S::Assign { lhs, op, rhs } => format!("{} {op}= {};", expr(lhs), expr(rhs)),
        S::Line(v) => v.iter().map(stmt).collect::<Vec<_>>().join(" "),
        S::Block(v) => format!("{{ {} }}", v.iter().map(stmt).collect::<Vec<_>>().join(" ")),
        S::Expr(e) => format!("{};", expr(e)),
    }
}

/// One printed line per statement.
pub fn lines(v: &[S]) -> Vec<String> {
    v.iter().map(stmt).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_and_associativity() {
        let a = bin(Op::Sub, var("ix"), int(1));
        assert_eq!(expr(&bin(Op::Rem, a.clone(), int(2))), "(ix - 1) % 2");
        assert_eq!(
            expr(&bin(Op::Sub, var("a"), bin(Op::Sub, var("b"), var("c")))),
            "a - (b - c)"
        );
        assert_eq!(
            expr(&bin(Op::Add, bin(Op::Add, var("a"), var("b")), var("c"))),
            "a + b + c"
        );
        let i = index("u", bin(Op::Add, bin(Op::Mul, var("n0"), var("DOFS")), int(1)));
        assert_eq!(stmt(&assign(i, "-", var("ku_1"))), "u[n0 * DOFS + 1] -= ku_1;");
        assert_eq!(
            expr(&call(
                "fma",
                vec![
                    neg(index("ka", int(0))),
                    var("x"),
                    neg(bin(Op::Add, var("a"), var("b")))
                ]
            )),
            "fma(-ka[0], x, -(a + b))"
        );
        let cond = chain(Op::And, [bin(Op::Ge, var("ix"), int(1)), bin(Op::Eq, a, int(0))]).unwrap();
        assert_eq!(expr(&cond), "ix >= 1 && ix - 1 == 0");
    }
}
