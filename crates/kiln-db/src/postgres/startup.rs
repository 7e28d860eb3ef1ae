//! Opening a PostgreSQL connection: the socket (TCP or Unix), TLS when the URL
//! asks for it (`sslmode=require`), the startup message and authentication (trust,
//! password, MD5 or SCRAM-SHA-256). Message encoding, parsing and the SCRAM
//! exchange come from `postgres-protocol`, the codec `tokio-postgres` uses.

use std::path::Path;

use bytes::{BufMut, BytesMut};
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, SCRAM_SHA_256, ScramSha256};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};
use tokio_postgres::Config;
use tokio_postgres::config::Host;

use super::pipeline::{next_message, server_error};
use super::stream::Stream;
use super::tls::Tls;
use crate::error::Error;

/// The port PostgreSQL listens on when the URL names none.
const DEFAULT_PORT: u16 = 5432;
/// The code of an `SSLRequest` (RFC: PostgreSQL protocol, "SSL Session Encryption").
const SSL_REQUEST_CODE: i32 = 80_877_103;

impl Stream {
    async fn send(&mut self, buf: &[u8]) -> Result<(), Error> {
        self.write_all(buf).await.map_err(|e| unavailable(&e))?;
        self.flush().await.map_err(|e| unavailable(&e))
    }

    async fn read_message(&mut self, input: &mut BytesMut) -> Result<Message, Error> {
        loop {
            if let Some(message) = next_message(input).map_err(|e| unavailable(&e))? {
                return Ok(message);
            }
            input.reserve(4096);
            match self.read_buf(input).await {
                Ok(0) => return Err(Error::Unavailable("PostgreSQL closed the connection while starting it".into())),
                Ok(_) => {}
                Err(e) => return Err(unavailable(&e)),
            }
        }
    }
}

fn unavailable(e: &dyn std::fmt::Display) -> Error {
    Error::Unavailable(format!("cannot connect to PostgreSQL: {e}"))
}

/// Connects to the first host of `config` that answers, over TLS when `tls` says
/// so, authenticates, and returns the socket with any bytes read past the handshake.
pub(crate) async fn open(config: &Config, tls: &Tls, options: Option<&str>) -> Result<(Stream, BytesMut), Error> {
    let mut stream = connect(config, tls).await?;
    let mut out = BytesMut::new();
    let user = config.get_user().ok_or_else(|| Error::Open("the PostgreSQL URL names no user".into()))?;
    let mut parameters = vec![("user", user), ("client_encoding", "UTF8"), ("application_name", "kiln")];
    if let Some(db) = config.get_dbname() {
        parameters.push(("database", db));
    }
    // Server settings, as `-c statement_timeout=100`.
    if let Some(options) = options {
        parameters.push(("options", options));
    }
    frontend::startup_message(parameters, &mut out).map_err(|e| unavailable(&e))?;
    stream.send(&out).await?;
    let mut input = BytesMut::with_capacity(4096);
    authenticate(&mut stream, &mut input, config, user).await?;
    Ok((stream, input))
}

/// The socket to the first host that answers, with TLS negotiated when asked for;
/// what `tokio-postgres` is handed for the native client, too.
pub(crate) async fn connect(config: &Config, tls: &Tls) -> Result<Stream, Error> {
    let stream = socket(config).await?;
    let Some(connector) = tls.connector() else { return Ok(stream) };
    let Stream::Tcp(mut tcp) = stream else {
        return Err(Error::Open("sslmode=require over a Unix socket: name a TCP host".into()));
    };
    let mut request = BytesMut::with_capacity(8);
    request.put_i32(8);
    request.put_i32(SSL_REQUEST_CODE);
    tcp.write_all(&request).await.map_err(|e| unavailable(&e))?;
    let answer = tcp.read_u8().await.map_err(|e| unavailable(&e))?;
    if answer != b'S' {
        return Err(Error::Open("sslmode=require, but the PostgreSQL server does not offer TLS".into()));
    }
    let host = tls.server_name(config)?;
    let tls_stream =
        connector.connect(host, tcp).await.map_err(|e| Error::Open(format!("TLS with PostgreSQL: {e}")))?;
    Ok(Stream::Tls(Box::new(tls_stream)))
}

async fn socket(config: &Config) -> Result<Stream, Error> {
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

async fn authenticate(stream: &mut Stream, input: &mut BytesMut, config: &Config, user: &str) -> Result<(), Error> {
    let password = || {
        config.get_password().ok_or_else(|| Error::Open("PostgreSQL asks for a password and the URL has none".into()))
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
                    return Err(Error::Open(
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
                exchange.update(body.data()).map_err(|e| Error::Open(format!("SCRAM authentication failed: {e}")))?;
                frontend::sasl_response(exchange.message(), &mut out).map_err(|e| unavailable(&e))?;
            }
            Message::AuthenticationSaslFinal(body) => {
                let exchange = scram.as_mut().ok_or_else(|| unavailable(&"SCRAM ended before it began"))?;
                exchange
                    .finish(body.data())
                    .map_err(|e| Error::Open(format!("the server failed SCRAM verification: {e}")))?;
            }
            Message::ErrorResponse(body) => {
                let (error, _) = server_error(&body);
                return Err(Error::Unavailable(format!("PostgreSQL refused the connection: {error}")));
            }
            _ => {
                return Err(Error::Open("PostgreSQL asked for an authentication method kiln does not support".into()));
            }
        }
        if !out.is_empty() {
            stream.send(&out).await?;
        }
    }
}
