//! Entry points for the fuzz targets in `fuzz/`; not part of the public API.

use crate::config::Limits;
use crate::h1::chunked::ChunkedDecoder;
use crate::h1::parse::{self, Framing};
use crate::head::Head;

/// Parses `data` as a request head with the default limits. Returns the head's length
/// when it is complete and valid, after checking that every offset lies inside `data`.
pub fn parse_request_head(data: &[u8]) -> Option<usize> {
    let mut head = Head::default();
    let parsed = parse::parse_head(data, &Limits::default(), &mut head).ok()??;
    parse::check_body_len(&parsed, Limits::default().max_body_bytes as u64).ok()?;
    assert!(parsed.len <= data.len());
    let inside = |r: &std::ops::Range<u32>| r.start <= r.end && r.end as usize <= parsed.len;
    assert!(inside(&head.method) && inside(&head.target));
    assert!(head.headers.iter().all(|h| inside(&h.name) && inside(&h.value)));
    if let Framing::Length(n) = parsed.framing {
        assert!(n as usize <= Limits::default().max_body_bytes);
    }
    Some(parsed.len)
}

/// Decodes `data` as a chunked body in two pieces split at `split`, and in one piece,
/// and checks that both give the same body and consume the same bytes.
pub fn decode_chunked(data: &[u8], split: usize) {
    const MAX: usize = 1 << 20;
    let whole = {
        let mut d = ChunkedDecoder::new();
        let mut out = Vec::new();
        d.decode(data, &mut out, MAX).map(|used| (used, d.is_done(), out))
    };
    let split = split.min(data.len());
    let pieces = {
        let mut d = ChunkedDecoder::new();
        let mut out = Vec::new();
        d.decode(&data[..split], &mut out, MAX).and_then(|a| {
            let b = if a == split && !d.is_done() { d.decode(&data[split..], &mut out, MAX)? } else { 0 };
            Ok((a + b, d.is_done(), out))
        })
    };
    match (whole, pieces) {
        (Ok(w), Ok(p)) => {
            assert!(w.0 <= data.len());
            assert_eq!(w, p, "splitting the input changed the result");
        }
        (Err(_), Err(_)) => {}
        (w, p) => panic!("one piece and two pieces disagree: {:?} vs {:?}", w.is_ok(), p.is_ok()),
    }
}

/// Feeds `data` to kiln's own HTTP/2 frame layer as what a client sends after its
/// preface, in two pieces split at `split`, answering every request made whole; checks
/// that what comes back is a sequence of well-formed frames and that every stream's
/// buffering budget is given back.
pub fn h2_frames(data: &[u8], split: usize) {
    crate::h2::fuzz_frames(data, split);
}

/// Serves `data` as the bytes a client sends on one connection (then half-closes), with
/// the real connection engine over a loopback socket, and checks what comes back: a
/// sequence of well-formed HTTP/1.1 responses, never more final responses than the
/// input holds complete requests (plus the one refusal that closes), nothing after a
/// `Connection: close`, and every byte of the worker's buffering budget given back.
pub fn serve_connection(data: &[u8]) {
    let out = rig::RIG.with(|rig| rig.exchange(data));
    check_responses(data, &out);
}

mod rig {
    use std::io;
    use std::rc::Rc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};
    use tokio::runtime::Runtime;
    use tokio::task::LocalSet;

    use crate::config::Limits;
    use crate::worker::Worker;
    use crate::{Bytes, Request, Response, Service, StatusCode};

    thread_local! {
        /// One runtime, listener and worker for every run: building them costs more
        /// than a run.
        pub(super) static RIG: Rig = Rig::new().expect("fuzzing rig");
    }

    pub(super) struct Rig {
        rt: Runtime,
        local: LocalSet,
        listener: TcpListener,
        worker: Rc<Worker>,
        service: Rc<Echo>,
    }

    impl Rig {
        fn new() -> io::Result<Rig> {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let listener = rt.block_on(TcpListener::bind("127.0.0.1:0"))?;
            let limits = Limits { max_body_bytes: 64 * 1024, max_buffered_bytes: 96 * 1024, ..Limits::default() };
            let worker = Rc::new(Worker::new(limits));
            Ok(Rig { rt, local: LocalSet::new(), listener, worker, service: Rc::new(Echo) })
        }

        pub(super) fn exchange(&self, data: &[u8]) -> Vec<u8> {
            self.local.block_on(&self.rt, async {
                let addr = self.listener.local_addr().expect("bound");
                let (client, accepted) = tokio::join!(TcpStream::connect(addr), self.listener.accept());
                let (client, (server, peer)) = (client.expect("connect"), accepted.expect("accept"));
                let slot = self.worker.open_connection();
                let conn =
                    crate::h1::conn::serve(server, peer, Rc::clone(&self.service), Rc::clone(&self.worker), slot);
                let conn = tokio::task::spawn_local(conn);
                let (mut rd, mut wr) = client.into_split();
                let send = async {
                    // The server may close early (after a refusal): then the rest is moot.
                    let _ = wr.write_all(data).await;
                    let _ = wr.shutdown().await;
                };
                let receive = async {
                    let mut out = Vec::new();
                    let _ = rd.read_to_end(&mut out).await;
                    out
                };
                let ((), out) = tokio::join!(send, receive);
                conn.await.expect("the connection task");
                assert_eq!(self.worker.connections.get(), 0, "the connection was not counted out");
                assert_eq!(self.worker.buffered(), 0, "buffering budget not given back");
                out
            })
        }
    }

    /// Exercises every body kind by the target's second byte.
    pub(super) struct Echo;

    impl Service for Echo {
        async fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) {
            // A method is a token, so it is a valid header value.
            res.append_header_unchecked(b"X-Method", req.method().as_bytes());
            match req.path().as_bytes().get(1) {
                Some(b's') => {
                    let chunks = [Bytes::from_static(b"one,"), Bytes::new(), Bytes::from(req.body().to_vec())];
                    let mut chunks = chunks.into_iter();
                    res.set_body_stream(Box::pin(Chunks(std::iter::from_fn(move || chunks.next().map(Ok)))));
                }
                Some(b'c') => {
                    res.set_close();
                    res.set_body_static(b"bye");
                }
                Some(b'n') => res.set_status(StatusCode::NO_CONTENT),
                // Over the copy threshold, and past the budget with a body: the 503 that
                // replaces it carries no `X-Method`, so not for `HEAD`.
                Some(b'b') if req.method() != "HEAD" => res.body_mut().resize(40 * 1024 + req.body().len() * 16, b'b'),
                _ => {
                    let line = format!("{} {}", req.target(), req.body().len());
                    res.body_mut().extend_from_slice(line.as_bytes());
                }
            }
        }
    }

    struct Chunks<I>(I);

    impl<I: Iterator<Item = io::Result<Bytes>> + Unpin> futures_core::Stream for Chunks<I> {
        type Item = io::Result<Bytes>;
        fn poll_next(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Self::Item>> {
            std::task::Poll::Ready(self.0.next())
        }
    }
}

