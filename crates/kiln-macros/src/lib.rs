//! Derive macros for kiln: `#[derive(Route)]` turns a struct into a typed route.
//!
//! Use it through `kiln::Route`; the generated code names `::kiln` paths.

mod pattern;
mod route;

use proc_macro::TokenStream;

/// Makes a struct a typed route: it matches requests, extracts its fields from the
/// path and the query, and renders its own link with `Display`.
///
/// ```ignore
/// #[derive(kiln::Route)]
/// #[route("/writings/{page}")]
/// struct Writing { page: u32, lang: Option<String> }
/// ```
///
/// - `#[route("/pattern")]` or `#[route(POST, "/pattern")]` (the method defaults to `GET`).
/// - `{name}` captures one segment into the field `name`; `{*name}` captures the rest
///   of the path. Captured fields are parsed with `FromStr` and rendered with `Display`.
/// - A field of type `Option<T>` is an optional query parameter; `#[query]` makes a
///   required one.
/// - Compile errors point at a capture without a field, a field that is neither
///   captured nor a query parameter, and a malformed pattern.
#[proc_macro_derive(Route, attributes(route, query))]
pub fn derive_route(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    route::expand(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}
