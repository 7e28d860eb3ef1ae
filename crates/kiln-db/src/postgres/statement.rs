//! Statements prepared once per connection: each SQL text is parsed and described
//! the first time a connection meets it, then bound by name.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use foldhash::fast::RandomState;

use super::types::result_format;

/// A result column: its name, its type, and the format kiln asks it in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Column {
    pub(crate) name: String,
    pub(crate) oid: u32,
    /// 1 (binary) for the types kiln decodes in binary, 0 (text) for the rest.
    pub(crate) format: i16,
}

impl Column {
    pub(crate) fn new(name: &str, oid: u32) -> Self {
        Column { name: name.to_owned(), oid, format: result_format(oid) }
    }
}

/// A statement prepared on one connection.
#[derive(Debug)]
pub(crate) struct Statement {
    pub(crate) name: String,
    /// The parameters' types, as the server inferred them.
    pub(crate) params: Vec<u32>,
    pub(crate) columns: Vec<Column>,
}

/// Statements one connection has prepared; past this many, the connection forgets
/// them all (and the server's copies with them: see [`Statements::remember`]).
pub(crate) const MAX_STATEMENTS: usize = 1024;

/// One connection's prepared statements, by SQL text.
#[derive(Default)]
pub(crate) struct Statements {
    by_sql: RefCell<HashMap<String, Rc<Statement>, RandomState>>,
    next: Cell<u64>,
}

impl Statements {
    pub(crate) fn get(&self, sql: &str) -> Option<Rc<Statement>> {
        self.by_sql.borrow().get(sql).cloned()
    }

    /// A fresh name for the next statement to prepare.
    pub(crate) fn name(&self) -> String {
        let n = self.next.get();
        self.next.set(n + 1);
        format!("k{n}")
    }

    /// Keeps `statement` for `sql`; returns the names to close on the server when
    /// the cache was full and is emptied (an app building SQL text per request).
    pub(crate) fn remember(&self, sql: &str, statement: Rc<Statement>) -> Vec<String> {
        let mut by_sql = self.by_sql.borrow_mut();
        let evicted = if by_sql.len() >= MAX_STATEMENTS {
            by_sql.drain().map(|(_, s)| s.name.clone()).collect()
        } else {
            Vec::new()
        };
        by_sql.insert(sql.to_owned(), statement);
        evicted
    }
}
