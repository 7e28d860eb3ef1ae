//! `POST /bench/upload` (issue 25's benchmark endpoint) over a real socket: it counts
//! a multipart form's file bytes, and refuses what is not a multipart form.

use kiln_test_support::Server;
use kiln_test_support::TempDir;
use kiln_test_support::{Reply, request};

/// The demo with a database of its own, stopped before its folder goes.
struct Demo {
    server: Server,
    _dir: TempDir,
}

fn start(test: &str) -> Demo {
    let dir = TempDir::new(&format!("bench-upload-{test}"));
    let server = Server::start(env!("CARGO_BIN_EXE_kiln-demo"), &["--workers", "1", "--database", &dir.sqlite_url()]);
    Demo { server, _dir: dir }
}

fn post(demo: &Demo, content_type: &str, body: &str) -> Reply {
    let raw = format!(
        "POST /bench/upload HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: {content_type}\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    request(demo.server.addr, &raw).expect("POST /bench/upload")
}

#[test]
fn counts_the_file_fields_bytes_and_skips_text_fields() {
    let demo = start("counts");
    let file = "0123456789".repeat(1000);
    let body = format!(
        "--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nnot counted\r\n\
         --XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n{file}\r\n--XyZ--\r\n"
    );
    let reply = post(&demo, "multipart/form-data; boundary=XyZ", &body);
    assert_eq!(reply.status, 200, "{}", reply.head);
    assert_eq!(reply.text(), "10000");
    // A benchmark endpoint: answered as the peer answers, without the site's headers.
    assert_eq!(reply.header("x-content-type-options"), None, "{}", reply.head);
}

#[test]
fn readiness_probe_answers_get() {
    let demo = start("ready");
    let reply = demo.server.get("/bench/upload");
    assert_eq!(reply.status, 200, "{}", reply.head);
}

#[test]
fn not_multipart_is_415() {
    let demo = start("not_multipart");
    let reply = post(&demo, "application/octet-stream", "just bytes");
    assert_eq!(reply.status, 415, "{}", reply.head);
}

#[test]
fn multipart_without_boundary_is_400() {
    let demo = start("no_boundary");
    let reply = post(&demo, "multipart/form-data", "--x\r\n\r\n");
    assert_eq!(reply.status, 400, "{}", reply.head);
}

#[test]
fn unterminated_form_is_400() {
    let demo = start("unterminated");
    let body = "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\ncut short";
    let reply = post(&demo, "multipart/form-data; boundary=XyZ", body);
    assert_eq!(reply.status, 400, "{}", reply.head);
}
