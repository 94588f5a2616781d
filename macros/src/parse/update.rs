//! A point-update function's signature and body, shared by the kinds that have one: stencils
//! (`parse/stencil.rs`), sweeps (`parse/sweep.rs`) and lattice rules (`parse/lattice.rs`).

use super::body::{BodyParser, Scope};
use super::{line_of, Errors};
use crate::model::sweep::SweepRead;
use crate::model::{Arg, Boundary, Field, OutType, ReduceOp, Scalar, Stencil};
use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, ItemFn, Pat, PathArguments, ReturnType, Type};

/// Which kind of attribute a function is parsed for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Stencil,
    Sweep,
    Lattice,
}

impl Mode {
    /// The kind's name in messages.
    fn what(self) -> &'static str {
        match self {
            Mode::Stencil => "stencil",
            Mode::Sweep => "sweep",
            Mode::Lattice => "lattice rule",
        }
    }
}

/// `Grid1`/`Grid2`/`Grid3` and `Grid` (= `Grid2`): a grid type's rank, and the kind whose
/// in-place state it is (`None` for a read-only grid; `Sweep1`.., `Lattice1`..).
fn grid_rank(name: &str) -> Option<(usize, Option<Mode>)> {
    match name {
        "Grid1" => Some((1, None)),
        "Grid" | "Grid2" => Some((2, None)),
        "Grid3" => Some((3, None)),
        "Sweep1" => Some((1, Some(Mode::Sweep))),
        "Sweep" | "Sweep2" => Some((2, Some(Mode::Sweep))),
        "Sweep3" => Some((3, Some(Mode::Sweep))),
        "Lattice1" => Some((1, Some(Mode::Lattice))),
        "Lattice" | "Lattice2" => Some((2, Some(Mode::Lattice))),
        "Lattice3" => Some((3, Some(Mode::Lattice))),
        _ => None,
    }
}

fn scalar_of(ty: &Type) -> Option<Scalar> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.get_ident().and_then(|i| Scalar::from_ident(&i.to_string())),
        _ => None,
    }
}

/// The in-place state's index and reads (sweeps, lattice rules).
pub type SweepParts = Option<(usize, Vec<SweepRead>)>;

/// Most output grids of one stencil (a system of fields).
pub const MAX_OUTPUTS: usize = 8;

/// The function as `mode` reads it: the stencil parts, the in-place state and its reads, and
/// a lattice rule's draws argument's position in the signature.
pub fn parse_fn(
    item: &ItemFn,
    boundary: Boundary,
    state: Option<syn::Ident>,
    mode: Mode,
) -> syn::Result<(Stencil, SweepParts, Option<usize>)> {
    let mut errors = Errors::default();
    let sig = &item.sig;
    if let Some(g) = sig.generics.params.first() {
        errors.spanned(
            g,
            format!(
                "{} functions cannot be generic; write one function per element type",
                mode.what()
            ),
        );
    }
    let Outputs {
        out,
        out_reduce,
        more_outs,
    } = outputs(sig, mode, &mut errors);
    let Arguments {
        args,
        rank,
        swept,
        draws,
        ok,
    } = arguments(sig, mode, &mut errors);
    if !ok {
        // Also before the check below: the rejected argument may be the grid.
        return Err(errors
            .finish()
            .err()
            .unwrap_or_else(|| syn::Error::new(sig.span(), "invalid stencil")));
    }
    let Some((rank, _)) = rank else {
        errors.spanned(
            &sig.ident,
            "a stencil reads at least one grid argument (`&Grid<f32>`, `&Grid3<f64>`, ...)",
        );
        return Err(errors
            .finish()
            .err()
            .unwrap_or_else(|| syn::Error::new(sig.span(), "invalid stencil")));
    };
    check_state(sig, mode, swept, out, &mut errors);
    let scope = Scope::new(&args);
    let mut parser = BodyParser::new(&args, rank, &mut errors);
    match (mode, swept) {
        (Mode::Sweep, Some((i, _, _))) => parser = parser.sweeping(i),
        (Mode::Lattice, state) => parser = parser.lattice(state.map(|s| s.0), draws.as_ref().map(|d| d.1.clone())),
        _ => {}
    }
    let body = parser.block(&item.block, &scope);
    let sweep_reads = std::mem::take(&mut parser.sweep_reads);
    errors.finish()?;
    let (Some(out), Some(body)) = (out, body) else {
        return Err(syn::Error::new(sig.span(), "invalid stencil"));
    };
    let sweep_parts = swept.map(|(i, _, _)| (i, sweep_reads));
    let draws = draws.map(|d| d.0);
    Ok((
        Stencil {
            name: sig.ident.clone(),
            doc: super::doc_lines(&item.attrs),
            args,
            out,
            out_reduce,
            more_outs,
            rank,
            boundary,
            state,
            body,
            file: sig.ident.span().file(),
            line: line_of(sig.fn_token.span),
        },
        sweep_parts,
        draws,
    ))
}

