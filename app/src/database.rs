//! Where the data lives: the `--database` flags, and the databases the process opens.

use std::time::Duration;

use kiln::db::{Backend, Database, Error, Options};
use kiln::realtime::Bus;

/// Where the data lives and how to reach it.
#[derive(Debug, clap::Args)]
pub(crate) struct DbArgs {
    /// `sqlite://PATH` (created and migrated on first run) or `postgres://USER:PASS@HOST:PORT/DB`
    /// (`?sslmode=require` for TLS).
    #[arg(long, env = "KILN_DATABASE", default_value = "sqlite://data/kiln.sqlite")]
    database: String,
    /// PostgreSQL connections per worker; concurrent queries on each are pipelined.
    #[arg(long, env = "KILN_PG_CONNECTIONS", default_value_t = 1)]
    pg_connections: usize,
    /// PostgreSQL connections per worker for the long query of `/mix`, opened on first use.
    #[arg(long, env = "KILN_PG_LONG_CONNECTIONS", default_value_t = 16)]
    pg_long_connections: usize,
    /// Milliseconds the long query of `/mix` runs.
    #[arg(long, env = "KILN_LONG_QUERY_MS", default_value_t = 20)]
    long_query_ms: u64,
    /// Milliseconds a database call may take before it is answered with 503.
    #[arg(long, env = "KILN_QUERY_TIMEOUT_MS", default_value_t = 5000)]
    query_timeout_ms: u64,
}

/// The databases of the process, shared by every worker.
#[derive(Debug, Clone)]
pub(crate) struct Databases {
    pub(crate) main: Database,
    /// PostgreSQL only: connections of their own for `/mix`'s long query.
    pub(crate) long: Option<Database>,
    pub(crate) long_query: Duration,
    pub(crate) query_timeout: Duration,
    /// The message bus (live comments): across the processes that share a PostgreSQL
    /// database, within the process on SQLite.
    pub(crate) bus: Bus,
}

impl DbArgs {
    /// Opens the database and applies the app's migrations.
    pub(crate) fn open(&self) -> Result<Databases, Error> {
        if let Some(path) = self.database.strip_prefix("sqlite://") {
            eprintln!("kiln-demo: database {path}");
        }
        let query_timeout = Duration::from_millis(self.query_timeout_ms);
        let options = Options {
            pg_connections: self.pg_connections,
            query_timeout,
            // The site's tables number their rows differently on each backend
            // (migrations/*/0002_site.sql); 0001 is the same file in both folders.
            migrations: if self.database.starts_with("postgres") {
                kiln::db::migrations!("migrations/postgres")
            } else {
                kiln::db::migrations!("migrations/sqlite")
            },
            ..Options::default()
        };
        let main = Database::open(&self.database, options.clone())?;
        let long = match main.backend() {
            Backend::Postgres => Some(Database::open(
                &self.database,
                Options { pg_connections: self.pg_long_connections, migrations: &[], ..options },
            )?),
            _ => None,
        };
        let bus = match main.backend() {
            Backend::Postgres => Bus::postgres(&main, "kiln_bus")?,
            _ => Bus::new(),
        };
        Ok(Databases { main, long, long_query: Duration::from_millis(self.long_query_ms), query_timeout, bus })
    }
}
