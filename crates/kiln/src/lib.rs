//! kiln: the framework on top of `kiln-http` (routing, extractors, responses, HTML,
//! static files, access log, database).

pub mod db;
pub mod static_files;

pub use kiln_http as http;