/// What the function returns: the first output's type (`None` where it was refused) and
/// reduction, and the system's other outputs.
struct Outputs {
    out: Option<Scalar>,
    out_reduce: Option<ReduceOp>,
    more_outs: Vec<OutType>,
}

fn outputs(sig: &syn::Signature, mode: Mode, errors: &mut Errors) -> Outputs {
    let what = mode.what();
    // A system of fields: `-> (f32, f32)`, one value per output grid; `Max<f32>` (and `Min`,
    // `Sum`) outputs are reductions.
    let mut more_outs = Vec::new();
    let mut out_reduce = None;
    let out = match &sig.output {
        ReturnType::Type(_, ty) if mode == Mode::Stencil && reduction_of(ty).is_some() => match reduction_of(ty) {
            Some(Ok(o)) => {
                out_reduce = o.reduce;
                Some(o.ty)
            }
            Some(Err(e)) => {
                errors.push(e);
                None
            }
            None => None,
        },
        ReturnType::Type(_, ty) if matches!(&**ty, Type::Tuple(_)) => {
            let Type::Tuple(t) = &**ty else { unreachable!() };
            let kinds: Vec<syn::Result<OutType>> = t.elems.iter().map(out_type).collect();
            if mode != Mode::Stencil {
                errors.spanned(
                    ty,
                    format!("a {what} updates one field; several outputs (a tuple) belong to `#[clforge::stencil]`"),
                );
                None
            } else if t.elems.len() < 2 || t.elems.len() > MAX_OUTPUTS {
                errors.spanned(
                    ty,
                    format!(
                        "a stencil returns one value per output grid: a tuple of 2 to {MAX_OUTPUTS} scalars, e.g. \
                         `-> (f32, f32)`, or one scalar"
                    ),
                );
                None
            } else if kinds.iter().any(|k| k.is_err()) {
                for k in kinds.into_iter().filter_map(|k| k.err()) {
                    errors.push(k);
                }
                None
            } else {
                let kinds: Vec<OutType> = kinds.into_iter().flatten().collect();
                more_outs = kinds[1..].to_vec();
                out_reduce = kinds[0].reduce;
                Some(kinds[0].ty)
            }
        }
        ReturnType::Type(_, ty) => match scalar_of(ty) {
            Some(s) if s.is_float() || matches!(s, Scalar::I32 | Scalar::U32 | Scalar::U8) => Some(s),
            // A bit-packed lattice site (`Lattice<bool>`).
            Some(Scalar::Bool) if mode == Mode::Lattice => Some(Scalar::Bool),
            _ => {
                errors.spanned(
                    ty,
                    if mode == Mode::Lattice {
                        "a lattice rule returns the new value of its site: `f32`, `f64`, `i32`, `u32`, `u8` or `bool` \
                         (bit-packed)"
                    } else {
                        "a stencil returns the new value of one point: `f32`, `f64`, `i32`, `u32` or `u8`"
                    },
                );
                None
            }
        },
        ReturnType::Default => {
            errors.spanned(
                &sig.ident,
                "a stencil returns the new value of one point; add `-> f32` (or `f64`, ...)",
            );
            None
        }
    };
    Outputs {
        out,
        out_reduce,
        more_outs,
    }
}

