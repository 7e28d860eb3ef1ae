//! Applying the app's migrations to PostgreSQL at start-up, in one transaction that
//! holds an advisory lock, so that two processes starting together migrate once.
//! Runs through `tokio-postgres` (migration files hold several statements, which
//! only the simple query protocol takes) on a thread of its own, so that opening
//! works whether or not the caller is inside a runtime.

use tokio_postgres::NoTls;

use super::Settings;
use super::startup::connect;
use crate::error::Error;
use crate::migrate::{Applied, Migration, TABLE, pending};

/// The advisory lock key migrations hold (`'kiln'` in ASCII).
const LOCK_KEY: i64 = 0x6b69_6c6e;

pub(crate) fn run(settings: &Settings, migrations: &'static [Migration]) -> Result<usize, Error> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| Error::Open(format!("cannot start a runtime for the migrations: {e}")))?;
                runtime.block_on(apply(settings, migrations))
            })
            .join()
            .unwrap_or_else(|_| Err(Error::Migration("the migration thread panicked".into())))
    })
}

async fn apply(settings: &Settings, migrations: &[Migration]) -> Result<usize, Error> {
    let stream = connect(&settings.config, &settings.tls).await?;
    let mut config = settings.config.clone();
    // TLS, if any, is already on `stream`.
    config.ssl_mode(tokio_postgres::config::SslMode::Disable);
    let (mut client, connection) =
        config.connect_raw(stream, NoTls).await.map_err(|e| Error::Open(format!("PostgreSQL: {e}")))?;
    let driver = tokio::spawn(connection);
    let fail = |e: tokio_postgres::Error| Error::Migration(describe(&e));
    let tx = client.transaction().await.map_err(fail)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY]).await.map_err(fail)?;
    tx.batch_execute(&format!(
        "CREATE TABLE IF NOT EXISTS {TABLE} (version integer PRIMARY KEY, name text NOT NULL, \
         checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
    ))
    .await
    .map_err(fail)?;
    let applied: Vec<Applied> = tx
        .query(&format!("SELECT version, name, checksum FROM {TABLE} ORDER BY version"), &[])
        .await
        .map_err(fail)?
        .iter()
        .map(|r| Applied { version: r.get::<_, i32>(0) as u32, name: r.get(1), checksum: r.get(2) })
        .collect();
    let todo = pending(&applied, migrations)?;
    for m in &todo {
        tx.batch_execute(m.sql).await.map_err(|e| Error::Migration(format!("{}: {}", m.file_name(), describe(&e))))?;
        tx.execute(
            &format!("INSERT INTO {TABLE} (version, name, checksum) VALUES ($1, $2, $3)"),
            &[&(m.version as i32), &m.name, &m.checksum()],
        )
        .await
        .map_err(fail)?;
    }
    tx.commit().await.map_err(fail)?;
    drop(client);
    let _ = driver.await;
    Ok(todo.len())
}

/// The server's message when there is one (`tokio-postgres` prints only "db error").
fn describe(e: &tokio_postgres::Error) -> String {
    e.as_db_error().map_or_else(|| e.to_string(), |db| format!("{} ({})", db.message(), db.code().code()))
}
