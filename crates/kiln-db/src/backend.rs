//! A worker's handle on one backend or the other.

pub(crate) enum WorkerBackend {
    #[cfg(feature = "sqlite")]
    Sqlite(crate::sqlite::Worker),
    #[cfg(feature = "postgres")]
    Postgres(crate::postgres::Worker),
}
