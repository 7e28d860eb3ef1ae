//! One PostgreSQL connection, pipelined, owned by one worker thread.
//!
//! Why not one round trip, transaction and flush per statement, as a conventional
//! driver does: the server ends every `Sync` with a commit and a flush of its
//! socket, and on loopback that flush costs the server more than a primary-key
//! read. Measured on this project's machine (PostgreSQL 15): a `Sync` per query
//! costs the server about 30 µs a query, a `Sync` per 20 queries about 13 µs.
//!
//! So statements are encoded straight into the connection's write buffer, and a
//! `Sync` is added only where one is needed:
//! - [`Commit::Shared`] (queries): the statements queued before the driver next
//!   writes share one `Sync`, and so one implicit transaction; each is still its own
//!   statement with its own rows.
//! - [`Commit::Own`] (writes, and everything on a transaction's connection): its own
//!   `Sync`, so its commit is its own.
//!
//! And at most two batches are out at once, one the server works on and the next
//! waiting in its socket: what is queued meanwhile waits, and goes with one `Sync` when
//! the first is answered. Written as soon as each turn of the worker queued something,
//! batches were about three queries under load; held, they grow with the load by
//! themselves (a lone query still goes at once). On this machine that took the
//! server's cost of a primary-key read from about 3.9 to 3.2 µs, and a page making one
//! such read from about 87,000 to 97,000 requests a second. Two out rather than one let
//! the next batch wait in the server's socket while it works on the last: that page
//! about 3 % faster again (seven alternated probe runs), one reading twelve rows the same.
//!
//! Every call is answered only once the server has reported its `Sync` done, so
//! what it returns is committed. When a statement fails, the server rolls back the
//! rest of its implicit transaction: the failing call gets the error, and the other
//! calls of that transaction, rolled back for a neighbour's failure, are sent again
//! (up to [`ROLLED_BACK_RETRIES`] times); a commit that fails as a whole (a deferred
//! constraint) fails every call in it.
//!
//! A driver task (`spawn_local`, no locks, no channels) writes whatever is queued
//! and hands each answer to the call waiting for it, in order. When the connection
//! breaks, every waiting call fails at once with [`Error::Unavailable`].

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::poll_fn;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use bytes::{Buf, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::{
    BIND_COMPLETE_TAG, COMMAND_COMPLETE_TAG, DATA_ROW_TAG, ErrorResponseBody, Header, Message,
};
use postgres_protocol::message::frontend;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::task::JoinHandle;

use super::call::{Call, Description, Kept};
use super::rows::Rows;
use super::statement::{Column, Statement};
use super::stream::Stream;
use super::types::{encode, param_format};
use crate::error::{ConflictKind, Error};
use crate::value::ToParam;

/// The longest message accepted from the server. Without a bound, a corrupt length
/// would make the read buffer grow toward the 4 GiB a length field can declare.
pub(crate) const MAX_MESSAGE: usize = 64 * 1024 * 1024;
/// Bytes read from the socket at once.
const READ_CHUNK: usize = 16 * 1024;
/// Statements that may wait for the server's answers on one connection; past this a
/// call fails at once with `503` instead of queueing without bound while the server
/// is stuck (calls that time out leave their statements behind).
pub(crate) const MAX_PENDING: usize = 64 * 1024;
/// How often a call rolled back for another call's failure is sent again.
const ROLLED_BACK_RETRIES: usize = 3;
/// SQLSTATEs that mean the server is going away, not that a statement was wrong.
const SERVER_GONE: [&str; 3] = ["57P01", "57P02", "57P03"];

/// How a call's statements are committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Commit {
    /// May share a `Sync` (one implicit transaction) with other calls.
    Shared,
    /// A `Sync` of its own.
    Own,
}

/// What the server still owes, in the order it will answer.
enum Expect {
    /// `ParseComplete`, `ParameterDescription`, then `RowDescription` or `NoData`.
    Describe(Rc<Call>),
    /// `BindComplete`, `DataRow`s, `CommandComplete`, or an `ErrorResponse`.
    Statement(Rc<Call>),
    /// `ReadyForQuery`: the calls it answers.
    Sync(Vec<Rc<Call>>),
}

/// The state of one connection, shared by the calls and the driver of one thread.
struct Shared {
    out: BytesMut,
    /// [`Commit::Shared`] calls in `out` that no `Sync` closes yet.
    unsynced: Vec<Rc<Call>>,
    expected: VecDeque<Expect>,
    /// A statement failed since the last `ReadyForQuery`: the rest of its
    /// transaction was rolled back.
    rolled_back: bool,
    /// The commit itself failed, with this error.
    commit_failed: Option<Error>,
    driver: Option<Waker>,
    /// Why the connection is gone, once it is.
    closed: Option<String>,
    syncs: Syncs,
    kept: Kept,
}