/// Checks the responses to `input`; panics on the first violation.
fn check_responses(input: &[u8], out: &[u8]) {
    // An upper bound on the complete heads in the input: each ends with an empty line.
    let heads =
        (0..input.len()).filter(|&i| input[i..].starts_with(b"\n\r\n") || input[i..].starts_with(b"\n\n")).count();
    let mut finals = 0;
    let mut at = 0;
    while at < out.len() {
        let rest = &out[at..];
        assert!(
            rest.starts_with(b"HTTP/1.1 "),
            "not an HTTP/1.1 status line at {at}: {:?}",
            String::from_utf8_lossy(rest)
        );
        let mut slots = [httparse::EMPTY_HEADER; 32];
        let mut res = httparse::Response::new(&mut slots);
        let head_len = match res.parse(rest) {
            Ok(httparse::Status::Complete(n)) => n,
            other => panic!("malformed or cut response head ({other:?}): {:?}", String::from_utf8_lossy(rest)),
        };
        let code = res.code.unwrap_or(0);
        assert!((100..600).contains(&code), "status {code}");
        let header = |name: &str| res.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value);
        let close = header("connection") == Some(b"close");
        let body = &rest[head_len..];
        if code < 200 {
            assert_eq!(code, 100, "the only interim response is 100 Continue");
            at += head_len;
            continue;
        }
        finals += 1;
        let length = header("content-length").map(|v| std::str::from_utf8(v).unwrap().parse::<usize>().unwrap());
        let chunked = header("transfer-encoding") == Some(b"chunked");
        assert!(!(length.is_some() && chunked), "both Content-Length and chunked");
        let body_len = if header("x-method") == Some(b"HEAD") || code == 204 || code == 304 {
            0
        } else if let Some(n) = length {
            // A refused HEAD has a length but no body; it is the last response.
            if body.is_empty() && code >= 400 && close { 0 } else { n }
        } else if chunked {
            chunked_len(body)
        } else {
            assert!(close, "a body delimited by close must say Connection: close");
            body.len()
        };
        assert!(body.len() >= body_len, "response body cut short: {} of {body_len}", body.len());
        at += head_len + body_len;
        if close {
            assert_eq!(at, out.len(), "bytes after a Connection: close response");
        }
    }
    assert!(finals <= heads + 1, "{finals} responses to at most {heads} complete requests");
}

/// The length of a chunked response body, checking its framing.
fn chunked_len(body: &[u8]) -> usize {
    let mut at = 0;
    loop {
        let line_end = body[at..].windows(2).position(|w| w == b"\r\n").expect("chunk size line") + at;
        let size = usize::from_str_radix(std::str::from_utf8(&body[at..line_end]).unwrap(), 16).expect("hex size");
        at = line_end + 2 + size;
        assert_eq!(&body[at..at + 2], b"\r\n", "chunk not followed by CRLF");
        at += 2;
        if size == 0 {
            return at;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_rig_answers_and_the_checker_counts() {
        let input = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nHEAD /s HTTP/1.1\r\nHost: x\r\n\r\nPOST /s HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi";
        let out = rig::RIG.with(|rig| rig.exchange(input));
        let text = String::from_utf8_lossy(&out);
        assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 3, "{text}");
        assert!(text.ends_with("one,hi"), "{text}");
        check_responses(input, &out);
    }

    #[test]
    #[should_panic(expected = "responses to at most")]
    fn the_checker_refuses_more_responses_than_requests() {
        let one = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        check_responses(b"GET / HTTP/1.1\r\n\r\n", &one.repeat(3));
    }
}
