//! Running one statement on a connection: binding `$n` parameters, decoding rows
//! and naming SQLite's errors. Runs on the database threads.

use std::cell::Cell;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ErrorCode, Statement};

use crate::call::{Fetch, Write};
use crate::error::{ConflictKind, Error};
use crate::row::{FromRow, Row, RowSource};
use crate::value::{Value, date_text, timestamp_text};

/// A parameter owned, so that it can travel to a database thread.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Param {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl rusqlite::ToSql for Param {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Param::Null => ValueRef::Null,
            Param::Int(v) => ValueRef::Integer(*v),
            Param::Float(v) => ValueRef::Real(*v),
            Param::Text(s) => ValueRef::Text(s.as_bytes()),
            Param::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

/// The app's parameters as SQLite stores them: booleans as 0/1, dates and
/// timestamps as the text SQLite's date functions read.
pub(crate) fn params(values: &[&dyn crate::ToParam]) -> Result<Vec<Param>, Error> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            Ok(match v.to_param() {
                Value::Null => Param::Null,
                Value::Bool(b) => Param::Int(i64::from(b)),
                Value::Int(n) => Param::Int(n),
                Value::Float(f) => Param::Float(f),
                Value::Text(s) => Param::Text(s.to_owned()),
                Value::Bytes(b) => Param::Blob(b.to_vec()),
                Value::Timestamp(micros) => Param::Text(timestamp_text(micros)),
                Value::Date(days) => Param::Text(date_text(days)),
                Value::Int4Array(_) | Value::Int8Array(_) => {
                    return Err(Error::Param { index: i + 1, message: "SQLite has no array type".into() });
                }
            })
        })
        .collect()
}

/// Binds `params` to `stmt`. `$1`, `$2`, ... name their parameter, whatever order
/// they appear in (SQLite itself numbers parameters by first appearance); other
/// placeholders (`?`, `:name`) take the parameters in order.
fn bind(stmt: &mut Statement<'_>, params: &[Param]) -> Result<(), Error> {
    let count = stmt.parameter_count();
    if count != params.len() {
        return Err(Error::Param {
            index: params.len().min(count) + 1,
            message: format!("the statement takes {count} parameters, {} given", params.len()),
        });
    }
    for slot in 1..=count {
        let numbered =
            stmt.parameter_name(slot).and_then(|n| n.strip_prefix('$')).and_then(|n| n.parse::<usize>().ok());
        let index = numbered.unwrap_or(slot);
        let value = params.get(index.wrapping_sub(1)).ok_or_else(|| Error::Param {
            index,
            message: format!("the statement names ${index}, but only {} parameters are given", params.len()),
        })?;
        stmt.raw_bind_parameter(slot, value).map_err(|e| Error::Param { index, message: e.to_string() })?;
    }
    Ok(())
}

/// Column positions found by name, remembered for the rest of a result: `FromRow`
/// asks for the same names, by the same `&'static str`, on every row, and SQLite
/// finds a name by comparing it with each column's, through its C API.
#[derive(Default)]
struct Columns {
    /// (name's address, its length, the column's position); the address is only compared.
    found: [Cell<(usize, usize, usize)>; COLUMNS_REMEMBERED],
    len: Cell<usize>,
}

/// How many column positions a result remembers.
const COLUMNS_REMEMBERED: usize = 16;

impl Columns {
    fn index_of(&self, row: &rusqlite::Row<'_>, name: &str) -> Option<usize> {
        let key = (name.as_ptr() as usize, name.len());
        let len = self.len.get();
        // Cell by cell: copying the whole table out of one `Cell` on every lookup
        // cost more than the search.
        if let Some(index) =
            self.found[..len].iter().map(Cell::get).find_map(|(at, n, i)| ((at, n) == key).then_some(i))
        {
            return Some(index);
        }
        let index = row.as_ref().column_index(name).ok()?;
        if len < COLUMNS_REMEMBERED {
            self.found[len].set((key.0, key.1, index));
            self.len.set(len + 1);
        }
        Some(index)
    }
}

struct SqliteRow<'r, 's> {
    row: &'r rusqlite::Row<'s>,
    columns: &'r Columns,
}

impl RowSource for SqliteRow<'_, '_> {
    fn index_of(&self, name: &str) -> Option<usize> {
        self.columns.index_of(self.row, name)
    }

    fn len(&self) -> usize {
        self.row.as_ref().column_count()
    }

    fn value(&self, index: usize) -> Result<Value<'_>, String> {
        Ok(match self.row.get_ref(index).map_err(|e| e.to_string())? {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(v) => Value::Int(v),
            ValueRef::Real(v) => Value::Float(v),
            ValueRef::Text(t) => {
                Value::Text(std::str::from_utf8(t).map_err(|e| format!("text that is not UTF-8: {e}"))?)
            }
            ValueRef::Blob(b) => Value::Bytes(b),
        })
    }

    fn names(&self) -> Vec<String> {
        self.row.as_ref().column_names().into_iter().map(str::to_owned).collect()
    }
}