/// The `Sync`s the server owes a `ReadyForQuery` for, and how many of them are still
/// in `out`: the difference is what the server is working on.
#[derive(Debug, Default)]
struct Syncs {
    expected: usize,
    unsent: usize,
    /// `out` was written in part; the rest goes out before anything else waits.
    writing: bool,
}

/// `Sync`s that may be out at once (see the module's documentation).
const SYNCS_OUT: usize = 2;

impl Syncs {
    /// Whether what is queued may go: the server is on its last `Sync`, or idle.
    fn may_send(&self) -> bool {
        self.expected - self.unsent < SYNCS_OUT
    }
}

/// Closes what `out` holds with a `Sync`, whose `ReadyForQuery` answers `calls`.
fn push_sync(out: &mut BytesMut, expected: &mut VecDeque<Expect>, syncs: &mut Syncs, calls: Vec<Rc<Call>>) {
    frontend::sync(out);
    expected.push_back(Expect::Sync(calls));
    syncs.expected += 1;
    syncs.unsent += 1;
}

/// What a finished call returns.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    pub(crate) rows: Rows,
    pub(crate) affected: u64,
    /// The last command tag was `ROLLBACK`.
    pub(crate) rollback: bool,
    pub(crate) description: Description,
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
    /// Queues `sql` to be prepared as `name`, and described.
    pub(crate) fn prepare(&mut self, name: &str, sql: &str) {
        let start = self.out.len();
        if frontend::parse(name, sql, std::iter::empty(), self.out).is_err() {
            self.out.truncate(start);
            self.call.fail(Error::Query { code: None, message: "the statement has a NUL byte".into() });
            return;
        }
        frontend::describe(b'S', name, self.out).expect("a statement name has no NUL byte");
        self.expected.push_back(Expect::Describe(Rc::clone(self.call)));
    }

    /// Queues the closing of the prepared statement `name`.
    pub(crate) fn close(&mut self, name: &str) {
        frontend::close(b'S', name, self.out).expect("a statement name has no NUL byte");
    }

    /// Queues the prepared `statement` with these parameters, all rows.
    pub(crate) fn execute(&mut self, statement: &Statement, params: &[&dyn ToParam]) {
        if params.len() != statement.params.len() {
            self.call.fail(Error::Param {
                index: params.len().min(statement.params.len()) + 1,
                message: format!("the statement takes {} parameters, {} given", statement.params.len(), params.len()),
            });
            return;
        }
        let start = self.out.len();
        let mut failed = None;
        let formats = params.iter().zip(&statement.params).map(|(p, &oid)| param_format(p.to_param(), oid));
        let encoded = frontend::bind(
            "",
            &statement.name,
            formats,
            params.iter().zip(&statement.params).enumerate(),
            |(i, (param, &oid)), buf| {
                encode(param.to_param(), oid, buf).map_err(|message| {
                    failed = Some(Error::Param { index: i + 1, message });
                    "unencodable".into()
                })
            },
            statement.columns.iter().map(|c| c.format),
            self.out,
        );
        if encoded.is_err() {
            self.out.truncate(start);
            self.call.fail(failed.unwrap_or_else(|| Error::Param {
                index: params.len(),
                message: "past the protocol's limits (65,535 parameters, 1 GiB)".into(),
            }));
            return;
        }
        // The unnamed portal, all rows; cannot fail for an empty name.
        let _ = frontend::execute("", 0, self.out);
        self.expected.push_back(Expect::Statement(Rc::clone(self.call)));
    }
}

impl PgConn {
    /// Takes over a connection that is started and authenticated.
    pub(crate) fn start(stream: Stream, leftover: BytesMut) -> PgConn {
        let shared = Rc::new(RefCell::new(Shared {
            out: BytesMut::with_capacity(READ_CHUNK),
            unsynced: Vec::new(),
            expected: VecDeque::new(),
            rolled_back: false,
            commit_failed: None,
            driver: None,
            closed: None,
            syncs: Syncs::default(),
            kept: Kept::default(),
        }));
        let driver = tokio::task::spawn_local(drive(Rc::clone(&shared), stream, leftover));
        PgConn { shared, driver }
    }

    /// Whether the connection is gone (the server closed it or it broke).
    pub(crate) fn is_closed(&self) -> bool {
        self.shared.borrow().closed.is_some() || self.driver.is_finished()
    }

