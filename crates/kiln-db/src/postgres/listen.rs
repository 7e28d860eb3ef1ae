//! A process's link to PostgreSQL `LISTEN`/`NOTIFY`, for a message bus across
//! processes and machines: one dedicated connection per process, on a thread of its
//! own, that listens on one channel and sends the process's notifications.
//!
//! Each notification gets an id from a sequence, so ids grow in the order they were
//! given, across every process. A payload too large for `NOTIFY` (8000 bytes,
//! PostgreSQL's limit) is stored in a table and notified by id; the listener fetches
//! it, in order with the rest. When the connection is lost the link reconnects with
//! backoff, listens again and reports a [`Notice::Gap`]: notifications sent
//! meanwhile are not replayed by PostgreSQL.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::IsNull;
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use super::Settings;
use super::pipeline::{next_message, server_error};
use super::startup;
use crate::error::Error;

/// The largest `NOTIFY` payload PostgreSQL takes is 8000 bytes; a message whose
/// header and payload exceed this is stored in the table instead.
const NOTIFY_MAX: usize = 7900;
/// First wait before reconnecting a lost link; doubled on each failure.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
/// Longest wait between reconnection attempts.
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// Stored payloads older than this are deleted when a link (re)connects: every
/// listener has fetched them long before.
const KEEP_STORED: &str = "10 minutes";
/// The type of both parameters of the publishing statements (`text`).
const TEXT_OID: u32 = 25;

/// What the link hands to the process, on its own thread, in the order sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// A notification, from this process or another.
    Message {
        /// Its id: larger for later notifications, across every process.
        id: u64,
        /// The topic it was sent to.
        topic: String,
        /// Its payload.
        payload: String,
    },
    /// The link was lost and is back: notifications sent meanwhile were missed.
    Gap,
}

struct Publish {
    topic: String,
    payload: String,
    done: oneshot::Sender<Result<u64, Error>>,
}

/// The process's link to PostgreSQL `LISTEN`/`NOTIFY` on one channel. Cloning it
/// shares the link; the link stops when the last clone is dropped.
#[derive(Clone)]
pub struct Notifier {
    requests: mpsc::UnboundedSender<Publish>,
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier").finish_non_exhaustive()
    }
}

impl Notifier {
    /// Starts the link on `channel` (a lower-case SQL identifier) with its payload
    /// table `table` (`{channel}_payloads` when `None`) and that table's id sequence
    /// `{table}_ids` (`{channel}_ids` when `None`), both created if missing, and calls
    /// `deliver` with every notice, on the link's thread.
    pub(crate) fn start(
        settings: Arc<Settings>,
        channel: &str,
        table: Option<&str>,
        deliver: impl FnMut(Notice) + Send + 'static,
    ) -> Result<Notifier, Error> {
        if !is_identifier(channel, 40) {
            return Err(Error::Open(format!(
                "bus channel {channel:?}: use 1 to 40 lower-case letters, digits and `_`, not starting with a digit"
            )));
        }
        let (payloads, ids) = match table {
            None => (format!("\"{channel}_payloads\""), format!("\"{channel}_ids\"")),
            Some(table) => {
                // The sequence takes the table's name and `_ids`: PostgreSQL keeps 63
                // bytes of a name (NAMEDATALEN - 1), so the table gets 59.
                let (schema, name) = table.split_once('.').map_or((None, table), |(s, n)| (Some(s), n));
                if !is_identifier(name, 59) || schema.is_some_and(|s| !is_identifier(s, 63)) {
                    return Err(Error::Open(format!(
                        "bus table {table:?}: use a lower-case SQL identifier (letters, digits and `_`, not \
                         starting with a digit, at most 59 bytes), optionally after `schema.`"
                    )));
                }
                let schema = schema.map(|s| format!("\"{s}\".")).unwrap_or_default();
                (format!("{schema}\"{name}\""), format!("{schema}\"{name}_ids\""))
            }
        };
        let (requests, rx) = mpsc::unbounded_channel();
        let link = Link {
            settings,
            sql: Sql::new(channel, &payloads, &ids),
            channel: channel.to_owned(),
            deliver: Box::new(deliver),
        };
        std::thread::Builder::new()
            .name("kiln-bus-pg".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
                if let Ok(rt) = rt {
                    rt.block_on(link.run(rx));
                }
            })
            .map_err(|e| Error::Open(format!("cannot start the bus's PostgreSQL thread: {e}")))?;
        Ok(Notifier { requests })
    }

    /// Sends `payload` to `topic` in every listening process (this one included) and
    /// returns its id. Fails with [`Error::Unavailable`] while the link is down.
    pub async fn notify(&self, topic: &str, payload: &str) -> Result<u64, Error> {
        if topic.contains(['\n', '\0']) || payload.contains('\0') {
            return Err(Error::Param {
                index: 1,
                message: "a topic holds no line break or NUL, a payload no NUL".into(),
            });
        }
        let (done, answer) = oneshot::channel();
        let publish = Publish { topic: topic.to_owned(), payload: payload.to_owned(), done };
        let down = || Error::Unavailable("the bus's link to PostgreSQL is down".into());
        self.requests.send(publish).map_err(|_| down())?;
        answer.await.map_err(|_| down())?
    }
}

