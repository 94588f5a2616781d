//! Compile-time checks of the types the macros assume for values they cannot see the type of
//! (params members, constants): the generated code calls [`assumed`] at the user's token, and a
//! wrong assumption is a compile error there that says what happened and what to write.

/// `Self` is `T`: implemented for every type and itself only.
#[diagnostic::on_unimplemented(
    message = "the generated OpenCL reads this value as `{T}`, but it is `{Self}`",
    label = "read as `{T}` by the kernel",
    note = "`#[stencil]` cannot see the types of params members and constants; it takes them from how \
            the value is used. Where the use does not say (a cast, a comparison with a literal), name \
            the type with a `let`, e.g. `let w: {Self} = k.w;`"
)]
pub trait AssumedType<T> {}

impl<T> AssumedType<T> for T {}

/// `Self as T` is one of the casts the generated OpenCL performs with C's conversion and Rust's
/// meaning: any number to a float, an integer to an integer.
#[diagnostic::on_unimplemented(
    message = "the generated OpenCL cannot cast this `{Self}` to `{T}` with Rust's meaning",
    label = "`{Self} as {T}` in the kernel",
    note = "a params member of unseen type is cast in OpenCL C, which agrees with Rust for a number to \
            a float and an integer to an integer; for a float to an integer, name the member's type \
            with a `let` first (`let w: f32 = k.w; w as i32`), so the kernel saturates as Rust does"
)]
pub trait CastsTo<T> {}

macro_rules! casts_to {
    ($to:ty: $($from:ty),*) => {
        $(impl CastsTo<$to> for $from {})*
    };
}

casts_to!(f32: i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);
casts_to!(f64: i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);
casts_to!(u8: i8, u8, i16, u16, i32, u32, i64, u64);
casts_to!(i32: i8, u8, i16, u16, i32, u32, i64, u64);
casts_to!(u32: i8, u8, i16, u16, i32, u32, i64, u64);

/// Compiles only when `value as T` is a cast [`CastsTo`] allows.
pub fn castable<T, U: CastsTo<T>>(value: U) {
    let _ = value;
}

/// Compiles only when `value` has the type `T` the kernel assumed.
pub fn assumed<T, U: AssumedType<T>>(value: U) {
    let _ = value;
}