    /// Queues the statements `build` adds and waits for their answer, committed.
    pub(crate) async fn call(&self, commit: Commit, build: impl Fn(&mut Batch<'_>)) -> Result<Answer, Error> {
        let mut retries = ROLLED_BACK_RETRIES;
        loop {
            let call = self.submit(commit, &build)?;
            poll_fn(|cx| {
                if call.done.get() {
                    return Poll::Ready(());
                }
                let mut waker = call.waker.borrow_mut();
                if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *waker = Some(cx.waker().clone());
                }
                Poll::Pending
            })
            .await;
            if let Some(error) = call.error.borrow_mut().take() {
                return Err(error);
            }
            if !call.rolled_back.get() {
                let mut shared = self.shared.borrow_mut();
                // A call without rows (a write, a prepare) gives its buffer straight
                // back; one with rows gives it back once they are read (`keep_rows`).
                let mut rows = call.rows.take();
                if rows.len() == 0 {
                    shared.kept.keep_rows(std::mem::take(&mut rows));
                }
                let answer = Answer {
                    rows,
                    affected: call.affected.get(),
                    rollback: call.rollback.get(),
                    description: call.description.take(),
                };
                shared.kept.keep_call(call);
                return Ok(answer);
            }
            if retries == 0 {
                return Err(Error::Query {
                    code: None,
                    message: "rolled back again and again because other statements failed".into(),
                });
            }
            retries -= 1;
        }
    }

    /// Queues the statements `build` adds and does not wait for them (a rollback
    /// sent by a dropped transaction).
    pub(crate) fn send(&self, build: impl Fn(&mut Batch<'_>)) {
        let _ = self.submit(Commit::Own, &build);
    }

    /// Keeps the buffer of an answer whose rows have been read, for a later call.
    pub(crate) fn keep_rows(&self, rows: Rows) {
        self.shared.borrow_mut().kept.keep_rows(rows);
    }

    fn submit(&self, commit: Commit, build: &impl Fn(&mut Batch<'_>)) -> Result<Rc<Call>, Error> {
        let mut shared = self.shared.borrow_mut();
        if let Some(why) = &shared.closed {
            return Err(Error::Unavailable(format!("lost the connection to PostgreSQL: {why}")));
        }
        if shared.expected.len() >= MAX_PENDING {
            let waiting = shared.expected.len();
            return Err(Error::Unavailable(format!(
                "PostgreSQL is not keeping up: {waiting} statements wait for its answers on this connection"
            )));
        }
        let call = shared.kept.call();
        let Shared { out, unsynced, expected, driver, syncs, .. } = &mut *shared;
        let was_idle = out.is_empty();
        if commit == Commit::Own && !unsynced.is_empty() {
            push_sync(out, expected, syncs, std::mem::take(unsynced));
        }
        let (start, queued) = (out.len(), expected.len());
        build(&mut Batch { out, expected, call: &call });
        if let Some(error) = call.error.borrow_mut().take() {
            // Refused before anything was sent: nothing of it may stay queued.
            out.truncate(start);
            expected.truncate(queued);
            return Err(error);
        }
        match commit {
            Commit::Shared => unsynced.push(Rc::clone(&call)),
            Commit::Own => push_sync(out, expected, syncs, vec![Rc::clone(&call)]),
        }
        if was_idle && let Some(driver) = driver {
            driver.wake_by_ref();
        }
        Ok(call)
    }
}

/// Runs the connection until it breaks or the [`PgConn`] is dropped, then fails
/// every call still waiting.
async fn drive(shared: Rc<RefCell<Shared>>, mut stream: Stream, mut input: BytesMut) {
    let mut scratch = vec![0; READ_CHUNK].into_boxed_slice();
    let mut dispatched = dispatch(&shared, &mut input);
    if dispatched.is_ok() {
        dispatched = poll_fn(|cx| poll_drive(&shared, &mut stream, &mut input, &mut scratch, cx)).await;
    }
    let why = dispatched.err().unwrap_or_else(|| "closed".to_owned());
    let mut shared = shared.borrow_mut();
    shared.closed = Some(why.clone());
    let lost = || Error::Unavailable(format!("lost the connection to PostgreSQL: {why}"));
    let unsynced = std::mem::take(&mut shared.unsynced);
    for expect in shared.expected.drain(..) {
        if let Expect::Sync(calls) = expect {
            calls.iter().for_each(|call| {
                call.fail(lost());
                call.finish();
            });
        }
    }
    for call in unsynced {
        call.fail(lost());
        call.finish();
    }
}

/// Writes what is queued, then reads and dispatches what has arrived, until both
/// would block. Ends (`Ready`) only when the connection is gone, saying why.
fn poll_drive(
    shared: &RefCell<Shared>,
    stream: &mut Stream,
    input: &mut BytesMut,
    scratch: &mut [u8],
    cx: &mut Context<'_>,
) -> Poll<Result<(), String>> {
    loop {
        {
            let mut s = shared.borrow_mut();
            if !s.driver.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                s.driver = Some(cx.waker().clone());
            }
            // Two batches out at most: while the server works on what was sent, this
            // thread's new queries gather, and go together once it has answered the
            // older batch. Each `Sync` costs the server a commit and a flush, and each
            // write a wake-up; under load the batches grow by themselves, and a lone
            // query still goes at once.
            if s.syncs.may_send() || s.syncs.writing {
                if !s.unsynced.is_empty() {
                    let Shared { out, expected, unsynced, syncs, .. } = &mut *s;
                    push_sync(out, expected, syncs, std::mem::take(unsynced));
                }
                let mut wrote = false;
                while !s.out.is_empty() {
                    match Pin::new(&mut *stream).poll_write(cx, &s.out) {
                        Poll::Ready(Ok(0)) => return Poll::Ready(Err("the socket takes no more bytes".into())),
                        Poll::Ready(Ok(n)) => {
                            s.out.advance(n);
                            wrote = true;
                        }
                        Poll::Ready(Err(e)) => return Poll::Ready(Err(e.to_string())),
                        Poll::Pending => break,
                    }
                }
                s.syncs.writing = !s.out.is_empty();
                if s.out.is_empty() {
                    s.syncs.unsent = 0;
                }
                // TLS holds written bytes back in records until flushed.
                if wrote && let Poll::Ready(Err(e)) = Pin::new(&mut *stream).poll_flush(cx) {
                    return Poll::Ready(Err(e.to_string()));
                }
            }
        }
        let mut buf = ReadBuf::new(scratch);
        match Pin::new(&mut *stream).poll_read(cx, &mut buf) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e.to_string())),
            Poll::Ready(Ok(())) if buf.filled().is_empty() => {
                return Poll::Ready(Err("the server closed the connection".into()));
            }
            Poll::Ready(Ok(())) => {
                input.extend_from_slice(buf.filled());
                if let Err(why) = dispatch(shared, input) {
                    return Poll::Ready(Err(why));
                }
            }
        }
    }
}

