//! [`TestResponse`]: a whole response as a client sees it.

use kiln_http::{Response, StatusCode};
use serde::de::DeserializeOwned;

/// A response received by the [`TestClient`](super::TestClient).
#[derive(Debug, Clone)]
pub struct TestResponse {
    status: StatusCode,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl TestResponse {
    /// The status and headers of `res`, and its body when in memory (none for `HEAD`).
    pub(super) fn from_response(res: &Response, head: bool) -> Self {
        let headers: Vec<(String, String)> = String::from_utf8_lossy(res.raw_headers())
            .split("\r\n")
            .filter_map(|line| line.split_once(": "))
            .map(|(n, v)| (n.to_owned(), v.to_owned()))
            .collect();
        let mut body = res.body_bytes().map(<[u8]>::to_vec).unwrap_or_default();
        let mut response = TestResponse { status: res.status(), headers, body: Vec::new() };
        if let Some(len) = res.body_len() {
            response.headers.push(("Content-Length".to_owned(), len.to_string()));
        }
        if !head {
            response.body = std::mem::take(&mut body);
        }
        response
    }

    /// What the server answers a handler that panicked.
    pub(super) fn internal_server_error() -> Self {
        let body = b"internal server error\n".to_vec();
        let headers = [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", "22")];
        let headers = headers.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
        TestResponse { status: StatusCode::INTERNAL_SERVER_ERROR, headers, body }
    }

    /// Adds a header, as the engine does after the service.
    pub(super) fn push_header(&mut self, name: &str, value: &str) {
        self.headers.push((name.to_owned(), value.to_owned()));
    }

    /// This response with `body` instead of its own.
    pub(super) fn with_body(mut self, body: Vec<u8>) -> Self {
        self.body = body;
        self
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// Every value of header `name`, in order.
    pub fn header_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers.iter().filter(move |(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The body.
    pub fn bytes(&self) -> &[u8] {
        &self.body
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body parsed as JSON. Panics if it is not.
    pub fn json<T: DeserializeOwned>(&self) -> T {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not the expected JSON: {e}: {}", self.text()))
    }
}
