//! Macros for kiln: `#[derive(Route)]` turns a struct into a typed route,
//! `#[derive(FromRow)]` reads one from a database row, `migrations!()` embeds the
//! app's SQL migrations.
//!
//! Use them through `kiln` (`kiln::Route`, `kiln::db::FromRow`,
//! `kiln::db::migrations!`); the generated code names `::kiln` paths.

mod asset;
mod from_row;
mod migrations;
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
/// - The struct's doc comment becomes the route's summary (first paragraph) and
///   description in the API document (`kiln::openapi`), and each field a typed
///   parameter there.
/// - Compile errors point at a capture without a field, a field that is neither
///   captured nor a query parameter, and a malformed pattern.
#[proc_macro_derive(Route, attributes(route, query))]
pub fn derive_route(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    route::expand(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Reads a struct from a database row: each field from the column of its name,
/// decoded with `kiln::db::FromValue` (`Option<T>` for a column that may be `NULL`).
///
/// ```ignore
/// #[derive(kiln::db::FromRow)]
/// struct Post {
///     id: i64,
///     #[from_row(rename = "headline")]
///     title: String,
///     summary: Option<String>,
///     #[from_row(default)]
///     score: i32,
/// }
/// ```
///
/// - `#[from_row(rename = "column")]` reads another column.
/// - `#[from_row(default)]` gives the field its `Default` when the result has no
///   such column (a `NULL` is still an error unless the field is an `Option`).
/// - Tuple structs read their columns by position.
#[proc_macro_derive(FromRow, attributes(from_row))]
pub fn derive_from_row(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    from_row::expand(&input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// The crate's `migrations/NNNN_name.sql` files (or those of the folder named, relative to
/// the crate's `Cargo.toml`), embedded at compile time, in the order of their numbers,
/// as a `&'static [kiln::db::Migration]`.
///
/// ```ignore
/// let options = kiln::db::Options::default().migrations(kiln::db::migrations!());
/// ```
///
/// A file whose name is not `NNNN_name.sql`, or two files with one number, do not
/// compile. Cargo rebuilds when a file changes; to rebuild when one is added, put
/// `println!("cargo:rerun-if-changed=migrations");` in the crate's `build.rs`.
#[proc_macro]
pub fn migrations(input: TokenStream) -> TokenStream {
    migrations::expand(input.into()).unwrap_or_else(syn::Error::into_compile_error).into()
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