/// The call the front of the queue belongs to, if it is a statement's.
fn front_statement(expected: &VecDeque<Expect>) -> Option<&Rc<Call>> {
    match expected.front() {
        Some(Expect::Statement(call)) => Some(call),
        _ => None,
    }
}

/// Hands every complete message in `input` to the call it answers.
fn dispatch(shared: &RefCell<Shared>, input: &mut BytesMut) -> Result<(), String> {
    let mut shared = shared.borrow_mut();
    let Shared { expected, rolled_back, commit_failed, syncs, .. } = &mut *shared;
    loop {
        // What every statement gets is read straight from the input: rows are copied
        // out (see `rows`), the rest is a few bytes.
        if let Some((tag, len)) = statement_message(input)? {
            let body = &input[HEADER..len];
            match tag {
                DATA_ROW_TAG => match (front_statement(expected), body.get(FIELD_COUNT..)) {
                    (Some(call), Some(fields)) => call.rows.borrow_mut().push(fields),
                    (Some(_), None) => return Err("a row without its field count".into()),
                    (None, _) => return Err("a row that no statement asked for".into()),
                },
                COMMAND_COMPLETE_TAG => completed(expected, body)?,
                _ => {} // BindComplete
            }
            input.advance(len);
            continue;
        }
        let Some(message) = next_message(input)? else { break };
        match message {
            Message::ParseComplete
            | Message::CloseComplete
            | Message::NoticeResponse(_)
            | Message::ParameterStatus(_)
            | Message::NotificationResponse(_) => {}
            Message::ParameterDescription(body) => match expected.front() {
                Some(Expect::Describe(call)) => {
                    call.description.borrow_mut().params = body.parameters().collect().map_err(|e| e.to_string())?;
                }
                _ => return Err("a parameter description that no statement asked for".into()),
            },
            Message::RowDescription(body) => match expected.pop_front() {
                Some(Expect::Describe(call)) => {
                    let mut columns = Vec::new();
                    let mut fields = body.fields();
                    while let Some(field) = fields.next().map_err(|e| e.to_string())? {
                        columns.push(Column::new(field.name(), field.type_oid()));
                    }
                    call.description.borrow_mut().columns = columns;
                }
                _ => return Err("a row description that no statement asked for".into()),
            },
            Message::NoData => match expected.pop_front() {
                Some(Expect::Describe(_)) => {}
                _ => return Err("a NoData that no statement asked for".into()),
            },
            Message::EmptyQueryResponse => match expected.pop_front() {
                Some(Expect::Statement(_)) => {}
                _ => return Err("an empty-query answer that no statement asked for".into()),
            },
            Message::ErrorResponse(body) => {
                let (error, gone) = server_error(&body);
                if gone {
                    return Err(error.to_string());
                }
                // The server skips everything up to the next `Sync` and rolls its
                // transaction back: the failing call gets the error, the statements
                // it skipped are dropped from the queue.
                match expected.front() {
                    Some(Expect::Statement(call) | Expect::Describe(call)) => {
                        call.fail(error);
                        *rolled_back = true;
                        while matches!(expected.front(), Some(Expect::Statement(_) | Expect::Describe(_))) {
                            expected.pop_front();
                        }
                    }
                    // Not a statement's error but its commit's.
                    Some(Expect::Sync(_)) => *commit_failed = Some(error),
                    None => return Err(format!("an error outside any statement: {error}")),
                }
            }
            Message::ReadyForQuery(_) => match expected.pop_front() {
                Some(Expect::Sync(calls)) => {
                    syncs.expected -= 1;
                    let failed_commit = commit_failed.take();
                    for call in calls {
                        if call.error.borrow().is_none() {
                            if let Some(e) = &failed_commit {
                                call.fail(e.clone());
                            } else if *rolled_back {
                                call.rolled_back.set(true);
                                call.rows.borrow_mut().clear();
                                call.affected.set(0);
                            }
                        }
                        call.finish();
                    }
                    *rolled_back = false;
                }
                _ => return Err("a transaction end that no Sync asked for".into()),
            },
            _ => return Err("a message the pipeline does not expect".into()),
        }
    }
    Ok(())
}