/// The statements of one channel.
struct Sql {
    setup: String,
    inline: String,
    stored: String,
    fetch: String,
}

impl Sql {
    /// The statements on channel `ch`, with the payload table and id sequence
    /// `payloads` and `ids` (quoted, and schema-qualified if the app said so).
    fn new(ch: &str, payloads: &str, ids: &str) -> Sql {
        Sql {
            // Named, so that an operator (or a test) can find the link's connection. One
            // implicit transaction, under a lock: processes starting together would
            // otherwise race to create the same table (a unique violation in pg_type).
            setup: format!(
                "SELECT pg_advisory_xact_lock(hashtext('kiln_bus:{ch}')); \
                 SET application_name = 'kiln_bus:{ch}'; CREATE SEQUENCE IF NOT EXISTS {ids}; \
                 CREATE TABLE IF NOT EXISTS {payloads} (id bigint PRIMARY KEY, topic text NOT NULL, \
                 payload text NOT NULL, created timestamptz NOT NULL DEFAULT now()); \
                 DELETE FROM {payloads} WHERE created < now() - interval '{KEEP_STORED}'; LISTEN {ch}"
            ),
            // The notification is sent when the statement's transaction commits, so a
            // stored payload is visible to whoever is notified of it. `nextval` takes
            // the sequence's name as text, quotes and all.
            inline: format!(
                "SELECT n, pg_notify('{ch}', n || ' ' || $1 || chr(10) || $2) FROM (SELECT nextval('{ids}') AS n) s"
            ),
            stored: format!(
                "WITH s AS (SELECT nextval('{ids}') AS n), \
                 i AS (INSERT INTO {payloads} (id, topic, payload) SELECT n, $1, $2 FROM s) \
                 SELECT n, pg_notify('{ch}', 's ' || n || ' ' || $1) FROM s"
            ),
            fetch: format!("SELECT payload FROM {payloads} WHERE id = $1::text::bigint"),
        }
    }
}

/// Whether `name` is a lower-case SQL identifier of at most `max` bytes: letters,
/// digits and `_`, not starting with a digit. Quoted in the statements, so a
/// reserved word (`order`) is a name like any other.
fn is_identifier(name: &str, max: usize) -> bool {
    !name.is_empty()
        && name.len() <= max
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit()
}

struct Link {
    settings: Arc<Settings>,
    sql: Sql,
    channel: String,
    deliver: Box<dyn FnMut(Notice) + Send>,
}

/// Why a connection's session ended.
enum Ended {
    /// Every `Notifier` was dropped: the link stops.
    Closed,
    Lost(Error),
}

/// A statement sent and not yet answered (each ends with `ReadyForQuery`).
struct Pending {
    kind: Kind,
    row: Option<String>,
    error: Option<Error>,
}

enum Kind {
    Publish(oneshot::Sender<Result<u64, Error>>),
    Fetch,
}

/// A notification received, waiting for its turn (and, if stored, for its payload).
struct Incoming {
    id: u64,
    topic: String,
    /// `None` while a stored payload is being fetched.
    payload: Option<String>,
    /// A stored payload that could not be fetched: skipped.
    lost: bool,
}

