//! Multipart uploads through the public API: fields and files, the limits and their
//! statuses, the CSRF token in a form, and a 100 MiB upload with bounded memory.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use kiln::http::Server;
use kiln::multipart::{Multipart, MultipartLimits, UploadData};
use kiln::rejection::Rejection;
use kiln::test::TestClient;
use kiln::{App, AppService, Csrf, CsrfGuard, Key, Route, StatusCode};

#[derive(Route)]
#[route(POST, "/streamed")]
struct Streamed;

#[derive(Route)]
#[route(POST, "/buffered")]
struct Buffered;

#[derive(Route)]
#[route(POST, "/guarded")]
struct Guarded;

#[derive(Route)]
#[route(POST, "/guarded-buffered")]
struct GuardedBuffered;

#[derive(Route)]
#[route("/token")]
struct Token;

/// Describes the form: each text field, and each file with its size and where it went.
async fn describe(form: Multipart) -> Result<String, Rejection> {
    let limits = MultipartLimits { max_field_bytes: 100, memory_threshold: 1000, ..MultipartLimits::default() };
    let form = form.with_limits(limits).collect().await?;
    let mut out = format!("title={}", form.text("title")?);
    for file in form.files() {
        let place = match file.data() {
            UploadData::Memory(_) => "memory",
            UploadData::File(_) => "disk",
        };
        out.push_str(&format!(" {}:{:?}:{}:{place}", file.name(), file.file_name(), file.len()));
        assert_eq!(file.to_bytes().unwrap().len() as u64, file.len());
    }
    Ok(out)
}

async fn streamed(_: Streamed, form: Multipart) -> Result<String, Rejection> {
    describe(form).await
}

async fn buffered(_: Buffered, form: Multipart) -> Result<String, Rejection> {
    describe(form).await
}

async fn guarded(_: Guarded, _: CsrfGuard, form: Multipart) -> Result<String, Rejection> {
    describe(form).await
}

async fn guarded_buffered(_: GuardedBuffered, _: CsrfGuard, form: Multipart) -> Result<String, Rejection> {
    describe(form).await
}

async fn token(_: Token, csrf: Csrf) -> (Csrf, String) {
    let token = csrf.token().to_owned();
    (csrf, token)
}

fn app() -> App<()> {
    App::new(|_| ())
        .secret_key(Key::new([9u8; 32]).unwrap())
        .route(streamed)
        .route(buffered)
        .route(guarded)
        .route(guarded_buffered)
        .route(token)
        .stream_body::<Streamed>(8 * 1024 * 1024)
        .stream_body::<Guarded>(8 * 1024 * 1024)
}

fn client() -> TestClient<AppService<()>> {
    TestClient::new(app())
}

#[test]
fn fields_and_files_arrive_whole_streamed_or_buffered() {
    let mut c = client();
    let small = vec![1u8; 500];
    let large = vec![2u8; 3 * 1024 * 1024];
    let res = c
        .request("POST", &Streamed)
        .multipart(&[("title", None, b"cat"), ("small", Some("s.bin"), &small), ("large", Some("l.bin"), &large)])
        .send();
    assert_eq!(
        res.text(),
        "title=cat small:Some(\"s.bin\"):500:memory large:Some(\"l.bin\"):3145728:disk",
        "a file over the global 1 MiB limit reaches a streamed route"
    );
    let res = c.request("POST", &Buffered).multipart(&[("title", None, b"dog"), ("f", Some("f"), &small)]).send();
    assert_eq!(res.text(), "title=dog f:Some(\"f\"):500:memory");
}

#[test]
fn a_field_over_its_limit_gets_413() {
    let mut c = client();
    let res = c.request("POST", &Streamed).multipart(&[("title", None, &[b'x'; 101])]).send();
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(res.text().contains("\"title\""), "{}", res.text());
}

#[test]
fn a_body_over_the_routes_limit_gets_413() {
    let mut c = client();
    let res = c.request("POST", &Streamed).multipart(&[("f", Some("f"), &vec![0u8; 9 * 1024 * 1024])]).send();
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let res = c.request("POST", &Buffered).multipart(&[("f", Some("f"), &vec![0u8; 2 * 1024 * 1024])]).send();
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE, "a buffered route keeps the global limit");
}

