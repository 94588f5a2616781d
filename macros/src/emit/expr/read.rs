//! Grid reads addressed per [`Access`]: global, vector (`vload8`, aligned rows), tiles and
//! planes in local memory, the strip's ring, packed grids unpacked.

use super::bits::{bits_window, site_bit};
use super::{coord_name, linear, ty_vec, Access, Emitter, P_ATOM, P_UNARY};
use crate::model::{Boundary, Scalar};

/// The macro that reads the `LANES` points at x offset `dx` from an aligned row position:
/// `CLFORGE_AV` (the vector itself), `CLFORGE_AX_M1`, `CLFORGE_AX_P2`, ...
pub fn aligned_macro(dx: i64) -> String {
    match dx {
        0 => "CLFORGE_AV".into(),
        d if d > 0 => format!("CLFORGE_AX_P{d}"),
        d => format!("CLFORGE_AX_M{}", d.unsigned_abs()),
    }
}

/// The definitions of the aligned reads of x offsets `-halo ..= halo` (`halo` at most
/// `LANES`): `CLFORGE_AV(T, p, i)` the vector of type `T` at `p + i` (`i` a multiple of its
/// lanes), and per offset the `LANES` points from there, lane by lane from the vector and the
/// one before or after it (the compiler loads each vector once for all the reads that share it).
pub fn aligned_macros(halo: usize, vlanes: usize) -> Vec<String> {
    let l = vlanes as i64;
    let mut out = vec!["#define CLFORGE_AV(T, p, i) (*(__global const T*)((p) + (i)))".to_string()];
    for dx in (-(halo as i64)..=halo as i64).filter(|&d| d != 0) {
        let lanes: Vec<String> = (0..l)
            .map(|i| {
                let s = i + dx;
                let (vector, lane) = if s < 0 {
                    (format!("(i) - {l}"), s + l)
                } else if s >= l {
                    (format!("(i) + {l}"), s - l)
                } else {
                    ("i".to_string(), s)
                };
                format!("CLFORGE_AV(T, p, {vector}).s{lane:x}")
            })
            .collect();
        out.push(format!(
            "#define {}(T, p, i) ((T)({}))",
            aligned_macro(dx),
            lanes.join(", ")
        ));
    }
    out
}

/// The value of point `at` (a linear index) of grid `name` packed `bits` bits per point in
/// 32-bit words (`#[stencil(packed(name = bits))]`): word `at >> S`, bits from
/// `(at & M) * bits`, with `32 / bits = 2^S` points per word and `M = 2^S - 1`; a `u8` grid's
/// value cast back to `uchar` (a cast's precedence; a `u32` grid's is an atom).
///
/// `packed_read("cell", "c + 1", 2, Scalar::U8)` is
/// `(uchar)((cell[(c + 1) >> 4] >> (((c + 1) & 15) * 2)) & 3u)`.
pub fn packed_read(name: &str, at: &str, bits: u32, elem: Scalar) -> String {
    let per = 32 / bits;
    let (shift, last, mask) = (per.trailing_zeros(), per - 1, (1u32 << bits) - 1);
    let simple = at.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        || (at.starts_with("AT(") && at.matches('(').count() == 1);
    let i = if simple { at.to_string() } else { format!("({at})") };
    let at_bit = match bits {
        1 => format!("({i} & {last})"),
        b => format!("(({i} & {last}) * {b})"),
    };
    let word = format!("({name}[{i} >> {shift}] >> {at_bit}) & {mask}u");
    match elem {
        Scalar::U32 => format!("({word})"),
        e => format!("({})({word})", e.cl()),
    }
}

/// The vector variant's helper that reads `LANES` consecutive points of a grid packed `bits`
/// bits per point (`uint8`), defined by [`unpack_lanes_helper`].
pub fn unpack_lanes_fn(bits: u32, vlanes: usize) -> String {
    format!("clforge_unpack{vlanes}_b{bits}")
}

/// The definition of [`unpack_lanes_fn`]`(bits)`: lane `k` is [`packed_read`] at `i + k`.
pub fn unpack_lanes_helper(bits: u32, vlanes: usize) -> Vec<String> {
    let per = 32 / bits;
    let mut out = vec![
        format!(
            "/* {vlanes} consecutive points of a grid packed {bits} bit{} per point ({per} a word),",
            if bits == 1 { "" } else { "s" }
        ),
        "   read lane by lane: they may straddle two words */".into(),
        format!(
            "uint{vlanes} {}(__global const uint* clforge_w, const int clforge_i)",
            unpack_lanes_fn(bits, vlanes)
        ),
        "{".into(),
        format!("    uint{vlanes} clforge_v;"),
    ];
    for k in 0..vlanes {
        let at = if k == 0 {
            "clforge_i".to_string()
        } else {
            format!("clforge_i + {k}")
        };
        out.push(format!(
            "    clforge_v.s{k:x} = {};",
            packed_read("clforge_w", &at, bits, Scalar::U32)
        ));
    }
    out.push("    return clforge_v;".into());
    out.push("}".into());
    out
}

