//! One PostgreSQL connection, pipelined, owned by one worker thread.
//!
//! Why not one round trip, transaction and flush per query, as a conventional driver
//! does: the server ends every `Sync` with a commit and a flush of its socket, and on
//! loopback that flush costs the server more than the query itself. Measured on this
//! project's machine (PostgreSQL 15, primary-key reads): a `Sync` per query costs the
//! server about 30 µs a query, a `Sync` per 20 queries about 13 µs.
//!
//! So a request's statements are encoded straight into the connection's write
//! buffer and a `Sync` is added only where one is needed:
//! - [`Commit::Shared`]: read-only statements. Those queued before the driver next
//!   writes share one `Sync`, and so one implicit read-only transaction; each is
//!   still its own statement with its own answer. A read-only statement cannot be
//!   undone by a later one, so a call is answered as soon as its own statements are.
//!   When one statement fails, the server skips the rest of its transaction: calls
//!   skipped only for another's failure are sent again ([`SKIPPED_RETRIES`] times).
//!   This shares more than TechEmpower's reading of "each query its own round trip"
//!   does (its leaders send a `Sync` per query); every row is still its own statement.
//! - [`Commit::Own`]: statements that write. They get a `Sync` of their own, and the
//!   call is answered only once the server reports that `Sync` (its commit) done.
//!
//! A driver task (`spawn_local`, no locks, no channels) writes whatever is queued in
//! one `write` and hands each answer to the call waiting for it, in order. When the
//! connection breaks, every waiting call fails at once with [`DbError::Unavailable`].

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::poll_fn;
use std::io;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use bytes::{Buf, BytesMut};
use postgres_protocol::IsNull;
use postgres_protocol::message::backend::{DataRowBody, ErrorResponseBody, Header, Message};
use postgres_protocol::message::frontend;
use tokio::task::JoinHandle;

use super::error::DbError;
use super::startup::Stream;

/// `int4`'s type oid, for the elements of an `int4[]` parameter.
pub(crate) const INT4_OID: u32 = 23;
/// The longest message accepted from the server. Ours are rows of a few dozen bytes
/// and short errors; without a bound, a corrupt length would make the read buffer
/// grow toward the 4 GiB a length field can declare.
pub(crate) const MAX_MESSAGE: usize = 16 * 1024 * 1024;
/// Bytes read from the socket at once.
const READ_CHUNK: usize = 16 * 1024;
/// Statements that may wait for the server's answers on one connection; past this a
/// call fails at once with `503` instead of queueing without bound while the server
/// is stuck (calls that time out leave their statements behind).
const MAX_PENDING: usize = 64 * 1024;
/// How often a read-only call skipped for another call's failure is sent again.
const SKIPPED_RETRIES: usize = 3;
/// SQLSTATEs that mean the server is going away, not that a query was wrong.
const SERVER_GONE: [&str; 3] = ["57P01", "57P02", "57P03"];

/// How a call's statements are committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Commit {
    /// Read-only: may share a `Sync` (one implicit transaction) with other calls.
    Shared,
    /// Writes: its own `Sync`, and the call waits for the commit.
    Own,
}

/// How many rows a statement must return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rows {
    /// Exactly one: none is an error (a missing row).
    One,
    /// Any number, including none.
    Any,
}

/// A bound parameter, sent in binary.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Param<'a> {
    Int(i32),
    Ints(&'a [i32]),
    Float(f64),
}

/// What the server still owes, in the order it will answer.
enum Expect {
    /// `BindComplete`, `DataRow`s, `CommandComplete`, or an `ErrorResponse`.
    Statement { call: Rc<Call>, rows: Rows },
    /// `ReadyForQuery`; the call waiting for this commit, if any.
    Sync(Option<Rc<Call>>),
}

/// The state of one connection, shared by the calls and the driver of one thread.
struct Shared {
    out: BytesMut,
    /// `out` holds [`Commit::Shared`] statements that no `Sync` closes yet.
    unsynced: bool,
    expected: VecDeque<Expect>,
    driver: Option<Waker>,
    /// Why the connection is gone, once it is.
    closed: Option<String>,
}

