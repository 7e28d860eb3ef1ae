//! The server's messages handed to the calls they answer, in order: rows, command tags,
//! errors (a failed statement rolls back its neighbours, which are sent again) and
//! each `ReadyForQuery`.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use bytes::{Buf, BytesMut};
use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::{
    BIND_COMPLETE_TAG, COMMAND_COMPLETE_TAG, DATA_ROW_TAG, ErrorResponseBody, Header, Message,
};

use super::{Expect, Shared};
use crate::error::{ConflictKind, Error};
use crate::postgres::call::Call;
use crate::postgres::statement::Column;

/// The longest message accepted from the server. Without a bound, a corrupt length
/// would make the read buffer grow toward the 4 GiB a length field can declare.
pub(crate) const MAX_MESSAGE: usize = 64 * 1024 * 1024;
/// SQLSTATEs that mean the server is going away, not that a statement was wrong.
const SERVER_GONE: [&str; 3] = ["57P01", "57P02", "57P03"];

/// The call the front of the queue belongs to, if it is a statement's.
fn front_statement(expected: &VecDeque<Expect>) -> Option<&Rc<Call>> {
    match expected.front() {
        Some(Expect::Statement(call)) => Some(call),
        _ => None,
    }
}

/// Hands every complete message in `input` to the call it answers.
pub(super) fn dispatch(shared: &RefCell<Shared>, input: &mut BytesMut) -> Result<(), String> {
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
