//! The rows the TechEmpower workloads read and write.

use kiln::db::FromRow;
use serde::Serialize;

/// A row of the `world` table: an id in `1..=10000` and a random number in `1..=10000`.
///
/// Serialises as TechEmpower asks: `{"id":3217,"randomNumber":2149}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, FromRow)]
pub(crate) struct World {
    /// The row id, `1..=10000`.
    pub(crate) id: i32,
    /// The row's random number, `1..=10000`.
    #[serde(rename = "randomNumber")]
    #[from_row(rename = "randomnumber")]
    pub(crate) random_number: i32,
}

/// A row of the `fortune` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, FromRow)]
pub(crate) struct Fortune {
    /// The row id.
    pub(crate) id: i32,
    /// The fortune's text, unescaped: render it through an escaping template.
    pub(crate) message: String,
}

/// How many rows the `world` table holds; ids run from 1 to this.
pub(crate) const WORLD_ROWS: i32 = 10_000;

/// The most rows one request reads or writes, as TechEmpower's `queries` allows.
pub(crate) const MAX_ROWS: usize = 500;

/// The fortune the `/fortunes` test adds at request time, with id 0.
pub(crate) const ADDED_FORTUNE: &str = "Additional fortune added at request time.";

/// One world row by id.
pub(crate) const SELECT_WORLD: &str = "SELECT id, randomnumber FROM world WHERE id = $1";
