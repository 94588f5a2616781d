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

/// Compiles only when `value` has the type `T` the kernel assumed.
pub fn assumed<T, U: AssumedType<T>>(value: U) {
    let _ = value;
}