/// The function's arguments as the model holds them, with what the signature fixes.
#[derive(Default)]
struct Arguments {
    args: Vec<Arg>,
    /// The grids' rank, at the first grid.
    rank: Option<(usize, proc_macro2::Span)>,
    /// The in-place state (a sweep's field, a lattice's state): its index, type and span.
    swept: Option<(usize, Scalar, proc_macro2::Span)>,
    /// A lattice rule's `rng: &Draws`: its position in the signature and its name.
    draws: Option<(usize, String, proc_macro2::Span)>,
    /// No argument was rejected. A rejected argument is missing from `args` (or a grid of
    /// another rank): the body would report its uses as unknown names or wrong `.at` arities,
    /// so it is parsed only without.
    ok: bool,
}

fn arguments(sig: &syn::Signature, mode: Mode, errors: &mut Errors) -> Arguments {
    let mut a = Arguments {
        ok: true,
        ..Arguments::default()
    };
    for (position, input) in sig.inputs.iter().enumerate() {
        let FnArg::Typed(pt) = input else {
            errors.spanned(input, "stencils are free functions; `self` is not allowed");
            a.ok = false;
            continue;
        };
        let Pat::Ident(pat) = &*pt.pat else {
            errors.spanned(&pt.pat, "stencil arguments must be plain names");
            a.ok = false;
            continue;
        };
        argument(&mut a, errors, mode, position, pat.ident.clone(), &pt.ty);
    }
    a
}

/// Adds argument `name: ty` at `position` to `a`, or refuses it.
fn argument(a: &mut Arguments, errors: &mut Errors, mode: Mode, position: usize, name: syn::Ident, ty: &Type) {
    let what = mode.what();
    match parse_arg_type(ty) {
        Ok(ArgType::Grid {
            rank: r,
            elem,
            span,
            in_place,
        }) => {
            if in_place.is_some_and(|m| m != mode) {
                a.ok = false;
                errors.push(syn::Error::new(
                    span,
                    match in_place {
                        Some(Mode::Sweep) => {
                            format!("`Sweep` fields belong to `#[clforge::sweep]`; a {what} reads `&Grid<T>`")
                        }
                        _ => format!("`Lattice` states belong to `#[clforge::lattice]`; a {what} reads `&Grid<T>`"),
                    },
                ));
            } else if in_place.is_some() {
                match a.swept {
                    Some(_) => {
                        a.ok = false;
                        errors.push(syn::Error::new(
                            span,
                            format!("a {what} updates one field in place; read the others as `&Grid<T>`"),
                        ));
                    }
                    None => a.swept = Some((a.args.len(), elem, span)),
                }
            }
            match a.rank {
                Some((r0, _)) if r0 != r => {
                    a.ok = false;
                    errors.push(syn::Error::new(
                        span,
                        format!("all grids of a stencil have one dimension; this is a {r}-D grid but earlier ones are {r0}-D"),
                    ))
                }
                None => a.rank = Some((r, span)),
                _ => {}
            }
            a.args.push(Arg::Field(Field {
                name,
                elem,
                packed: None,
            }));
        }
        Ok(ArgType::Draws(span)) => {
            if mode != Mode::Lattice {
                a.ok = false;
                errors.push(syn::Error::new(
                    span,
                    format!("random streams (`&Draws`) belong to `#[clforge::lattice]` rules, not to a {what}"),
                ));
            } else if a.draws.is_some() {
                a.ok = false;
                errors.push(syn::Error::new(
                    span,
                    "a lattice rule has one random stream; draw several numbers from it with `rng.draw(0)`, \
                     `rng.draw(1)`, ...",
                ));
            } else {
                a.draws = Some((position, syn::ext::IdentExt::unraw(&name).to_string(), span));
            }
        }
        Ok(ArgType::Params(ty)) => a.args.push(Arg::Params { name, ty }),
        Ok(ArgType::Point(span)) => {
            if mode != Mode::Stencil {
                a.ok = false;
                errors.push(syn::Error::new(
                    span,
                    format!("the point's coordinates (`at: Point`) are read by stencils, not by a {what}"),
                ));
            } else if a.args.iter().any(|a| matches!(a, Arg::Point { .. })) {
                a.ok = false;
                errors.push(syn::Error::new(span, "a stencil takes one `Point` argument"));
            } else {
                a.args.push(Arg::Point { name });
            }
        }
        Ok(ArgType::Scalar(Scalar::U8 | Scalar::Bool)) => {
            a.ok = false;
            errors.spanned(
                ty,
                "scalar arguments are `f32`, `f64`, `i32` or `u32`; pass masks as grids",
            )
        }
        Ok(ArgType::Scalar(ty)) => a.args.push(Arg::Scalar { name, ty }),
        Err(e) => {
            a.ok = false;
            errors.push(e)
        }
    }
}