impl Link {
    async fn run(mut self, mut requests: mpsc::UnboundedReceiver<Publish>) {
        let mut backoff = BACKOFF_MIN;
        let mut connected_before = false;
        loop {
            match self.session(&mut requests, &mut connected_before, &mut backoff).await {
                Ended::Closed => return,
                Ended::Lost(e) => tracing::warn!(
                    target: "kiln::db",
                    channel = self.channel,
                    "the bus's link to PostgreSQL failed: {e}; reconnecting in {backoff:?}"
                ),
            }
            // While down, publishing fails at once rather than waiting.
            let wait = tokio::time::sleep(backoff);
            tokio::pin!(wait);
            let closed = loop {
                tokio::select! {
                    () = &mut wait => break false,
                    publish = requests.recv() => match publish {
                        Some(p) => { let _ = p.done.send(Err(Error::Unavailable("the bus's link to PostgreSQL is down".into()))); }
                        None => break true,
                    },
                }
            };
            if closed {
                return;
            }
            backoff = (backoff * 2).min(BACKOFF_MAX);
        }
    }

    async fn session(
        &mut self,
        requests: &mut mpsc::UnboundedReceiver<Publish>,
        connected_before: &mut bool,
        backoff: &mut Duration,
    ) -> Ended {
        let s = &self.settings;
        let opened =
            tokio::time::timeout(s.connect_timeout, startup::open(&s.config, &s.tls, s.server_options.as_deref()));
        let (mut stream, mut input) = match opened.await {
            Ok(Ok(opened)) => opened,
            Ok(Err(e)) => return Ended::Lost(e),
            Err(_) => return Ended::Lost(Error::Unavailable("connecting timed out".into())),
        };
        let mut out = BytesMut::new();
        let _ = frontend::query(&self.sql.setup, &mut out);
        let mut pending = VecDeque::from([Pending { kind: Kind::Fetch, row: None, error: None }]);
        let mut incoming: VecDeque<Incoming> = VecDeque::new();
        let mut setup_done = false;
        loop {
            if !out.is_empty() {
                if let Err(e) = stream.write_all(&out).await {
                    return Ended::Lost(Error::Unavailable(e.to_string()));
                }
                out.clear();
            }
            while incoming.front().is_some_and(|i| i.payload.is_some() || i.lost) {
                let i = incoming.pop_front().expect("a front");
                if let Some(payload) = i.payload {
                    (self.deliver)(Notice::Message { id: i.id, topic: i.topic, payload });
                }
            }
            tokio::select! {
                publish = requests.recv(), if setup_done => match publish {
                    Some(p) => {
                        self.encode_publish(&p.topic, &p.payload, &mut out);
                        pending.push_back(Pending { kind: Kind::Publish(p.done), row: None, error: None });
                    }
                    None => return Ended::Closed,
                },
                read = stream.read_buf(&mut input) => match read {
                    Ok(0) => return Ended::Lost(Error::Unavailable("PostgreSQL closed the connection".into())),
                    Err(e) => return Ended::Lost(Error::Unavailable(e.to_string())),
                    Ok(_) => loop {
                        let message = match next_message(&mut input) {
                            Ok(Some(message)) => message,
                            Ok(None) => break,
                            Err(e) => return Ended::Lost(Error::Unavailable(e)),
                        };
                        match message {
                            Message::NotificationResponse(body) => {
                                let (Ok(channel), Ok(text)) = (body.channel(), body.message()) else { continue };
                                if channel != self.channel {
                                    continue;
                                }
                                let Some(notified) = parse_notification(text) else { continue };
                                if notified.payload.is_none() {
                                    self.encode_fetch(notified.id, &mut out);
                                    pending.push_back(Pending { kind: Kind::Fetch, row: None, error: None });
                                }
                                incoming.push_back(notified);
                            }
                            Message::DataRow(body) => {
                                if let Some(p) = pending.front_mut() {
                                    p.row = first_column(&body);
                                }
                            }
                            Message::ErrorResponse(body) => {
                                let (error, _) = server_error(&body);
                                if let Some(p) = pending.front_mut() {
                                    p.error = Some(error);
                                }
                            }
                            Message::ReadyForQuery(_) => {
                                let Some(done) = pending.pop_front() else { continue };
                                if !setup_done {
                                    if let Some(e) = done.error {
                                        return Ended::Lost(e);
                                    }
                                    setup_done = true;
                                    *backoff = BACKOFF_MIN;
                                    if std::mem::replace(connected_before, true) {
                                        (self.deliver)(Notice::Gap);
                                    }
                                    continue;
                                }
                                finish(done, &mut incoming);
                            }
                            _ => {}
                        }
                    },
                },
            }
        }
    }