/// One call's answers: every row of its statements, in order.
struct Call {
    rows: RefCell<Vec<DataRowBody>>,
    rows_of_statement: Cell<usize>,
    /// Answers (statements and commits) still to come.
    pending: Cell<usize>,
    error: RefCell<Option<DbError>>,
    /// Skipped by the server because another call's statement failed.
    skipped: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

impl Call {
    fn new() -> Rc<Call> {
        Rc::new(Call {
            rows: RefCell::new(Vec::new()),
            rows_of_statement: Cell::new(0),
            pending: Cell::new(0),
            error: RefCell::new(None),
            skipped: Cell::new(false),
            waker: RefCell::new(None),
        })
    }

    fn answered(&self) {
        self.pending.set(self.pending.get().saturating_sub(1));
        if self.pending.get() == 0
            && let Some(waker) = self.waker.borrow_mut().take()
        {
            waker.wake();
        }
    }

    fn fail(&self, error: DbError) {
        let mut slot = self.error.borrow_mut();
        if slot.is_none() {
            *slot = Some(error);
        }
    }
}

/// A pipelined connection; dropping it closes the socket.
pub(crate) struct PgConn {
    shared: Rc<RefCell<Shared>>,
    driver: JoinHandle<()>,
}

impl Drop for PgConn {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// The statements of one call, as they are queued.
pub(crate) struct Batch<'a> {
    out: &'a mut BytesMut,
    expected: &'a mut VecDeque<Expect>,
    call: &'a Rc<Call>,
}

impl Batch<'_> {
    /// Queues the prepared statement `name` with these parameters.
    pub(crate) fn statement(&mut self, name: &str, params: &[Param<'_>], rows: Rows) {
        let start = self.out.len();
        let encoded = frontend::bind(
            "",
            name,
            [1],
            params,
            |param, buf| {
                match *param {
                    Param::Int(v) => postgres_protocol::types::int4_to_sql(v, buf),
                    Param::Float(v) => postgres_protocol::types::float8_to_sql(v, buf),
                    Param::Ints(values) => postgres_protocol::types::array_to_sql(
                        [postgres_protocol::types::ArrayDimension { len: values.len() as i32, lower_bound: 1 }],
                        INT4_OID,
                        values,
                        |v, buf| {
                            postgres_protocol::types::int4_to_sql(*v, buf);
                            Ok(IsNull::No)
                        },
                        buf,
                    )?,
                }
                Ok(IsNull::No)
            },
            [1],
            self.out,
        );
        // Encoding fails only past protocol limits (65,535 parameters, 1 GiB messages),
        // which no statement of this module approaches; fail the call rather than panic.
        if encoded.is_err() {
            self.out.truncate(start);
            self.call.fail(DbError::Query(format!("cannot encode the parameters of statement {name}")));
            return;
        }
        // The unnamed portal, all rows; cannot fail for an empty name.
        let _ = frontend::execute("", 0, self.out);
        self.expected.push_back(Expect::Statement { call: Rc::clone(self.call), rows });
        self.call.pending.set(self.call.pending.get() + 1);
    }
}

impl PgConn {
    /// Takes over a connection that is started and has its statements prepared.
    pub(crate) fn start(stream: Stream, leftover: BytesMut) -> PgConn {
        let shared = Rc::new(RefCell::new(Shared {
            out: BytesMut::with_capacity(READ_CHUNK),
            unsynced: false,
            expected: VecDeque::new(),
            driver: None,
            closed: None,
        }));
        let driver = tokio::task::spawn_local(drive(Rc::clone(&shared), stream, leftover));
        PgConn { shared, driver }
    }

    /// Whether the connection is gone (the server closed it or it broke).
    pub(crate) fn is_closed(&self) -> bool {
        self.shared.borrow().closed.is_some() || self.driver.is_finished()
    }

