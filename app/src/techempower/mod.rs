//! The TechEmpower benchmark's database endpoints (`/db`, `/queries`, `/fortunes`,
//! `/updates`, `/cached-queries`) and the non-blocking report's `/mix`, written as
//! an app writes them: on `kiln::db`'s public API, with the schema and seeding in
//! the app's migrations (`app/migrations/0001_techempower.sql`).

mod blocking;
mod long_query;
mod mix;
mod model;
mod queries;
mod random;
mod routes;

pub(crate) use queries::Bench;
pub(crate) use routes::mount;