/// A sweep's field and a lattice rule's state: present, and of the type the function returns.
fn check_state(
    sig: &syn::Signature,
    mode: Mode,
    swept: Option<(usize, Scalar, proc_macro2::Span)>,
    out: Option<Scalar>,
    errors: &mut Errors,
) {
    if mode == Mode::Lattice {
        match (swept, out) {
            (None, _) => errors.spanned(
                &sig.ident,
                "a lattice rule updates its state in place: give it an argument `s: &Lattice<i32>` (`Lattice1`, \
                 `Lattice3` in 1-D and 3-D), read it with `s.at(..)` and return the site's new value",
            ),
            (Some((_, elem, span)), Some(o)) if elem != o => errors.push(syn::Error::new(
                span,
                format!(
                    "the state holds `{}` but the rule returns `{}`: the returned value replaces the site's",
                    elem.rust(),
                    o.rust()
                ),
            )),
            _ => {}
        }
    }
    if mode == Mode::Sweep {
        match (swept, out) {
            (None, _) => errors.spanned(
                &sig.ident,
                "a sweep updates one field in place: give it an argument `c: &Sweep<f32>` (`Sweep1`, `Sweep3` in \
                 1-D and 3-D) and read it with `c.new(..)` and `c.old(..)`",
            ),
            (Some((_, elem, span)), Some(o)) if elem != o => errors.push(syn::Error::new(
                span,
                format!(
                    "the swept field holds `{}` but the sweep returns `{}`: the returned value replaces the field's",
                    elem.rust(),
                    o.rust()
                ),
            )),
            _ => {}
        }
    }
}

/// One element of a stencil's tuple: a scalar (an output grid) or a reduction (`Max<f32>`).
fn out_type(ty: &Type) -> syn::Result<OutType> {
    if let Some(r) = reduction_of(ty) {
        return r;
    }
    match scalar_of(ty) {
        Some(s) if s.is_float() || matches!(s, Scalar::I32 | Scalar::U32 | Scalar::U8) => {
            Ok(OutType { ty: s, reduce: None })
        }
        _ => Err(syn::Error::new_spanned(
            ty,
            "each output of a stencil is `f32`, `f64`, `i32`, `u32` or `u8` (a grid), or a reduction `Max<T>`, \
             `Min<T>`, `Sum<T>` of `f32`, `f64`, `i32` or `u32`",
        )),
    }
}

