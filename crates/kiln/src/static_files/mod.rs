//! Static files: a folder (or one file) served from a per-worker cache of bytes and
//! pre-rendered headers, with validators, ranges and precompressed siblings, behind a
//! path resolver no traversal trick escapes.
//!
//! - `resolve`: request path → clean relative path, or 400/404.
//! - `cache`: per-worker entries, revalidated at most once per interval (a second by
//!   default, [`StaticDir::revalidate_every`]), bounded.
//! - `representation`: one file as served: stamp, bytes, `ETag`, header lines.
//! - `conditional`: `If-*` preconditions and `Range` → the answer to send.
//! - `encoding`: which precompressed sibling `Accept-Encoding` allows.
//! - `mime`: `Content-Type` from the extension.
//! - `service`: [`StaticDir`] and [`StaticFile`], tying them together.
//! - `route`: `App::static_dir` and `App::static_file`.

mod cache;
mod conditional;
mod encoding;
mod mime;
mod representation;
mod resolve;
mod route;
mod service;

pub use cache::REVALIDATE_EVERY;
pub use resolve::PathRefusal;
pub use service::{DEFAULT_CACHE_BYTES, DEFAULT_CACHE_ENTRIES, DEFAULT_MAX_CACHED_FILE, StaticDir, StaticFile};