impl Emitter<'_> {
    /// The updated point's index along `axis` in the whole grid: the kernel's coordinate plus
    /// the slab's origin, wrapped where periodic (a split slab's halo planes past the grid's
    /// end); in vector code the lanes' `x` are consecutive.
    pub(super) fn point(&self, axis: usize) -> String {
        let vlanes = self.lanes;
        let (v, o, n) = (
            ["x", "y", "z"][axis],
            ["ox", "oy", "oz"][axis],
            ["gnx", "gny", "gnz"][axis],
        );
        let periodic = self.k.boundary == Boundary::Periodic;
        if self.vector() {
            let lanes: Vec<String> = (0..vlanes).map(|i| i.to_string()).collect();
            let step = if axis == 0 {
                format!(" + (int{vlanes})({})", lanes.join(", "))
            } else {
                String::new()
            };
            let base = format!("(int{vlanes})({v} + {o}){step}");
            if periodic {
                format!("(({base}) % (int{vlanes})({n}))")
            } else {
                format!("({base})")
            }
        } else if periodic {
            format!("(({v} + {o}) % {n})")
        } else {
            format!("({v} + {o})")
        }
    }

    /// A grid read as text and its precedence (an atom, or a cast for a packed `u8` grid).
    pub(super) fn read(&self, arg: usize, offset: [i64; 3]) -> (String, u8) {
        match (self.packed(arg), self.access) {
            (
                Some((_, Scalar::U8)),
                Access::Global | Access::Interior | Access::Steps | Access::Tiled | Access::March,
            ) if !self.staged_here(arg) => (self.read_text(arg, offset), P_UNARY),
            _ => (self.read_text(arg, offset), P_ATOM),
        }
    }

    /// Whether argument `arg` is read from local memory by this variant (a tile holds values,
    /// packed grids unpacked).
    pub(super) fn staged_here(&self, arg: usize) -> bool {
        match self.access {
            Access::Tiled | Access::March => self.k.access.staged[arg],
            Access::Steps => crate::lower::variants::steps_staged(self.k, arg),
            _ => false,
        }
    }

    pub(super) fn read_text(&self, arg: usize, offset: [i64; 3]) -> String {
        let vlanes = self.lanes;
        let name = &self.k.arg_names[arg];
        let wrapped = self.k.boundary != Boundary::Fixed
            && !matches!(
                self.access,
                Access::Interior | Access::VectorInterior | Access::VectorAligned
            );
        let coords = |vector: bool| {
            let axes: Vec<String> = (0..3)
                .map(|a| {
                    if vector && a == 0 && offset[0] != 0 {
                        linear("x", [offset[0], 0, 0], "", "")
                    } else {
                        coord_name(a, offset[a])
                    }
                })
                .collect();
            format!("AT({})", axes.join(", "))
        };
        match self.access {
            Access::Tiled if self.k.access.staged[arg] => {
                format!("{}[{}]", self.k.tile_names[arg], linear("t", offset, "TW", "TWH"))
            }
            Access::March if self.k.access.staged[arg] => {
                let plane = self.k.plane_names[arg]
                    .iter()
                    .find(|(dz, _)| *dz == offset[2])
                    .map_or("/* no plane: a read the access analysis missed */", |(_, n)| n.as_str());
                format!("{plane}[{}]", linear("t", [offset[0], offset[1], 0], "TW", ""))
            }
            Access::Steps if self.k.access.iterated == Some(arg) => {
                format!("s_cur[{}]", linear("t", offset, "SW", "SWH"))
            }
            Access::Steps if crate::lower::variants::steps_staged(self.k, arg) => {
                format!("{}[{}]", self.k.tile_names[arg], linear("t", offset, "SW", "SWH"))
            }
            Access::Bits if self.k.access.iterated == Some(arg) => site_bit(&bits_window(offset)),
            Access::Strip if self.k.access.iterated == Some(arg) => {
                let at = if wrapped && offset != [0, 0, 0] {
                    coords(false)
                } else {
                    linear("c", offset, "nx", "nxy")
                };
                format!("SW_STATE({}, {}, {at})", offset[0], offset[1])
            }
            Access::VectorAligned if self.packed(arg).is_none() => {
                let row = linear("c", [0, offset[1], offset[2]], "nx", "nxy");
                let ty = match &self.k.args[arg] {
                    crate::model::Arg::Field(f) => ty_vec(f.elem, self.lanes),
                    _ => ty_vec(self.k.out, self.lanes),
                };
                format!("{}({ty}, {name}, {row})", aligned_macro(offset[0]))
            }
            Access::Vector | Access::VectorInterior | Access::VectorAligned => {
                // The vector path never wraps along x, so x-only offsets stay linear.
                let x_only = offset[1] == 0 && offset[2] == 0;
                let at = if wrapped && !x_only {
                    coords(true)
                } else {
                    linear("c", offset, "nx", "nxy")
                };
                match self.packed(arg) {
                    // Lane by lane: eight points may straddle two words.
                    Some((bits, elem)) => {
                        let lanes = format!("{}({name}, {at})", unpack_lanes_fn(bits, self.lanes));
                        match elem {
                            Scalar::U32 => lanes,
                            e => format!("convert_{}({lanes})", ty_vec(e, self.lanes)),
                        }
                    }
                    None => format!("vload{vlanes}(0, {name} + {at})"),
                }
            }
            _ => {
                let at = if wrapped && offset != [0, 0, 0] {
                    coords(false)
                } else {
                    linear("c", offset, "nx", "nxy")
                };
                match self.packed(arg) {
                    Some((bits, elem)) => packed_read(name, &at, bits, elem),
                    None => format!("{name}[{at}]"),
                }
            }
        }
    }

    /// The bits per point and element type of argument `arg` if it is a packed grid.
    pub(super) fn packed(&self, arg: usize) -> Option<(u32, Scalar)> {
        match &self.k.args[arg] {
            crate::model::Arg::Field(f) => f.packed.map(|b| (b, f.elem)),
            _ => None,
        }
    }
}