/// `Max<f32>`, `Min<..>`, `Sum<..>`: a reduction output; `None` for another type.
fn reduction_of(ty: &Type) -> Option<syn::Result<OutType>> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let op = crate::model::ReduceOp::from_ident(&last.ident.to_string())?;
    let elem = match &last.arguments {
        PathArguments::AngleBracketed(a) => a.args.iter().find_map(|g| match g {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        }),
        _ => None,
    };
    Some(match elem.and_then(scalar_of) {
        Some(s) if s.is_float() || matches!(s, Scalar::I32 | Scalar::U32) => Ok(OutType {
            ty: s,
            reduce: Some(op),
        }),
        _ => Err(syn::Error::new_spanned(
            ty,
            format!(
                "a reduction reduces `f32`, `f64`, `i32` or `u32`: `{}<f32>`, ...",
                op.rust()
            ),
        )),
    })
}

enum ArgType {
    Grid {
        rank: usize,
        elem: Scalar,
        span: proc_macro2::Span,
        in_place: Option<Mode>,
    },
    /// `rng: &Draws`: a lattice rule's random stream.
    Draws(proc_macro2::Span),
    Params(syn::Path),
    Scalar(Scalar),
    /// `at: Point`: the updated point's index and the grid's extents.
    Point(proc_macro2::Span),
}

fn parse_arg_type(ty: &Type) -> syn::Result<ArgType> {
    if let Some(s) = scalar_of(ty) {
        return Ok(ArgType::Scalar(s));
    }
    if let Type::Path(p) = ty {
        if p.qself.is_none()
            && p.path
                .segments
                .last()
                .is_some_and(|l| l.ident == "Point" && l.arguments.is_empty())
        {
            return Ok(ArgType::Point(ty.span()));
        }
    }
    let Type::Reference(r) = ty else {
        return Err(syn::Error::new_spanned(
            ty,
            "stencil arguments are grids (`&Grid<f32>`), a params struct (`&Coeffs`) or scalars (`f32`)",
        ));
    };
    if let Some(m) = &r.mutability {
        return Err(syn::Error::new_spanned(
            m,
            "inputs are read-only; remove `mut`: the function returns the new value of its point and the runtime writes it (a sweep's in-place field is `c: &Sweep<f32>`, read with `c.new(..)` and `c.old(..)`)",
        ));
    }
    let Type::Path(p) = &*r.elem else {
        return Err(syn::Error::new_spanned(
            &r.elem,
            "expected a grid (`Grid<f32>`) or a params struct",
        ));
    };
    let Some(last) = p.path.segments.last() else {
        return Err(syn::Error::new_spanned(&r.elem, "expected a type"));
    };
    if last.ident == "Draws" && last.arguments.is_empty() {
        return Ok(ArgType::Draws(last.ident.span()));
    }
    let Some((rank, in_place)) = grid_rank(&last.ident.to_string()) else {
        return Ok(ArgType::Params(p.path.clone()));
    };
    let elem_ty = match &last.arguments {
        PathArguments::AngleBracketed(a) => a.args.iter().find_map(|g| match g {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        }),
        _ => None,
    };
    let Some(elem_ty) = elem_ty else {
        return Err(syn::Error::new_spanned(
            last,
            "name the element type of the grid, e.g. `Grid<f32>`",
        ));
    };
    match scalar_of(elem_ty) {
        // `bool` sites are bit-packed (32 per word): the state of a lattice rule only.
        Some(s) if s != Scalar::Bool || in_place == Some(Mode::Lattice) => Ok(ArgType::Grid {
            rank,
            elem: s,
            span: last.ident.span(),
            in_place,
        }),
        _ => Err(syn::Error::new_spanned(
            elem_ty,
            "unsupported grid element type; grids hold `f32`, `f64` (values) or `u8`, `i32`, `u32` (masks), and a \
             lattice rule's state may also be `Lattice<bool>` (bit-packed sites)",
        )),
    }
}
