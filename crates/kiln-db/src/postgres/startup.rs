//! Opening a PostgreSQL connection for the pipeline: the socket (TCP or Unix), the
//! startup message, authentication (trust, password, MD5 or SCRAM-SHA-256) and the
//! statements prepared once per connection. Message encoding, parsing and the
//! SCRAM exchange come from `postgres-protocol`, the codec `tokio-postgres` uses.

use std::io;
use std::path::Path;
use std::task::{Context, Poll};

use bytes::BytesMut;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, SCRAM_SHA_256, ScramSha256};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;
use tokio::net::{TcpStream, UnixStream};
use tokio_postgres::Config;
use tokio_postgres::config::{Host, SslMode};

use super::error::DbError;
use super::pipeline::{next_message, server_error};

/// The port PostgreSQL listens on when the URL names none.
const DEFAULT_PORT: u16 = 5432;

/// The socket of one connection.
pub(crate) enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    pub(crate) fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.try_write(buf),
            Stream::Unix(s) => s.try_write(buf),
        }
    }

    pub(crate) fn try_read_buf(&self, buf: &mut BytesMut) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.try_read_buf(buf),
            Stream::Unix(s) => s.try_read_buf(buf),
        }
    }

    pub(crate) fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            Stream::Tcp(s) => s.poll_read_ready(cx),
            Stream::Unix(s) => s.poll_read_ready(cx),
        }
    }

    pub(crate) fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            Stream::Tcp(s) => s.poll_write_ready(cx),
            Stream::Unix(s) => s.poll_write_ready(cx),
        }
    }

    async fn write_all(&self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            std::future::poll_fn(|cx| self.poll_write_ready(cx)).await?;
            match self.try_write(buf) {
                Ok(n) => buf = &buf[n..],
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    async fn read_message(&self, input: &mut BytesMut) -> Result<Message, DbError> {
        loop {
            if let Some(message) = next_message(input).map_err(|e| unavailable(&e))? {
                return Ok(message);
            }
            std::future::poll_fn(|cx| self.poll_read_ready(cx)).await.map_err(|e| unavailable(&e))?;
            input.reserve(4096);
            match self.try_read_buf(input) {
                Ok(0) => return Err(DbError::Unavailable("PostgreSQL closed the connection while starting it".into())),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(unavailable(&e)),
            }
        }
    }
}

fn unavailable(e: &dyn std::fmt::Display) -> DbError {
    DbError::Unavailable(format!("cannot connect to PostgreSQL: {e}"))
}

/// A statement prepared on every connection: its name, its text, its parameters' types.
pub(crate) struct Prepared {
    pub(crate) name: &'static str,
    pub(crate) sql: &'static str,
    pub(crate) params: &'static [u32],
}

/// Connects to the first host of `config` that answers, authenticates, prepares
/// `statements` and returns the socket with any bytes read past the handshake.
pub(crate) async fn open(config: &Config, statements: &[Prepared]) -> Result<(Stream, BytesMut), DbError> {
    if config.get_ssl_mode() == SslMode::Require {
        return Err(DbError::Open("sslmode=require: kiln's PostgreSQL client does not speak TLS".into()));
    }
    let stream = socket(config).await?;
    let mut out = BytesMut::new();
    let user = config.get_user().ok_or_else(|| DbError::Open("the PostgreSQL URL names no user".into()))?;
    let mut parameters = vec![("user", user), ("client_encoding", "UTF8"), ("application_name", "kiln")];
    if let Some(db) = config.get_dbname() {
        parameters.push(("database", db));
    }
    // Server settings from the URL, as in `?options=-c statement_timeout=100`.
    if let Some(options) = config.get_options() {
        parameters.push(("options", options));
    }
    frontend::startup_message(parameters, &mut out).map_err(|e| unavailable(&e))?;
    stream.write_all(&out).await.map_err(|e| unavailable(&e))?;
    let mut input = BytesMut::with_capacity(4096);
    authenticate(&stream, &mut input, config, user).await?;

    out.clear();
    for statement in statements {
        frontend::parse(statement.name, statement.sql, statement.params.iter().copied(), &mut out)
            .map_err(|e| DbError::Open(format!("cannot encode {}: {e}", statement.sql)))?;
    }
    frontend::sync(&mut out);
    stream.write_all(&out).await.map_err(|e| unavailable(&e))?;
    let mut error = None;
    loop {
        match stream.read_message(&mut input).await? {
            Message::ReadyForQuery(_) => break,
            Message::ErrorResponse(body) => error = Some(server_error(&body).0),
            _ => {}
        }
    }
    match error {
        Some(e) => Err(DbError::Unavailable(format!("cannot prepare statements: {e}"))),
        None => Ok((stream, input)),
    }
}

async fn socket(config: &Config) -> Result<Stream, DbError> {
    let ports = config.get_ports();
    let mut last_error = String::from("the PostgreSQL URL names no host");
    for (i, host) in config.get_hosts().iter().enumerate() {
        let port = ports.get(i).or(ports.first()).copied().unwrap_or(DEFAULT_PORT);
        let connected = match host {
            Host::Tcp(name) => TcpStream::connect((name.as_str(), port)).await.map(|s| {
                // Statements are small and written in batches: never hold one back.
                let _ = s.set_nodelay(true);
                Stream::Tcp(s)
            }),
            Host::Unix(dir) => {
                UnixStream::connect(Path::new(dir).join(format!(".s.PGSQL.{port}"))).await.map(Stream::Unix)
            }
        };
        match connected {
            Ok(stream) => return Ok(stream),
            Err(e) => last_error = format!("{host:?} port {port}: {e}"),
        }
    }
    Err(unavailable(&last_error))
}

async fn authenticate(stream: &Stream, input: &mut BytesMut, config: &Config, user: &str) -> Result<(), DbError> {
    let password = || {
        config.get_password().ok_or_else(|| DbError::Open("PostgreSQL asks for a password and the URL has none".into()))
    };
    let mut out = BytesMut::new();
    let mut scram: Option<ScramSha256> = None;
    loop {
        out.clear();
        match stream.read_message(input).await? {
            Message::AuthenticationOk | Message::ParameterStatus(_) | Message::BackendKeyData(_) => {}
            Message::NoticeResponse(_) => {}
            Message::ReadyForQuery(_) => return Ok(()),
            Message::AuthenticationCleartextPassword => {
                frontend::password_message(password()?, &mut out).map_err(|e| unavailable(&e))?;
            }
            Message::AuthenticationMd5Password(body) => {
                let hash = md5_hash(user.as_bytes(), password()?, body.salt());
                frontend::password_message(hash.as_bytes(), &mut out).map_err(|e| unavailable(&e))?;
            }
            Message::AuthenticationSasl(body) => {
                use fallible_iterator::FallibleIterator;
                let mut mechanisms = body.mechanisms();
                let mut offered = false;
                while let Ok(Some(mechanism)) = mechanisms.next() {
                    offered |= mechanism == SCRAM_SHA_256;
                }
                if !offered {
                    return Err(DbError::Open(
                        "PostgreSQL offers no SASL mechanism but SCRAM-SHA-256-PLUS, which needs TLS".into(),
                    ));
                }
                let exchange = ScramSha256::new(password()?, ChannelBinding::unsupported());
                frontend::sasl_initial_response(SCRAM_SHA_256, exchange.message(), &mut out)
                    .map_err(|e| unavailable(&e))?;
                scram = Some(exchange);
            }
            Message::AuthenticationSaslContinue(body) => {
                let exchange = scram.as_mut().ok_or_else(|| unavailable(&"SCRAM continued before it began"))?;
                exchange.update(body.data()).map_err(|e| DbError::Open(format!("SCRAM authentication failed: {e}")))?;
                frontend::sasl_response(exchange.message(), &mut out).map_err(|e| unavailable(&e))?;
            }
            Message::AuthenticationSaslFinal(body) => {
                let exchange = scram.as_mut().ok_or_else(|| unavailable(&"SCRAM ended before it began"))?;
                exchange
                    .finish(body.data())
                    .map_err(|e| DbError::Open(format!("the server failed SCRAM verification: {e}")))?;
            }
            Message::ErrorResponse(body) => {
                let (error, _) = server_error(&body);
                return Err(DbError::Unavailable(format!("PostgreSQL refused the connection: {error}")));
            }
            _ => {
                return Err(DbError::Open(
                    "PostgreSQL asked for an authentication method kiln does not support".into(),
                ));
            }
        }
        if !out.is_empty() {
            stream.write_all(&out).await.map_err(|e| unavailable(&e))?;
        }
    }
}