/// A message's tag and length, before its body.
const HEADER: usize = 5;
/// A `DataRow` body's field count, before its fields.
const FIELD_COUNT: usize = 2;

/// The tag and whole length of the `DataRow`, `BindComplete` or `CommandComplete` at
/// the front of `input`, if one is there whole.
fn statement_message(input: &[u8]) -> Result<Option<(u8, usize)>, String> {
    match Header::parse(input) {
        Ok(Some(header)) if matches!(header.tag(), DATA_ROW_TAG | BIND_COMPLETE_TAG | COMMAND_COMPLETE_TAG) => {
            // The length counts itself, not the tag; `Header` refused what is under 4.
            let len = header.len() as usize + 1;
            if len > MAX_MESSAGE {
                return Err(format!("a message of {len} bytes from the server, over the {MAX_MESSAGE} allowed"));
            }
            Ok((input.len() >= len).then_some((header.tag(), len)))
        }
        // Anything else, a partial header and a malformed one included, is
        // `next_message`'s to read or refuse.
        _ => Ok(None),
    }
}

/// A statement's `CommandComplete`, whose `body` is its command tag ("SELECT 12",
/// "UPDATE 3", "ROLLBACK") ended by a NUL.
fn completed(expected: &mut VecDeque<Expect>, body: &[u8]) -> Result<(), String> {
    let Some(Expect::Statement(call)) = expected.pop_front() else {
        return Err("a completion that no statement asked for".into());
    };
    let tag = body.strip_suffix(b"\0").ok_or("a command tag without its end")?;
    let count = tag.rsplit(|&b| b == b' ').next().and_then(|n| std::str::from_utf8(n).ok()?.parse::<u64>().ok());
    call.affected.set(call.affected.get() + count.unwrap_or(0));
    call.rollback.set(tag == b"ROLLBACK");
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

/// A server error as the layer's [`Error`], and whether it means the server is going away.
pub(crate) fn server_error(body: &ErrorResponseBody) -> (Error, bool) {
    let (mut code, mut message, mut detail) = (String::new(), String::new(), String::new());
    let mut fields = body.fields();
    while let Ok(Some(field)) = fields.next() {
        let value = || String::from_utf8_lossy(field.value_bytes()).into_owned();
        match field.type_() {
            b'C' => code = value(),
            b'M' => message = value(),
            b'D' => detail = value(),
            _ => {}
        }
    }
    if !detail.is_empty() {
        message = format!("{message}: {detail}");
    }
    let gone = SERVER_GONE.contains(&code.as_str());
    let error = match code.as_str() {
        _ if gone => Error::Unavailable(format!("PostgreSQL is shutting down: {message} (SQLSTATE {code})")),
        "23505" => Error::Conflict { kind: ConflictKind::Unique, message },
        "23503" => Error::Conflict { kind: ConflictKind::ForeignKey, message },
        // `statement_timeout`, or a cancel request.
        "57014" => Error::Timeout,
        _ => Error::Query { code: Some(code), message: format!("PostgreSQL: {message}") },
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

    use super::super::types::INT4;
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

    fn by_id() -> Statement {
        Statement { name: "by_id".into(), params: vec![INT4], columns: vec![Column::new("id", INT4)] }
    }

    fn read(conn: &Rc<PgConn>, id: i32, commit: Commit) -> tokio::task::JoinHandle<Result<Vec<i32>, Error>> {
        let conn = Rc::clone(conn);
        tokio::task::spawn_local(async move {
            let answer = conn.call(commit, |b| b.execute(&by_id(), &[&id])).await?;
            Ok(answer.rows.iter().map(|r| i32::from_be_bytes(r[4..8].try_into().expect("4 bytes"))).collect())
        })
    }

    #[test]
    fn reads_queued_together_share_one_sync_and_get_their_own_rows() {
        on_worker(async {
            let (conn, mut server) = connected();
            let (a, b) = (read(&conn, 7, Commit::Shared), read(&conn, 9, Commit::Shared));
            assert_eq!(tags(&mut server, 5).await, "BEBES");
            let answers = [BIND_COMPLETE, &row(&[7]), &complete(), BIND_COMPLETE, &row(&[9]), &complete()];
            server.write_all(&answers.concat()).await.expect("answer");
            tokio::time::sleep(Duration::from_millis(20)).await;
            assert!(!a.is_finished(), "answered before its transaction ended");
            server.write_all(READY).await.expect("commit");
            assert_eq!(a.await.expect("task"), Ok(vec![7]));
            assert_eq!(b.await.expect("task"), Ok(vec![9]));
        });
    }

    #[test]
    fn a_call_without_rows_gives_its_row_buffer_back_at_once() {
        on_worker(async {
            let (conn, mut server) = connected();
            let first = read(&conn, 1, Commit::Own);
            assert_eq!(tags(&mut server, 3).await, "BES");
            server.write_all(&[BIND_COMPLETE, &row(&[1]), &complete(), READY].concat()).await.expect("answer");
            let answer = first.await.expect("task");
            assert_eq!(answer, Ok(vec![1]));
            // `read` drops its answer's rows without `keep_rows`: the buffer is gone.
            assert_eq!(conn.shared.borrow().kept.rows_kept(), 0);
            let mut buffer = Rows::default();
            buffer.push(&[0, 0, 0, 4, 0, 0, 0, 2]);
            conn.keep_rows(buffer);
            let write = read(&conn, 2, Commit::Own);
            assert_eq!(tags(&mut server, 3).await, "BES");
            assert_eq!(conn.shared.borrow().kept.rows_kept(), 0, "the write took the kept buffer");
            server.write_all(&[BIND_COMPLETE, &message(b'C', b"UPDATE 0\0"), READY].concat()).await.expect("answer");
            assert_eq!(write.await.expect("task"), Ok(vec![]));
            assert_eq!(conn.shared.borrow().kept.rows_kept(), 1, "a write gives its unused buffer back");
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
    fn an_error_fails_its_call_and_the_calls_rolled_back_with_it_are_sent_again() {
        on_worker(async {
            let (conn, mut server) = connected();
            let (a, b, c) =
                (read(&conn, 1, Commit::Shared), read(&conn, 2, Commit::Shared), read(&conn, 3, Commit::Shared));
            assert_eq!(tags(&mut server, 7).await, "BEBEBES");
            // The first statement succeeds, the second fails: the first is rolled back too.
            let answers = [BIND_COMPLETE, &row(&[1]), &complete(), &error("22012", "division by zero"), READY].concat();
            server.write_all(&answers).await.expect("answer");
            let e = b.await.expect("task").expect_err("the failed statement");
            assert!(e.to_string().contains("division by zero (22012)"), "{e}");
            // Both neighbours come again, in one transaction, and are answered.
            assert_eq!(tags(&mut server, 5).await, "BEBES");
            let again = [BIND_COMPLETE, &row(&[1]), &complete(), BIND_COMPLETE, &row(&[3]), &complete(), READY];
            server.write_all(&again.concat()).await.expect("answer");
            assert_eq!(a.await.expect("task"), Ok(vec![1]));
            assert_eq!(c.await.expect("task"), Ok(vec![3]));
            assert!(!conn.is_closed());
        });
    }

    #[test]
    fn a_failed_write_is_not_sent_again() {
        on_worker(async {
            let (conn, mut server) = connected();
            let write = read(&conn, 1, Commit::Own);
            assert_eq!(tags(&mut server, 3).await, "BES");
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
    fn a_failed_commit_fails_every_call_in_it() {
        on_worker(async {
            let (conn, mut server) = connected();
            let (a, b) = (read(&conn, 1, Commit::Shared), read(&conn, 2, Commit::Shared));
            assert_eq!(tags(&mut server, 5).await, "BEBES");
            let answers = [BIND_COMPLETE, &row(&[1]), &complete(), BIND_COMPLETE, &row(&[2]), &complete()];
            let deferred = error("23503", "violates foreign key constraint");
            server.write_all(&[&answers.concat()[..], &deferred, READY].concat()).await.expect("answer");
            for call in [a, b] {
                let e = call.await.expect("task").expect_err("commit failed");
                assert!(e.is_foreign_key_violation(), "{e:?}");
            }
        });
    }

    #[test]
    fn a_unique_violation_is_a_conflict_and_a_statement_timeout_a_timeout() {
        on_worker(async {
            let (conn, mut server) = connected();
            let a = read(&conn, 1, Commit::Own);
            assert_eq!(tags(&mut server, 3).await, "BES");
            server.write_all(&[&error("23505", "duplicate key")[..], READY].concat()).await.expect("answer");
            assert!(a.await.expect("task").expect_err("duplicate").is_unique_violation());
            let b = read(&conn, 2, Commit::Own);
            assert_eq!(tags(&mut server, 3).await, "BES");
            server.write_all(&[&error("57014", "statement timeout")[..], READY].concat()).await.expect("answer");
            assert_eq!(b.await.expect("task"), Err(Error::Timeout));
        });
    }

    #[test]
    fn a_parameter_of_the_wrong_type_is_refused_before_anything_is_sent() {
        on_worker(async {
            let (conn, mut server) = connected();
            let e = conn.call(Commit::Shared, |b| b.execute(&by_id(), &[&(1_i64 << 40)])).await.expect_err("too big");
            assert!(matches!(&e, Error::Param { index: 1, message } if message.contains("int4")), "{e:?}");
            let e = conn.call(Commit::Shared, |b| b.execute(&by_id(), &[])).await.expect_err("too few");
            assert!(e.to_string().contains("takes 1 parameters, 0 given"), "{e}");
            let next = read(&conn, 5, Commit::Shared);
            assert_eq!(tags(&mut server, 3).await, "BES", "nothing of the refused calls went out");
            server.write_all(&[BIND_COMPLETE, &row(&[5]), &complete(), READY].concat()).await.expect("answer");
            assert_eq!(next.await.expect("task"), Ok(vec![5]));
        });
    }

    #[test]
    fn a_stuck_server_gets_a_bounded_queue_then_503s() {
        on_worker(async {
            let (conn, _server) = connected();
            let flood = {
                let conn = Rc::clone(&conn);
                tokio::task::spawn_local(async move {
                    conn.call(Commit::Shared, |b| (0..MAX_PENDING as i32).for_each(|i| b.execute(&by_id(), &[&i])))
                        .await
                })
            };
            tokio::task::yield_now().await;
            let e = read(&conn, 1, Commit::Shared).await.expect("task").expect_err("queue full");
            assert!(e.is_unavailable() && e.to_string().contains("not keeping up"), "{e}");
            assert!(!flood.is_finished(), "the server never answered the first call");
        });
    }

    /// The driver's state while `expected` is owed, nothing else going on.
    fn owed(expected: Vec<Expect>) -> RefCell<Shared> {
        RefCell::new(Shared {
            out: BytesMut::new(),
            unsynced: Vec::new(),
            expected: expected.into(),
            rolled_back: false,
            commit_failed: None,
            driver: None,
            closed: None,
            syncs: Syncs { expected: 1, unsent: 0, writing: false },
            kept: Kept::default(),
        })
    }

    #[test]
    fn command_tags_count_rows_and_say_rollback_and_malformed_ones_are_refused() {
        for (tag, affected, rollback) in
            [(&b"UPDATE 3\0"[..], 3, false), (b"INSERT 0 1\0", 1, false), (b"ROLLBACK\0", 0, true)]
        {
            let call = Rc::new(Call::default());
            let shared = owed(vec![Expect::Statement(Rc::clone(&call))]);
            let mut input = BytesMut::from(&[BIND_COMPLETE, &message(b'C', tag)].concat()[..]);
            assert_eq!(dispatch(&shared, &mut input), Ok(()));
            assert_eq!((call.affected.get(), call.rollback.get(), input.len()), (affected, rollback, 0));
        }
        for (bad, why) in [(message(b'D', &[0]), "field count"), (message(b'C', b"SELECT 1"), "without its end")] {
            let shared = owed(vec![Expect::Statement(Rc::new(Call::default()))]);
            let e = dispatch(&shared, &mut BytesMut::from(&bad[..])).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
        // A row nobody asked for.
        let e = dispatch(&owed(Vec::new()), &mut BytesMut::from(&row(&[1])[..])).unwrap_err();
        assert!(e.contains("no statement asked for"), "{e}");
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
        let tags = b"23CDEZINSTtn1K3sA";
        for _ in 0..5_000 {
            let call = Rc::new(Call::default());
            let shared = owed(vec![
                Expect::Describe(Rc::clone(&call)),
                Expect::Statement(Rc::clone(&call)),
                Expect::Sync(vec![Rc::clone(&call)]),
            ]);
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
            assert!(later.is_unavailable());
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
            assert!(e.is_unavailable() && e.to_string().contains("administrator command"), "{e}");
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
            // One batch at a time: the second goes once the first is answered.
            server.write_all(&[BIND_COMPLETE, &row(&[1]), &complete(), READY].concat()).await.expect("answer");
            assert_eq!(tags(&mut server, 3).await, "BES");
            server.write_all(&[BIND_COMPLETE, &row(&[2]), &complete(), READY].concat()).await.expect("answer");
            assert_eq!(kept.await.expect("task"), Ok(vec![2]));
        });
    }

    /// The regression behind one batch at a time: queries that came one turn after
    /// another each went with a `Sync` of their own, three queries to a `Sync` under
    /// load, and each `Sync` cost the server a commit and a flush.
    #[test]
    fn queries_made_while_two_batches_are_out_wait_and_then_share_one_sync() {
        on_worker(async {
            let (conn, mut server) = connected();
            // A few turns of the worker, so that the driver runs between the calls.
            let turns = || async {
                for _ in 0..4 {
                    tokio::task::yield_now().await;
                }
            };
            let first = read(&conn, 1, Commit::Shared);
            assert_eq!(tags(&mut server, 3).await, "BES");
            // The second batch goes while the server works on the first.
            let second = read(&conn, 2, Commit::Shared);
            assert_eq!(tags(&mut server, 3).await, "BES");
            let mut later = Vec::new();
            for id in 3..=5 {
                later.push(read(&conn, id, Commit::Shared));
                turns().await;
            }
            let answer = |id| [BIND_COMPLETE, &row(&[id]), &complete(), READY].concat();
            server.write_all(&answer(1)).await.expect("answer");
            assert_eq!(first.await.expect("task"), Ok(vec![1]));
            // The three that waited go together, with one `Sync`.
            assert_eq!(tags(&mut server, 7).await, "BEBEBES");
            server.write_all(&answer(2)).await.expect("answer");
            assert_eq!(second.await.expect("task"), Ok(vec![2]));
            let answers: Vec<Vec<u8>> =
                (3..=5).flat_map(|id| [BIND_COMPLETE.to_vec(), row(&[id]), complete()]).collect();
            server.write_all(&[answers.concat(), READY.to_vec()].concat()).await.expect("answer");
            for (id, call) in (3..=5).zip(later) {
                assert_eq!(call.await.expect("task"), Ok(vec![id]));
            }
        });
    }

    #[test]
    fn a_statement_is_described_when_prepared() {
        on_worker(async {
            let (conn, mut server) = connected();
            let prepare = {
                let conn = Rc::clone(&conn);
                tokio::task::spawn_local(async move {
                    conn.call(Commit::Own, |b| b.prepare("k0", "SELECT $1::int4 AS id")).await
                })
            };
            assert_eq!(tags(&mut server, 3).await, "PDS");
            let mut params = BytesMut::new();
            params.put_i16(1);
            params.put_u32(INT4);
            let mut fields = BytesMut::new();
            fields.put_i16(1);
            fields.extend_from_slice(b"id\0");
            fields.put_u32(0);
            fields.put_i16(0);
            fields.put_u32(INT4);
            fields.put_i16(4);
            fields.put_i32(-1);
            fields.put_i16(0);
            let answers = [&b"1\0\0\0\x04"[..], &message(b't', &params), &message(b'T', &fields), READY].concat();
            server.write_all(&answers).await.expect("answer");
            let answer = prepare.await.expect("task").expect("prepared");
            assert_eq!(answer.description.params, [INT4]);
            assert_eq!(answer.description.columns, [Column::new("id", INT4)]);
        });
    }
}