    /// Queues the statements `build` adds and waits for their rows, in order.
    pub(crate) async fn call(
        &self,
        commit: Commit,
        build: impl Fn(&mut Batch<'_>),
    ) -> Result<Vec<DataRowBody>, DbError> {
        let mut retries = if commit == Commit::Shared { SKIPPED_RETRIES } else { 0 };
        loop {
            let call = self.submit(commit, &build)?;
            poll_fn(|cx| {
                if call.pending.get() > 0 {
                    let mut waker = call.waker.borrow_mut();
                    if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                        *waker = Some(cx.waker().clone());
                    }
                    return Poll::Pending;
                }
                Poll::Ready(())
            })
            .await;
            if let Some(error) = call.error.borrow_mut().take() {
                return Err(error);
            }
            if !call.skipped.get() {
                return Ok(call.rows.take());
            }
            if retries == 0 {
                return Err(DbError::Query("skipped: another statement in its transaction failed".into()));
            }
            retries -= 1;
        }
    }

    fn submit(&self, commit: Commit, build: &impl Fn(&mut Batch<'_>)) -> Result<Rc<Call>, DbError> {
        let call = Call::new();
        let mut shared = self.shared.borrow_mut();
        if let Some(why) = &shared.closed {
            return Err(DbError::Unavailable(format!("lost the connection to PostgreSQL: {why}")));
        }
        if shared.expected.len() >= MAX_PENDING {
            let waiting = shared.expected.len();
            return Err(DbError::Unavailable(format!(
                "PostgreSQL is not keeping up: {waiting} statements wait for its answers on this connection"
            )));
        }
        let Shared { out, unsynced, expected, driver, .. } = &mut *shared;
        let was_idle = out.is_empty();
        if commit == Commit::Own && *unsynced {
            frontend::sync(out);
            expected.push_back(Expect::Sync(None));
            *unsynced = false;
        }
        build(&mut Batch { out, expected, call: &call });
        // Room for a row per statement up front (most return one), not grown row by row.
        call.rows.borrow_mut().reserve(call.pending.get());
        match commit {
            Commit::Shared => *unsynced = true,
            Commit::Own => {
                frontend::sync(out);
                expected.push_back(Expect::Sync(Some(Rc::clone(&call))));
                call.pending.set(call.pending.get() + 1);
            }
        }
        if was_idle && let Some(driver) = driver {
            driver.wake_by_ref();
        }
        Ok(call)
    }
}

/// Runs the connection until it breaks or the [`PgConn`] is dropped, then fails
/// every call still waiting.
async fn drive(shared: Rc<RefCell<Shared>>, stream: Stream, mut input: BytesMut) {
    let mut dispatched = dispatch(&shared, &mut input);
    if dispatched.is_ok() {
        dispatched = poll_fn(|cx| poll_drive(&shared, &stream, &mut input, cx)).await;
    }
    let why = dispatched.err().unwrap_or_else(|| "closed".to_owned());
    let mut shared = shared.borrow_mut();
    shared.closed = Some(why.clone());
    for expect in shared.expected.drain(..) {
        if let Expect::Statement { call, .. } | Expect::Sync(Some(call)) = expect {
            call.fail(DbError::Unavailable(format!("lost the connection to PostgreSQL: {why}")));
            call.answered();
        }
    }
}

/// Writes what is queued, then reads and dispatches what has arrived, until both
/// would block. Ends (`Ready`) only when the connection is gone, saying why.
fn poll_drive(
    shared: &RefCell<Shared>,
    stream: &Stream,
    input: &mut BytesMut,
    cx: &mut Context<'_>,
) -> Poll<Result<(), String>> {
    loop {
        {
            let mut s = shared.borrow_mut();
            if !s.driver.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                s.driver = Some(cx.waker().clone());
            }
            if s.unsynced {
                let Shared { out, expected, .. } = &mut *s;
                frontend::sync(out);
                expected.push_back(Expect::Sync(None));
                s.unsynced = false;
            }
            while !s.out.is_empty() {
                match stream.try_write(&s.out) {
                    Ok(n) => s.out.advance(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => match stream.poll_write_ready(cx) {
                        Poll::Ready(Ok(())) => continue,
                        Poll::Ready(Err(e)) => return Poll::Ready(Err(e.to_string())),
                        Poll::Pending => break,
                    },
                    Err(e) => return Poll::Ready(Err(e.to_string())),
                }
            }
        }
        match stream.poll_read_ready(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e.to_string())),
            Poll::Ready(Ok(())) => {}
        }
        input.reserve(READ_CHUNK);
        match stream.try_read_buf(input) {
            Ok(0) => return Poll::Ready(Err("the server closed the connection".into())),
            Ok(_) => {
                if let Err(why) = dispatch(shared, input) {
                    return Poll::Ready(Err(why));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Poll::Ready(Err(e.to_string())),
        }
    }
}

/// Hands every complete message in `input` to the call it answers.
fn dispatch(shared: &RefCell<Shared>, input: &mut BytesMut) -> Result<(), String> {
    let mut shared = shared.borrow_mut();
    let expected = &mut shared.expected;
    while let Some(message) = next_message(input)? {
        match message {
            Message::BindComplete
            | Message::NoticeResponse(_)
            | Message::ParameterStatus(_)
            | Message::NotificationResponse(_) => {}
            Message::DataRow(row) => match expected.front() {
                Some(Expect::Statement { call, .. }) => {
                    call.rows_of_statement.set(call.rows_of_statement.get() + 1);
                    call.rows.borrow_mut().push(row);
                }
                _ => return Err("a row that no statement asked for".into()),
            },
            Message::CommandComplete(_) | Message::EmptyQueryResponse => match expected.pop_front() {
                Some(Expect::Statement { call, rows }) => {
                    if rows == Rows::One && call.rows_of_statement.get() != 1 {
                        call.fail(DbError::Query(format!(
                            "a statement returned {} rows where one was expected",
                            call.rows_of_statement.get()
                        )));
                    }
                    call.rows_of_statement.set(0);
                    call.answered();
                }
                _ => return Err("a completion that no statement asked for".into()),
            },
            Message::ErrorResponse(body) => {
                let (error, gone) = server_error(&body);
                if gone {
                    return Err(error.to_string());
                }
                // The server skips everything up to the next `Sync`: the failed
                // statement's call fails, the others are marked skipped.
                let mut failed: Option<Rc<Call>> = None;
                while let Some(Expect::Statement { .. }) = expected.front() {
                    let Some(Expect::Statement { call, .. }) = expected.pop_front() else { break };
                    match &failed {
                        None => call.fail(error.clone()),
                        Some(culprit) if Rc::ptr_eq(culprit, &call) => {}
                        Some(_) => call.skipped.set(true),
                    }
                    call.rows_of_statement.set(0);
                    call.answered();
                    failed.get_or_insert(call);
                }
                let first = failed.is_none();
                if first {
                    // Not a statement's error but a commit's: it belongs to the call
                    // waiting for that commit, if any (shared reads are answered already).
                    match expected.front() {
                        Some(Expect::Sync(Some(call))) => call.fail(error),
                        Some(Expect::Sync(None)) => {}
                        _ => return Err(format!("an error outside any statement: {error}")),
                    }
                }
            }
            Message::ReadyForQuery(_) => match expected.pop_front() {
                Some(Expect::Sync(call)) => {
                    if let Some(call) = call {
                        call.answered();
                    }
                }
                _ => return Err("a transaction end that no Sync asked for".into()),
            },
            _ => return Err("a message the pipeline does not expect".into()),
        }
    }
    Ok(())
}

/// The next complete message in `input`, refusing malformed and oversized ones.
pub(crate) fn next_message(input: &mut BytesMut) -> Result<Option<Message>, String> {
    // `Header` reads the length as signed and refuses what is under 4 (so also what is
    // over 2 GiB), which `Message::parse`, reading it unsigned, would reserve room for.
    let header = Header::parse(input).map_err(|e| format!("malformed message from the server: {e}"))?;
    if let Some(header) = header
        && header.len() as usize > MAX_MESSAGE
    {
        return Err(format!("a message of {} bytes from the server, over the {MAX_MESSAGE} allowed", header.len()));
    }
    Message::parse(input).map_err(|e| format!("malformed message from the server: {e}"))
}

/// A server error as a [`DbError`], and whether it means the server is going away.
pub(crate) fn server_error(body: &ErrorResponseBody) -> (DbError, bool) {
    use fallible_iterator::FallibleIterator;
    let (mut code, mut message) = (String::new(), String::new());
    let mut fields = body.fields();
    while let Ok(Some(field)) = fields.next() {
        match field.type_() {
            b'C' => code = String::from_utf8_lossy(field.value_bytes()).into_owned(),
            b'M' => message = String::from_utf8_lossy(field.value_bytes()).into_owned(),
            _ => {}
        }
    }
    let gone = SERVER_GONE.contains(&code.as_str());
    let error = if gone {
        DbError::Unavailable(format!("PostgreSQL is shutting down: {message} (SQLSTATE {code})"))
    } else {
        DbError::Query(format!("PostgreSQL: {message} (SQLSTATE {code})"))
    };
    (error, gone)
}

#[cfg(test)]
mod tests {
    //! The pipeline against a scripted server on the other end of a socket pair.

