//! Migrations supplied by the app: ordered SQL files, embedded at compile time,
//! applied at start-up in one transaction and recorded with a checksum in the
//! `kiln_migrations` table.
//!
//! What is refused, with a message saying which file: a recorded migration whose
//! file has changed since (its checksum differs), a recorded migration this binary
//! does not have (the database is newer than the binary), a migration missing in
//! the middle of the recorded ones, and two files with one number.

use sha2::{Digest, Sha256};

use crate::error::Error;

/// One migration: `migrations/0003_add_email.sql` is version 3, named `add_email`.
///
/// Apps embed theirs with `kiln::db::migrations!()`, which reads the crate's
/// `migrations/` folder at compile time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    /// Its number; migrations run in this order.
    pub version: u32,
    /// The rest of its file name, without the `.sql`.
    pub name: &'static str,
    /// The statements it runs.
    pub sql: &'static str,
}

impl Migration {
    /// A migration; used by `migrations!`.
    pub const fn new(version: u32, name: &'static str, sql: &'static str) -> Self {
        Migration { version, name, sql }
    }

    /// Its file name, as people know it: `0003_add_email.sql`.
    pub fn file_name(&self) -> String {
        format!("{:04}_{}.sql", self.version, self.name)
    }

    /// The SHA-256 of its SQL, in hex, as recorded when it was applied.
    pub fn checksum(&self) -> String {
        Sha256::digest(self.sql.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The table migrations are recorded in (created only when the app has migrations).
pub(crate) const TABLE: &str = "kiln_migrations";

/// A migration as the database recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Applied {
    pub(crate) version: u32,
    pub(crate) name: String,
    pub(crate) checksum: String,
}

/// The migrations still to apply, in order, or why the database cannot be migrated.
pub(crate) fn pending<'m>(applied: &[Applied], migrations: &'m [Migration]) -> Result<Vec<&'m Migration>, Error> {
    let refuse = |why: String| Err(Error::Migration(why));
    for pair in migrations.windows(2) {
        if pair[0].version >= pair[1].version {
            return refuse(format!(
                "{} and {} are out of order or share a number",
                pair[0].file_name(),
                pair[1].file_name()
            ));
        }
    }
    for recorded in applied {
        match migrations.iter().find(|m| m.version == recorded.version) {
            None => {
                return refuse(format!(
                    "the database has migration {:04}_{}.sql, which this binary does not know: \
                     the database is newer than the binary; run a newer binary",
                    recorded.version, recorded.name
                ));
            }
            Some(m) if m.checksum() != recorded.checksum => {
                return refuse(format!(
                    "{} has changed since it was applied (recorded checksum {}, the file's {}): \
                     add a new migration instead of editing an applied one",
                    m.file_name(),
                    recorded.checksum,
                    m.checksum()
                ));
            }
            Some(_) => {}
        }
    }
    let newest = applied.iter().map(|a| a.version).max().unwrap_or(0);
    if let Some(gap) = migrations.iter().find(|m| m.version < newest && !applied.iter().any(|a| a.version == m.version))
    {
        return refuse(format!(
            "{} was never applied, but later ones were: add new migrations after the last one",
            gap.file_name()
        ));
    }
    Ok(migrations.iter().filter(|m| m.version > newest).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIRST: Migration = Migration::new(1, "users", "CREATE TABLE users (id INTEGER PRIMARY KEY);");
    const SECOND: Migration = Migration::new(2, "posts", "CREATE TABLE posts (id INTEGER PRIMARY KEY);");

    fn applied(m: &Migration) -> Applied {
        Applied { version: m.version, name: m.name.into(), checksum: m.checksum() }
    }

    #[test]
    fn pending_are_those_after_the_newest_applied() {
        assert_eq!(pending(&[], &[FIRST, SECOND]).unwrap(), [&FIRST, &SECOND]);
        assert_eq!(pending(&[applied(&FIRST)], &[FIRST, SECOND]).unwrap(), [&SECOND]);
        assert!(pending(&[applied(&FIRST), applied(&SECOND)], &[FIRST, SECOND]).unwrap().is_empty());
    }

    #[test]
    fn a_changed_file_is_refused_by_name() {
        let mut changed = applied(&FIRST);
        changed.checksum = "0".repeat(64);
        let e = pending(&[changed], &[FIRST]).unwrap_err().to_string();
        assert!(e.contains("0001_users.sql has changed"), "{e}");
    }

    #[test]
    fn a_newer_database_is_refused() {
        let e = pending(&[applied(&FIRST), applied(&SECOND)], &[FIRST]).unwrap_err().to_string();
        assert!(e.contains("0002_posts.sql") && e.contains("newer than the binary"), "{e}");
    }

    #[test]
    fn a_gap_and_a_duplicate_are_refused() {
        let e = pending(&[applied(&SECOND)], &[FIRST, SECOND]).unwrap_err().to_string();
        assert!(e.contains("0001_users.sql was never applied"), "{e}");
        let e = pending(&[], &[FIRST, FIRST]).unwrap_err().to_string();
        assert!(e.contains("share a number"), "{e}");
    }

    #[test]
    fn checksum_is_sha256_hex() {
        assert_eq!(
            Migration::new(1, "x", "").checksum(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
