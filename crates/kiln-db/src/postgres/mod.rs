//! PostgreSQL through kiln's own pipelined connections (see `pipeline` for the
//! commit semantics), one per worker by default, statements prepared once per
//! connection, transactions on connections of their own.

mod call;
mod depth;
mod listen;
mod migrate;
mod pipeline;
mod rows;
mod startup;
mod statement;
mod stream;
mod tls;
mod types;
mod worker;

use std::str::FromStr;
use std::time::Duration;

use tokio_postgres::Config;

use crate::error::Error;
use crate::options::Options;
use tls::Tls;

pub use listen::{Notice, Notifier};
pub(crate) use worker::{Tx, Worker};

/// What every worker's connections are made from.
#[derive(Debug)]
pub(crate) struct Settings {
    config: Config,
    tls: Tls,
    /// The startup `options`: the URL's, and `statement_timeout` if set.
    server_options: Option<String>,
    connections: usize,
    transaction_connections: usize,
    connect_timeout: Duration,
    /// Calls waiting on PostgreSQL, counted per worker.
    depths: depth::Depths,
}

impl Settings {
    /// Parses `url` and applies the migrations of `options` before any worker starts.
    pub(crate) fn open(url: &str, options: &Options) -> Result<Self, Error> {
        let (url, sslmode, sslrootcert) = split_tls_parameters(url);
        let mut config = Config::from_str(&url).map_err(|e| Error::Open(format!("bad PostgreSQL URL: {e}")))?;
        config.connect_timeout(options.connect_timeout);
        let tls = Tls::new(sslmode.as_deref().unwrap_or("prefer"), sslrootcert.as_deref())?;
        let mut server_options = config.get_options().map(str::to_owned);
        if let Some(timeout) = options.statement_timeout {
            let setting = format!("-c statement_timeout={}", timeout.as_millis());
            server_options = Some(server_options.map_or(setting.clone(), |o| format!("{o} {setting}")));
        }
        let settings = Settings {
            config,
            tls,
            server_options,
            connections: options.pg_connections.max(1),
            transaction_connections: options.pg_transaction_connections.max(1),
            connect_timeout: options.connect_timeout,
            depths: depth::Depths::default(),
        };
        if !options.migrations.is_empty() {
            migrate::run(&settings, options.migrations)?;
        }
        Ok(settings)
    }

    /// Calls in flight or waiting on PostgreSQL now, over every worker of the process.
    pub(crate) fn queued_calls(&self) -> usize {
        self.depths.total()
    }
}

/// The URL without `sslmode` and `sslrootcert`, which kiln handles itself (the
/// URL parser knows neither `verify-full` nor `sslrootcert`), and their values.
fn split_tls_parameters(url: &str) -> (String, Option<String>, Option<String>) {
    let Some((base, query)) = url.split_once('?') else { return (url.to_owned(), None, None) };
    let (mut sslmode, mut root, mut kept) = (None, None, Vec::new());
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("sslmode", v)) => sslmode = Some(v.to_owned()),
            Some(("sslrootcert", v)) => root = Some(v.to_owned()),
            _ => kept.push(pair),
        }
    }
    let url = if kept.is_empty() { base.to_owned() } else { format!("{base}?{}", kept.join("&")) };
    (url, sslmode, root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_parameters_are_taken_out_of_the_url() {
        let (url, mode, root) = split_tls_parameters("postgres://u@h/db?sslmode=require&options=x&sslrootcert=/ca.pem");
        assert_eq!(url, "postgres://u@h/db?options=x");
        assert_eq!(mode.as_deref(), Some("require"));
        assert_eq!(root.as_deref(), Some("/ca.pem"));
        assert_eq!(split_tls_parameters("postgres://u@h/db").0, "postgres://u@h/db");
    }

    #[test]
    fn a_bad_sslmode_is_refused_by_name() {
        let e = Settings::open("postgres://u@h/db?sslmode=sometimes", &Options::default()).unwrap_err();
        assert!(e.to_string().contains("unknown sslmode \"sometimes\""), "{e}");
        let e = Settings::open("postgres://u@h/db?sslmode=verify-full", &Options::default()).unwrap_err();
        assert!(e.to_string().contains("needs sslrootcert"), "{e}");
    }
}