    use std::time::Duration;

    use bytes::BufMut;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::UnixStream;

    use super::*;

    fn on_worker<F: std::future::Future>(f: F) -> F::Output {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        tokio::task::LocalSet::new().block_on(&rt, f)
    }

    fn message(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    const BIND_COMPLETE: &[u8] = b"2\0\0\0\x04";
    const READY: &[u8] = b"Z\0\0\0\x05I";

    fn row(values: &[i32]) -> Vec<u8> {
        let mut body = BytesMut::new();
        body.put_i16(values.len() as i16);
        for v in values {
            body.put_i32(4);
            body.put_i32(*v);
        }
        message(b'D', &body)
    }

    fn complete() -> Vec<u8> {
        message(b'C', b"SELECT 1\0")
    }

    fn error(code: &str, text: &str) -> Vec<u8> {
        message(b'E', format!("SERROR\0C{code}\0M{text}\0\0").as_bytes())
    }

    /// The tags of the next `n` frontend messages the client writes.
    async fn tags(server: &mut UnixStream, n: usize) -> String {
        let mut tags = String::new();
        for _ in 0..n {
            let tag = server.read_u8().await.expect("a message");
            let len = server.read_i32().await.expect("its length");
            let mut body = vec![0; len as usize - 4];
            server.read_exact(&mut body).await.expect("its body");
            tags.push(tag as char);
        }
        tags
    }

    fn connected() -> (Rc<PgConn>, UnixStream) {
        let (client, server) = UnixStream::pair().expect("socket pair");
        (Rc::new(PgConn::start(Stream::Unix(client), BytesMut::new())), server)
    }

    fn read(conn: &Rc<PgConn>, id: i32, commit: Commit) -> tokio::task::JoinHandle<Result<Vec<i32>, DbError>> {
        let conn = Rc::clone(conn);
        tokio::task::spawn_local(async move {
            let rows = conn.call(commit, |b| b.statement("world", &[Param::Int(id)], Rows::One)).await?;
            Ok(rows.iter().map(|r| i32::from_be_bytes(r.buffer()[4..8].try_into().expect("4 bytes"))).collect())
        })
    }

    #[test]
    fn reads_queued_together_share_one_sync_and_get_their_own_rows() {
        on_worker(async {
            let (conn, mut server) = connected();
            let (a, b) = (read(&conn, 7, Commit::Shared), read(&conn, 9, Commit::Shared));
            assert_eq!(tags(&mut server, 5).await, "BEBES");
            let answers = [BIND_COMPLETE, &row(&[7]), &complete(), BIND_COMPLETE, &row(&[9]), &complete(), READY];
            server.write_all(&answers.concat()).await.expect("answer");
            assert_eq!(a.await.expect("task"), Ok(vec![7]));
            assert_eq!(b.await.expect("task"), Ok(vec![9]));
        });
    }

    #[test]
    fn a_write_gets_its_own_sync_and_waits_for_its_commit() {
        on_worker(async {
            let (conn, mut server) = connected();
            let (read_call, write_call) = (read(&conn, 1, Commit::Shared), read(&conn, 2, Commit::Own));
            assert_eq!(tags(&mut server, 6).await, "BESBES");
            let answers = [BIND_COMPLETE, &row(&[1]), &complete(), READY, BIND_COMPLETE, &row(&[2]), &complete()];
            server.write_all(&answers.concat()).await.expect("answer");
            assert_eq!(read_call.await.expect("task"), Ok(vec![1]));
            tokio::time::sleep(Duration::from_millis(20)).await;
            assert!(!write_call.is_finished(), "answered before its commit");
            server.write_all(READY).await.expect("commit");
            assert_eq!(write_call.await.expect("task"), Ok(vec![2]));
        });
    }

    #[test]
    fn an_error_fails_its_call_and_the_calls_it_skipped_are_sent_again() {
        on_worker(async {
            let (conn, mut server) = connected();
            let (a, b) = (read(&conn, 1, Commit::Shared), read(&conn, 2, Commit::Shared));
            assert_eq!(tags(&mut server, 5).await, "BEBES");
            let answers = [&error("57014", "canceling statement due to statement timeout")[..], READY];
            server.write_all(&answers.concat()).await.expect("answer");
            let first = a.await.expect("task").expect_err("the failed statement");
            assert!(first.to_string().contains("statement timeout (SQLSTATE 57014)"), "{first}");
            assert_eq!(first.status(), 500);
            // The skipped call comes again and is answered; the connection goes on.
            assert_eq!(tags(&mut server, 3).await, "BES");
            server.write_all(&[BIND_COMPLETE, &row(&[2]), &complete(), READY].concat()).await.expect("answer");
            assert_eq!(b.await.expect("task"), Ok(vec![2]));
            assert!(!conn.is_closed());
        });
    }

    #[test]
    fn a_write_skipped_by_its_own_failure_is_not_sent_again() {
        on_worker(async {
            let (conn, mut server) = connected();
            let write = {
                let conn = Rc::clone(&conn);
                tokio::task::spawn_local(async move {
                    conn.call(Commit::Own, |b| {
                        b.statement("world", &[Param::Int(1)], Rows::One);
                        b.statement("update", &[Param::Ints(&[1]), Param::Ints(&[2])], Rows::Any);
                    })
                    .await
                })
            };
            assert_eq!(tags(&mut server, 5).await, "BEBES");
            server.write_all(&[&error("40P01", "deadlock detected")[..], READY].concat()).await.expect("answer");
            let e = write.await.expect("task").expect_err("deadlock");
            assert!(e.to_string().contains("deadlock detected"), "{e}");
            let next = read(&conn, 3, Commit::Shared);
            assert_eq!(tags(&mut server, 3).await, "BES", "the write was not sent again");
            server.write_all(&[BIND_COMPLETE, &row(&[3]), &complete(), READY].concat()).await.expect("answer");
            assert_eq!(next.await.expect("task"), Ok(vec![3]));
        });
    }

    #[test]
    fn a_stuck_server_gets_a_bounded_queue_then_503s() {
        on_worker(async {
            let (conn, _server) = connected();
            let flood = {
                let conn = Rc::clone(&conn);
                tokio::task::spawn_local(async move {
                    conn.call(Commit::Shared, |b| {
                        (0..MAX_PENDING).for_each(|i| b.statement("world", &[Param::Int(i as i32)], Rows::One))
                    })
                    .await
                })
            };
            tokio::task::yield_now().await;
            let e = read(&conn, 1, Commit::Shared).await.expect("task").expect_err("queue full");
            assert_eq!(e.status(), 503, "{e}");
            assert!(e.to_string().contains("not keeping up"), "{e}");
            assert!(!flood.is_finished(), "the server never answered the first call");
        });
    }

    #[test]
    fn garbage_from_the_server_is_refused_without_a_panic() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let tags = b"2CDEZINSTtn1K3sA";
        for _ in 0..5_000 {
            let call = Call::new();
            call.pending.set(2);
            let expected = VecDeque::from([
                Expect::Statement { call: Rc::clone(&call), rows: Rows::One },
                Expect::Sync(Some(Rc::clone(&call))),
            ]);
            let shared =
                RefCell::new(Shared { out: BytesMut::new(), unsynced: false, expected, driver: None, closed: None });
            let mut input = BytesMut::new();
            for _ in 0..next() % 6 {
                let body: Vec<u8> = (0..next() % 24).map(|_| next() as u8).collect();
                input.put_u8(tags[next() as usize % tags.len()]);
                // Mostly true lengths, sometimes lies (too short, too long, huge).
                let len = match next() % 8 {
                    0 => next() as u32,
                    1 => (next() % 4) as u32,
                    _ => body.len() as u32 + 4,
                };
                input.put_u32(len);
                input.extend_from_slice(&body);
            }
            let _ = dispatch(&shared, &mut input);
            assert!(input.capacity() <= MAX_MESSAGE + 64 * 1024, "a lying length grew the buffer");
        }
    }