    fn encode_publish(&self, topic: &str, payload: &str, out: &mut BytesMut) {
        let sql = if topic.len() + payload.len() + 24 <= NOTIFY_MAX { &self.sql.inline } else { &self.sql.stored };
        encode(sql, &[topic, payload], out);
    }

    fn encode_fetch(&self, id: u64, out: &mut BytesMut) {
        encode(&self.sql.fetch, &[&id.to_string()], out);
    }
}

/// An unnamed statement with text parameters, executed, then `Sync`.
fn encode(sql: &str, params: &[&str], out: &mut BytesMut) {
    let _ = frontend::parse("", sql, params.iter().map(|_| TEXT_OID), out);
    let _ = frontend::bind(
        "",
        "",
        params.iter().map(|_| 0),
        params.iter(),
        |p, buf| {
            buf.put_slice(p.as_bytes());
            Ok(IsNull::No)
        },
        [0],
        out,
    );
    let _ = frontend::execute("", 0, out);
    frontend::sync(out);
}

/// The first column of a row, as text.
fn first_column(body: &postgres_protocol::message::backend::DataRowBody) -> Option<String> {
    let range = body.ranges().next().ok()???;
    std::str::from_utf8(body.buffer().get(range)?).ok().map(str::to_owned)
}

/// Hands a finished statement's outcome to whoever waits for it.
fn finish(done: Pending, incoming: &mut VecDeque<Incoming>) {
    match done.kind {
        Kind::Publish(reply) => {
            let outcome = match (done.error, done.row.and_then(|r| r.parse().ok())) {
                (Some(e), _) => Err(e),
                (None, Some(id)) => Ok(id),
                (None, None) => Err(Error::Unavailable("PostgreSQL gave no id for a notification".into())),
            };
            let _ = reply.send(outcome);
        }
        Kind::Fetch => {
            // Fetches are answered in the order they were sent, which is the order of
            // the stored notifications still waiting.
            if let Some(waiting) = incoming.iter_mut().find(|i| i.payload.is_none() && !i.lost) {
                match done.row {
                    Some(payload) => waiting.payload = Some(payload),
                    None => waiting.lost = true,
                }
            }
        }
    }
}

/// `ID TOPIC\nPAYLOAD`, or `s ID TOPIC` for a payload stored in the table.
fn parse_notification(text: &str) -> Option<Incoming> {
    if let Some(stored) = text.strip_prefix("s ") {
        let (id, topic) = stored.split_once(' ')?;
        return Some(Incoming { id: id.parse().ok()?, topic: topic.to_owned(), payload: None, lost: false });
    }
    let (id, rest) = text.split_once(' ')?;
    let (topic, payload) = rest.split_once('\n')?;
    Some(Incoming { id: id.parse().ok()?, topic: topic.to_owned(), payload: Some(payload.to_owned()), lost: false })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_parse_inline_and_stored() {
        let inline = parse_notification("42 pages/home\nline one\nline two").unwrap();
        assert_eq!(
            (inline.id, inline.topic.as_str(), inline.payload.as_deref()),
            (42, "pages/home", Some("line one\nline two"))
        );
        let stored = parse_notification("s 43 pages/a b").unwrap();
        assert_eq!((stored.id, stored.topic.as_str(), stored.payload), (43, "pages/a b", None));
        assert!(parse_notification("junk").is_none());
        assert!(parse_notification("x y\nz").is_none());
    }

    #[test]
    fn bus_names_are_lower_case_identifiers() {
        for good in ["chat", "bus_2", "_x"] {
            assert!(is_identifier(good, 40), "{good}");
        }
        for bad in ["", "2bus", "Chat", "a-b", "a b", "a\"b", "x;drop", "é"] {
            assert!(!is_identifier(bad, 40), "{bad}");
        }
        assert!(!is_identifier(&"a".repeat(41), 40));
    }
}
