//! The rows the TechEmpower workloads read and write.

use serde::Serialize;

/// A row of the `world` table: an id in `1..=10000` and a random number in `1..=10000`.
///
/// Serialises as TechEmpower asks: `{"id":3217,"randomNumber":2149}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct World {
    /// The row id, `1..=10000`.
    pub id: i32,
    /// The row's random number, `1..=10000`.
    #[serde(rename = "randomNumber")]
    pub random_number: i32,
}

/// A row of the `fortune` table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fortune {
    /// The row id.
    pub id: i32,
    /// The fortune's text, unescaped: render it through an escaping template.
    pub message: String,
}

/// How many rows the `world` table holds; ids run from 1 to this.
pub const WORLD_ROWS: i32 = 10_000;

/// The twelve fortunes of the TechEmpower `fortune` table, as seeded.
pub const FORTUNES: [(i32, &str); 12] = [
    (1, "fortune: No such file or directory"),
    (2, "A computer scientist is someone who fixes things that aren't broken."),
    (3, "After enough decimal places, nobody gives a damn."),
    (4, "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1"),
    (5, "A computer program does what you tell it to do, not what you want it to do."),
    (6, "Emacs is a nice operating system, but I prefer UNIX. \u{2014} Tom Christaensen"),
    (7, "Any program that runs right is obsolete."),
    (8, "A list is only as strong as its weakest link. \u{2014} Donald Knuth"),
    (9, "Feature: A bug with seniority."),
    (10, "Computers make very fast, very accurate mistakes."),
    (11, "<script>alert(\"This should not be displayed in a browser alert box.\");</script>"),
    (12, "フレームワークのベンチマーク"),
];

/// The fortune the `/fortunes` test adds at request time, with id 0.
pub const ADDED_FORTUNE: &str = "Additional fortune added at request time.";
