//! Applying the app's migrations to a SQLite file, all in one `IMMEDIATE`
//! transaction, so that a crash mid-way leaves the file as it was.

use rusqlite::{Connection, TransactionBehavior, params};

use super::exec::error;
use crate::error::Error;
use crate::migrate::{Applied, Migration, TABLE, pending};

/// Brings the schema up to date; returns how many migrations ran.
pub(crate) fn migrate(conn: &mut Connection, migrations: &[Migration]) -> Result<usize, Error> {
    if migrations.is_empty() {
        return Ok(0);
    }
    let fail = |e: rusqlite::Error| Error::Migration(error(e).to_string());
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(fail)?;
    tx.execute_batch(&format!(
        "CREATE TABLE IF NOT EXISTS {TABLE} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, \
         checksum TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
    ))
    .map_err(fail)?;
    let applied: Vec<Applied> = tx
        .prepare(&format!("SELECT version, name, checksum FROM {TABLE} ORDER BY version"))
        .and_then(|mut s| {
            s.query_map([], |r| Ok(Applied { version: r.get(0)?, name: r.get(1)?, checksum: r.get(2)? }))?.collect()
        })
        .map_err(fail)?;
    let todo = pending(&applied, migrations)?;
    for m in &todo {
        tx.execute_batch(m.sql).map_err(|e| Error::Migration(format!("{}: {}", m.file_name(), error(e))))?;
        tx.execute(
            &format!("INSERT INTO {TABLE} (version, name, checksum) VALUES (?1, ?2, ?3)"),
            params![m.version, m.name, m.checksum()],
        )
        .map_err(fail)?;
    }
    tx.commit().map_err(fail)?;
    Ok(todo.len())
}