/// What a reader thread answers for a statement that turns out to write.
pub(crate) const WRITES: &str = "the statement writes";

/// Runs a query and decodes its rows; on a reader (`read_only`), refuses a
/// statement that writes with [`WRITES`], so that the caller sends it to the writer.
pub(crate) fn query<T: FromRow>(
    conn: &Connection,
    sql: &str,
    params: &[Param],
    fetch: Fetch,
    read_only: bool,
) -> Result<Vec<T>, Error> {
    let mut stmt = conn.prepare_cached(sql).map_err(error)?;
    if read_only && !stmt.readonly() {
        return Err(Error::Query { code: None, message: WRITES.into() });
    }
    bind(&mut stmt, params)?;
    let mut rows = stmt.raw_query();
    let mut out = Vec::new();
    let columns = Columns::default();
    while let Some(row) = rows.next().map_err(error)? {
        out.push(T::from_row(&Row::new(&SqliteRow { row, columns: &columns }))?);
        if fetch == Fetch::First {
            break;
        }
    }
    Ok(out)
}

/// Runs a statement that writes: rows changed, or the new row's id.
pub(crate) fn write(conn: &Connection, sql: &str, params: &[Param], write: Write) -> Result<i64, Error> {
    let mut stmt = conn.prepare_cached(sql).map_err(error)?;
    bind(&mut stmt, params)?;
    if write == Write::Insert && stmt.column_count() > 0 {
        // `INSERT ... RETURNING col`: the id is the first column of the first row.
        let mut rows = stmt.raw_query();
        let row = rows.next().map_err(error)?.ok_or(Error::NotFound)?;
        return Row::new(&SqliteRow { row, columns: &Columns::default() }).get_at(0);
    }
    let changed = stmt.raw_execute().map_err(error)?;
    Ok(match write {
        Write::Execute => changed as i64,
        Write::Insert => conn.last_insert_rowid(),
    })
}

/// SQLite's error as the layer's: constraint violations and a locked database get
/// their own variants.
pub(crate) fn error(e: rusqlite::Error) -> Error {
    match &e {
        rusqlite::Error::SqliteFailure(failure, message) => {
            let message = message.clone().unwrap_or_else(|| failure.to_string());
            match (failure.code, failure.extended_code) {
                (ErrorCode::ConstraintViolation, rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE)
                | (ErrorCode::ConstraintViolation, rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY) => {
                    Error::Conflict { kind: ConflictKind::Unique, message }
                }
                (ErrorCode::ConstraintViolation, rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY) => {
                    Error::Conflict { kind: ConflictKind::ForeignKey, message }
                }
                (ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked, _) => Error::Unavailable(message),
                (_, code) => Error::Query { code: Some(format!("SQLite {code}")), message },
            }
        }
        _ => Error::Query { code: None, message: e.to_string() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (a INTEGER, b TEXT UNIQUE)").unwrap();
        conn
    }

    #[test]
    fn dollar_parameters_bind_by_number_whatever_their_order() {
        let conn = conn();
        let p = [Param::Int(7), Param::Text("seven".into())];
        write(&conn, "INSERT INTO t (b, a) VALUES ($2, $1)", &p, Write::Execute).unwrap();
        let rows: Vec<(i64, String)> = query(&conn, "SELECT a, b FROM t", &[], Fetch::All, true).unwrap();
        assert_eq!(rows, [(7, "seven".to_owned())]);
    }

    #[test]
    fn a_wrong_parameter_count_is_named() {
        let e = write(&conn(), "INSERT INTO t (a) VALUES ($1)", &[], Write::Execute).unwrap_err();
        assert!(e.to_string().contains("takes 1 parameters, 0 given"), "{e}");
    }

    #[test]
    fn a_reader_refuses_a_statement_that_writes() {
        let e = query::<(i64,)>(&conn(), "INSERT INTO t (a) VALUES (1) RETURNING a", &[], Fetch::All, true);
        assert_eq!(e.unwrap_err(), Error::Query { code: None, message: WRITES.into() });
    }

    #[test]
    fn a_duplicate_is_a_unique_conflict() {
        let conn = conn();
        let p = [Param::Text("x".into())];
        write(&conn, "INSERT INTO t (b) VALUES ($1)", &p, Write::Insert).unwrap();
        let e = write(&conn, "INSERT INTO t (b) VALUES ($1)", &p, Write::Insert).unwrap_err();
        assert!(e.is_unique_violation(), "{e:?}");
    }
}