    #[test]
    fn a_missing_row_is_an_error() {
        on_worker(async {
            let (conn, mut server) = connected();
            let a = read(&conn, 10_001, Commit::Shared);
            assert_eq!(tags(&mut server, 3).await, "BES");
            server.write_all(&[BIND_COMPLETE, &complete(), READY].concat()).await.expect("answer");
            let e = a.await.expect("task").expect_err("no row");
            assert!(e.to_string().contains("returned 0 rows"), "{e}");
        });
    }

    #[test]
    fn a_lost_server_fails_every_waiting_call_and_every_later_one() {
        on_worker(async {
            let (conn, mut server) = connected();
            let (a, b) = (read(&conn, 1, Commit::Shared), read(&conn, 2, Commit::Own));
            assert_eq!(tags(&mut server, 6).await, "BESBES");
            drop(server);
            for call in [a, b] {
                let e = call.await.expect("task").expect_err("server gone");
                assert!(e.is_unavailable() && e.to_string().contains("lost the connection"), "{e}");
            }
            assert!(conn.is_closed());
            let later = read(&conn, 3, Commit::Shared).await.expect("task").expect_err("still gone");
            assert_eq!(later.status(), 503);
        });
    }

    #[test]
    fn a_shutdown_notice_closes_the_connection_with_a_503() {
        on_worker(async {
            let (conn, mut server) = connected();
            let a = read(&conn, 1, Commit::Shared);
            assert_eq!(tags(&mut server, 3).await, "BES");
            let shutdown = error("57P01", "terminating connection due to administrator command");
            server.write_all(&shutdown).await.expect("answer");
            let e = a.await.expect("task").expect_err("shut down");
            assert_eq!(e.status(), 503, "{e}");
            assert!(e.to_string().contains("administrator command"), "{e}");
            assert!(conn.is_closed());
        });
    }

    #[test]
    fn a_dropped_call_does_not_shift_the_answers_of_the_next() {
        on_worker(async {
            let (conn, mut server) = connected();
            let dropped = read(&conn, 1, Commit::Shared);
            assert_eq!(tags(&mut server, 3).await, "BES");
            dropped.abort();
            let kept = read(&conn, 2, Commit::Shared);
            assert_eq!(tags(&mut server, 3).await, "BES");
            let answers =
                [BIND_COMPLETE, &row(&[1]), &complete(), READY, BIND_COMPLETE, &row(&[2]), &complete(), READY];
            server.write_all(&answers.concat()).await.expect("answer");
            assert_eq!(kept.await.expect("task"), Ok(vec![2]));
        });
    }
}