#[test]
fn a_body_that_is_not_multipart_gets_415() {
    let mut c = client();
    let res = c.request("POST", &Streamed).form(&[("title", "x")]).send();
    assert_eq!(res.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[test]
fn a_missing_or_malformed_boundary_gets_400() {
    let mut c = client();
    for content_type in ["multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=\"a"] {
        let res = c.request("POST", &Streamed).header("Content-Type", content_type).body("--a\r\n").send();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{content_type}");
    }
    // A boundary that the body never uses, and a body cut inside a part.
    for body in ["nothing here", "--b\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nunfinished"] {
        let res =
            c.request("POST", &Streamed).header("Content-Type", "multipart/form-data; boundary=b").body(body).send();
        assert_eq!(res.status(), StatusCode::BAD_REQUEST, "{body}");
    }
}

#[test]
fn a_missing_required_field_gets_422() {
    let mut c = client();
    let res = c.request("POST", &Streamed).multipart(&[("other", None, b"x")]).send();
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(res.text().contains("\"title\""));
}

/// The CSRF cookie and token a visitor gets with a form.
fn csrf(c: &mut TestClient<AppService<()>>) -> (String, String) {
    let res = c.get(&Token);
    let cookie = res.header("set-cookie").unwrap().split(';').next().unwrap().to_owned();
    (cookie, res.text())
}

#[test]
fn a_multipart_form_with_the_csrf_token_passes_the_guard() {
    let mut c = client();
    let (cookie, token) = csrf(&mut c);
    for target in [Guarded.to_string(), GuardedBuffered.to_string()] {
        let fields: [(&str, Option<&str>, &[u8]); 2] = [("csrf_token", None, token.as_bytes()), ("title", None, b"t")];
        let res = c.request("POST", &target).header("Cookie", &cookie).multipart(&fields).send();
        assert_eq!((res.status(), res.text()), (StatusCode::OK, "title=t".to_owned()), "{target}");
        // The header works as well as the field.
        let res = c
            .request("POST", &target)
            .header("Cookie", &cookie)
            .header("X-CSRF-Token", &token)
            .multipart(&[("title", None, b"h")])
            .send();
        assert_eq!(res.text(), "title=h", "{target}");
    }
}

#[test]
fn a_multipart_form_with_a_wrong_csrf_token_or_no_cookie_gets_403() {
    let mut c = client();
    let (cookie, token) = csrf(&mut c);
    for target in [Guarded.to_string(), GuardedBuffered.to_string()] {
        let fields: [(&str, Option<&str>, &[u8]); 2] = [("csrf_token", None, b"0"), ("title", None, b"t")];
        let res = c.request("POST", &target).header("Cookie", &cookie).multipart(&fields).send();
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{target}");
        let res = c.request("POST", &target).multipart(&[("csrf_token", None, token.as_bytes())]).send();
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{target}: no cookie");
    }
}

#[test]
fn one_csrf_rule_the_token_is_the_first_field_streamed_or_buffered_and_missing_differs_from_late() {
    // Issue 33: a whole-body route took the token in any field, a streamed one only
    // first, and a missing token and a late one got the same message.
    let mut c = client();
    let (cookie, token) = csrf(&mut c);
    let file = vec![7u8; 300 * 1024];
    for target in [Guarded.to_string(), GuardedBuffered.to_string()] {
        let after_text: [(&str, Option<&str>, &[u8]); 2] =
            [("title", None, b"t"), ("csrf_token", None, token.as_bytes())];
        let after_file: [(&str, Option<&str>, &[u8]); 3] =
            [("photo", Some("p.jpg"), &file), ("csrf_token", None, token.as_bytes()), ("title", None, b"t")];
        for (fields, first) in [(&after_text[..], "title"), (&after_file[..], "photo")] {
            let res = c.request("POST", &target).header("Cookie", &cookie).multipart(fields).send();
            assert_eq!(res.status(), StatusCode::FORBIDDEN, "{target}");
            let text = res.text();
            assert!(
                text.starts_with(&format!(
                    "the CSRF token must be the multipart form's first field, but it comes after the field \"{first}\""
                )),
                "{target}: {text}"
            );
        }
        let without: [(&str, Option<&str>, &[u8]); 2] = [("title", None, b"t"), ("photo", Some("p.jpg"), &file)];
        let res = c.request("POST", &target).header("Cookie", &cookie).multipart(&without).send();
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{target}");
        let text = res.text();
        assert!(text.starts_with("the CSRF token is missing from the multipart form"), "{target}: {text}");
        assert!(text.contains("first field") && text.contains("X-CSRF-Token"), "{target}: {text}");
        // First, it passes on both.
        let first: [(&str, Option<&str>, &[u8]); 2] = [("csrf_token", None, token.as_bytes()), ("title", None, b"t")];
        let res = c.request("POST", &target).header("Cookie", &cookie).multipart(&first).send();
        assert_eq!((res.status(), res.text()), (StatusCode::OK, "title=t".to_owned()), "{target}");
    }
}

#[derive(Route)]
#[route(POST, "/keep")]
struct Keep;

/// Reads the form in the order it has its fields: a text, a file, a text.
async fn keep(_: Keep, form: Multipart) -> Result<String, Rejection> {
    let mut form = form.collect().await?;
    let title = form.text("title")?;
    let file = form.take_file("file")?;
    let caption = form.text("caption")?;
    // An upload stored under a name of the app's own, never the client's.
    let path = std::env::temp_dir().join(format!("kiln-keep-{}", kiln::random_token()));
    file.persist(&path).map_err(|e| Rejection::custom(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let kept = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    Ok(format!("{title}: {} bytes, {caption}", kept.len()))
}

#[test]
fn multipart_text_then_take_file_compiles_and_reads_the_form_in_order() {
    // Issue 33: `text` borrowed the form and `take_file` needed it mutably, so the
    // handler above was E0502.
    let mut c = TestClient::new(App::new(|_| ()).route(keep));
    let fields: [(&str, Option<&str>, &[u8]); 3] =
        [("title", None, b"cat"), ("file", Some("cat.png"), &[1u8; 5000]), ("caption", None, b"asleep")];
    let res = c.request("POST", &Keep).multipart(&fields).send();
    assert_eq!((res.status(), res.text()), (StatusCode::OK, "cat: 5000 bytes, asleep".to_owned()));
}

#[test]
fn random_token_is_public_64_hex_digits_and_unique() {
    let tokens: std::collections::HashSet<String> = (0..500).map(|_| kiln::random_token()).collect();
    assert_eq!(tokens.len(), 500);
    for token in &tokens {
        assert_eq!(token.len(), 64, "{token}");
        assert!(token.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')), "{token}");
    }
}

/// This process's resident memory, in bytes (the server runs in it).
fn resident_bytes() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).unwrap().trim().trim_end_matches(" kB");
    kib.trim().parse::<usize>().unwrap() * 1024
}

#[derive(Route)]
#[route(POST, "/big")]
struct Big;

/// Saves the one file to disk and says how large it was.
async fn big(_: Big, form: Multipart) -> Result<String, Rejection> {
    let dir = std::env::temp_dir();
    let limits = MultipartLimits { temp_dir: Some(dir), ..MultipartLimits::default() };
    let mut form = form.with_limits(limits);
    let Some(field) = form.next_field().await? else { return Ok("empty".into()) };
    let upload = field.save().await?;
    let on_disk = matches!(upload.data(), UploadData::File(f) if f.path().metadata().unwrap().len() == upload.len());
    Ok(format!("{} {on_disk}", upload.len()))
}

#[test]
fn a_100_mib_multipart_upload_keeps_the_servers_memory_bounded() {
    const SIZE: usize = 100 * 1024 * 1024;
    let app = App::new(|_| ()).route(big).stream_body::<Big>(200 * 1024 * 1024);
    let server = Server::new().listen(SocketAddr::from(([127, 0, 0, 1], 0))).workers(1);
    let serving = kiln::serve(app, server).unwrap();
    let before = resident_bytes();
    let head = "--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"big.bin\"\r\n\r\n";
    let tail = "\r\n--B--\r\n";
    let mut s = TcpStream::connect(serving.local_addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "POST /big HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: {}\r\n\r\n{head}",
        head.len() + SIZE + tail.len()
    )
    .unwrap();
    let piece = vec![b'z'; 256 * 1024];
    let mut peak = 0;
    for i in 0..SIZE / piece.len() {
        s.write_all(&piece).unwrap();
        if i % 40 == 0 {
            peak = peak.max(resident_bytes());
        }
    }
    s.write_all(tail.as_bytes()).unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.ends_with(&format!("{SIZE} true")), "{reply}");
    let growth = peak.saturating_sub(before);
    assert!(growth < 40 * 1024 * 1024, "a 100 MiB upload grew the server by {} MiB", growth >> 20);
}

/// The same streamed route and `Multipart` over HTTP/2 with prior knowledge (h2c),
/// sent by curl as a browser form would be.
#[test]
fn a_multipart_form_arrives_whole_over_h2c_from_curl() {
    let server = Server::new().listen(SocketAddr::from(([127, 0, 0, 1], 0))).workers(1);
    let serving = kiln::serve(app(), server).unwrap();
    let dir = std::env::temp_dir().join(format!("kiln-multipart-h2c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("photo.jpg");
    std::fs::write(&file, vec![5u8; 2 * 1024 * 1024]).unwrap();
    let out = std::process::Command::new("curl")
        .args(["-sS", "--http2-prior-knowledge", "--max-time", "30", "-F", "title=over h2"])
        .arg("-F")
        .arg(format!("photo=@{}", file.display()))
        .arg("-w")
        .arg(" %{http_version}")
        .arg(format!("http://{}/streamed", serving.local_addr()))
        .output()
        .expect("curl runs");
    std::fs::remove_dir_all(&dir).unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text,
        "title=over h2 photo:Some(\"photo.jpg\"):2097152:disk 2",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
