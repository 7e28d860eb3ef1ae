//! Derive macros for kiln: `#[derive(Route)]` turns a struct into a typed route.
//!
//! Use it through `kiln::Route`; the generated code names `::kiln` paths.

mod asset;
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

/// A link to a static asset, checked and content-hashed at compile time:
/// `asset!("site.css")` is `"/static/site.3f9a1c0b.css"`.
///
/// The file is read from the `public/` folder beside the calling crate's `Cargo.toml`;
/// a file that does not exist, or a path that leaves the folder, does not compile. The
/// crate is rebuilt when the file changes, so the link changes with its content and
/// can be cached forever (`kiln::App::assets` serves it so).
#[proc_macro]
pub fn asset(input: TokenStream) -> TokenStream {
    asset::expand(input.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}
