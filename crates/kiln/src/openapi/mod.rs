//! The API contract (cargo feature `openapi`): an OpenAPI 3.1 document of the app,
//! derived from its types with no annotations.
//!
//! - [`App::api`](crate::App::api) registers a handler as [`App::route`](crate::App::route)
//!   does and describes it from its route, its arguments ([`Describe`]) and its output
//!   ([`DescribeResponse`]); [`App::route`](crate::App::route) describes the route only.
//! - [`App::openapi`](crate::App::openapi) builds the [`Document`]: paths with typed
//!   parameters, request bodies by content type, security schemes, responses with the
//!   statuses of each extractor's rejections, summaries from the route's doc comment,
//!   and the schemas of the app's types from schemars (JSON Schema 2020-12,
//!   honouring serde's attributes). [`Document::undescribed`] lists what it could not
//!   describe exactly.
//! - [`Document::typescript`] writes a TypeScript client of it: the schemas as types
//!   and one `fetch` function per operation, with every status's body typed.
//! - [`App::openapi_routes`](crate::App::openapi_routes) serves the document as JSON
//!   and a reference page for people, rendered by `kiln::html!` from the document.
//! - Under a prefix given to [`App::problem_json`](crate::App::problem_json), error
//!   responses are described as `application/problem+json` with the `Problem` schema.
//! - [`assert_matches`] keeps the document from drifting: it compares it with a
//!   committed copy and fails on a breaking change ([`compare`] classifies each).
//!
//! The types a body, query or JSON response names implement [`JsonSchema`]: derive it
//! beside serde's traits. Without schemars among the app's own dependencies, point the
//! derive at kiln's: `#[schemars(crate = "kiln::openapi::schemars")]`.
//!
//! Nothing here runs per request: the descriptions are functions kept with the routes,
//! called when the document is built; a served document is built once, with the app. The design, and why it is `.api` rather than a
//! bound on `.route`, is `docs/openapi.md`.

mod change;
mod client;
mod describe;
mod document;
mod drift;
mod extractors;
mod operation;
mod page;
mod params;
mod problem;
mod responses;
mod schema_diff;
mod schemas;
mod serve;

pub(crate) use describe::Describer;
pub(crate) use serve::{Served, install_served};

pub use change::{Change, ChangeKind};
pub use describe::{Describe, DescribeResponse, DescribedHandler};
pub use document::{Document, OPENAPI_VERSION, Undescribed};
pub use drift::{UPDATE_ENV, assert_matches, compare};
pub use operation::{Operation, ParamIn, Security};
pub use responses::DescribePart;
pub use schemars::JsonSchema;

/// What `#[derive(JsonSchema)]` names, for an app without schemars among its own
/// dependencies: `#[schemars(crate = "kiln::openapi::schemars")]`.
///
/// Only these items rather than the whole crate: rustc shortens a type's name in its
/// messages only while no other item visible from the crate's dependencies has that
/// name, and schemars' `Contract::Serialize` would make every `Serialize` in an app's
/// compile errors print in full.
#[doc(hidden)]
pub mod schemars {
    pub use schemars::{
        _private, _schemars_maybe_schema_id, _schemars_maybe_to_value, JsonSchema, Schema, SchemaGenerator,
        json_schema, transform,
    };
}
