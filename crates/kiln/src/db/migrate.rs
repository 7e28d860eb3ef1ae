//! SQLite schema migrations, applied in order at start-up.
//!
//! `PRAGMA user_version` records how many have run; each runs in its own
//! transaction together with the bump of that number, so a crash mid-way leaves
//! the file at the previous version and the next start resumes from there.

use rusqlite::{Connection, TransactionBehavior, params};

use super::model::{FORTUNES, WORLD_ROWS};

/// One step of the schema's history.
type Migration = fn(&rusqlite::Transaction<'_>) -> rusqlite::Result<()>;

/// Every migration, oldest first. Append only: never edit one that has shipped.
const MIGRATIONS: &[Migration] = &[create_tables, seed_world, seed_fortune];

fn create_tables(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute_batch(
        "CREATE TABLE world (id INTEGER PRIMARY KEY, randomnumber INTEGER NOT NULL);
         CREATE TABLE fortune (id INTEGER PRIMARY KEY, message TEXT NOT NULL);",
    )
}

fn seed_world(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    tx.execute(
        "WITH RECURSIVE n(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM n WHERE id < ?1)
         INSERT INTO world (id, randomnumber) SELECT id, abs(random() % ?1) + 1 FROM n",
        params![WORLD_ROWS],
    )?;
    Ok(())
}

fn seed_fortune(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    let mut insert = tx.prepare("INSERT INTO fortune (id, message) VALUES (?1, ?2)")?;
    for (id, message) in FORTUNES {
        insert.execute(params![id, message])?;
    }
    Ok(())
}

/// Brings the schema up to date; returns how many migrations ran.
pub(crate) fn migrate(conn: &mut Connection) -> rusqlite::Result<usize> {
    let done: usize = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(done) {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        migration(&tx)?;
        tx.pragma_update(None, "user_version", index + 1)?;
        tx.commit()?;
    }
    Ok(MIGRATIONS.len().saturating_sub(done))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_once_and_seeds_both_tables() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), MIGRATIONS.len());
        assert_eq!(migrate(&mut conn).unwrap(), 0);
        let (count, min, max): (i32, i32, i32) = conn
            .query_row("SELECT count(*), min(randomnumber), max(randomnumber) FROM world", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .unwrap();
        assert_eq!(count, WORLD_ROWS);
        assert!(min >= 1 && max <= WORLD_ROWS);
        let fortunes: i32 = conn.query_row("SELECT count(*) FROM fortune", [], |r| r.get(0)).unwrap();
        assert_eq!(fortunes, 12);
    }
}
