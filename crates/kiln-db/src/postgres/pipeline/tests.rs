//! The pipeline against a scripted server on the other end of a socket pair.

use std::cell::RefCell;
use std::time::Duration;

use bytes::BufMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use super::conn::MAX_PENDING;
use super::dispatch::{MAX_MESSAGE, dispatch};
use super::*;
use crate::postgres::statement::{Column, Statement};
use crate::postgres::stream::Stream;
use crate::postgres::types::INT4;

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
                conn.call(Commit::Shared, |b| (0..MAX_PENDING as i32).for_each(|i| b.execute(&by_id(), &[&i]))).await
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
        let answers: Vec<Vec<u8>> = (3..=5).flat_map(|id| [BIND_COMPLETE.to_vec(), row(&[id]), complete()]).collect();
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
