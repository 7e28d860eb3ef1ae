//! One difference between two OpenAPI documents, and whether it can break a client:
//! what the drift check (`drift.rs`) and the schema comparison (`schema_diff.rs`) both
//! report.

use std::fmt;

/// Whether a change can break a client written against the old document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChangeKind {
    /// An operation or field removed, a type changed or narrowed, a new required input,
    /// a response that may now lack a field.
    Breaking,
    /// A new operation, an optional input, a field more in a response.
    Additive,
}

/// One difference between two documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Breaking or additive.
    pub kind: ChangeKind,
    /// Where: `POST /api/pages request body application/json: .meta.author`.
    pub at: String,
    /// What changed: `type changed from boolean to string`.
    pub what: String,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ChangeKind::Breaking => "breaking",
            ChangeKind::Additive => "additive",
        };
        write!(f, "{kind}: {}: {}", self.at, self.what)
    }
}
