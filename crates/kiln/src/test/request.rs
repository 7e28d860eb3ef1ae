//! [`TestRequest`]: a request built up, then sent whole, opened as a stream, or
//! opened as a WebSocket.

use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use kiln_http::{RequestBytes, Response, Service, StatusCode};
use serde::Serialize;

use super::{TestClient, TestResponse, TestStream, TestWebSocket};

/// A request being built; see [`TestClient::request`].
#[derive(Debug)]
pub struct TestRequest<'c, S> {
    client: &'c mut TestClient<S>,
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// The lengths of the chunks a streamed body is handed over in
    /// ([`body_chunks`](Self::body_chunks)); empty: one chunk.
    chunks: Vec<usize>,
}

impl<'c, S: Service> TestRequest<'c, S> {
    pub(super) fn new(client: &'c mut TestClient<S>, method: &str, target: String) -> Self {
        TestRequest {
            client,
            method: method.to_owned(),
            target,
            headers: Vec::new(),
            body: Vec::new(),
            chunks: Vec::new(),
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Sets the body (and its `Content-Length`).
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self.chunks.clear();
        self
    }

    /// Sets the body (and its `Content-Length`) as these chunks: a route whose body is
    /// streamed ([`App::stream_body`](crate::App::stream_body)) reads them one at a
    /// time from [`body_stream`](kiln_http::Request::body_stream), as from a client
    /// whose upload arrives over several reads; any other route sees the whole body.
    pub fn body_chunks<C: AsRef<[u8]>>(mut self, chunks: impl IntoIterator<Item = C>) -> Self {
        self.body.clear();
        self.chunks.clear();
        for chunk in chunks {
            self.body.extend_from_slice(chunk.as_ref());
            self.chunks.push(chunk.as_ref().len());
        }
        self
    }

    /// Sets a JSON body and `Content-Type: application/json`.
    pub fn json(self, value: &impl Serialize) -> Self {
        let body = serde_json::to_vec(value).expect("serialisable");
        self.header("Content-Type", "application/json").body(body)
    }

    /// A `multipart/form-data` body (RFC 7578) of `(name, file name, bytes)` fields,
    /// in order; a field with a file name is a file.
    ///
    /// ```
    /// # use kiln::{App, Route, multipart::Multipart};
    /// # #[derive(Route)]
    /// # #[route(POST, "/up")]
    /// # struct Up;
    /// async fn up(_: Up, form: Multipart) -> Result<String, kiln::rejection::Rejection> {
    ///     Ok(form.collect().await?.text("note")?.to_owned())
    /// }
    /// let mut client = kiln::test::TestClient::new(App::new(|_| ()).route(up));
    /// let res = client.request("POST", &Up).multipart(&[("note", None, b"hi".as_slice())]).send();
    /// assert_eq!(res.text(), "hi");
    /// ```
    pub fn multipart(self, fields: &[(&str, Option<&str>, &[u8])]) -> Self {
        const BOUNDARY: &str = "kiln-test-boundary-7MA4YWxkTrZu0gW";
        let mut body = Vec::new();
        for (name, file_name, bytes) in fields {
            body.extend_from_slice(
                format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"").as_bytes(),
            );
            if let Some(file_name) = file_name {
                body.extend_from_slice(
                    format!("; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream").as_bytes(),
                );
            }
            body.extend_from_slice(b"\r\n\r\n");
            body.extend_from_slice(bytes);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
        self.header("Content-Type", &format!("multipart/form-data; boundary={BOUNDARY}")).body(body)
    }

    /// Sets a form body and `Content-Type: application/x-www-form-urlencoded`.
    pub fn form(self, value: &impl Serialize) -> Self {
        let body = serde_urlencoded::to_string(value).expect("serialisable");
        self.header("Content-Type", "application/x-www-form-urlencoded").body(body)
    }

    /// Sends the request through the engine's parser and the service, and returns
    /// the response as a client would see it (no body for `HEAD`). A request the
    /// server would refuse before the app sees it (over a limit, malformed) gets the
    /// server's answer, as the server would send it. A streamed body
    /// (`Response::set_body_stream`: Server-Sent Events, a download made as it goes)
    /// is left unread: [`open`](Self::open) reads one.
    pub fn send(self) -> TestResponse {
        let (client, head, answer) = self.run();
        let res = match answer {
            Answer::Served(res) => TestResponse::from_response(&res, head),
            Answer::Refused(res) | Answer::Panicked(res) => res,
        };
        client.store_cookies(&res);
        res
    }

    /// Sends the request like [`send`](Self::send), and reads a streamed response's
    /// body until it ends or `max_bytes` have come, whichever is first. It waits as
    /// long as the stream does: [`open`](Self::open) reads with a timeout.
    pub fn send_streaming(self, max_bytes: usize) -> TestResponse {
        let mut stream = self.open();
        let mut body = Vec::new();
        while body.len() < max_bytes {
            match stream.next_chunk(Duration::MAX) {
                Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                Ok(None) | Err(_) => break,
            }
        }
        body.truncate(max_bytes);
        stream.into_response(body)
    }

    /// Sends the request and returns as soon as the handler has answered, with the
    /// body still to come: a stream stays open, and the app goes on serving, while the
    /// test sends other requests; read it as it comes with a timeout
    /// ([`TestStream::next_event`], [`TestStream::next_chunk`]).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use kiln::realtime::{Bus, BusEvents, LocalBus, Sse};
    /// use kiln::test::TestClient;
    /// use kiln::{App, Route, State};
    ///
    /// #[derive(Route)]
    /// #[route("/news/events")]
    /// struct Listen;
    ///
    /// #[derive(Route)]
    /// #[route(POST, "/news")]
    /// struct Post;
    ///
    /// async fn listen(_: Listen, bus: State<LocalBus>) -> Sse<BusEvents> {
    ///     Sse::new(bus.subscribe("news").events())
    /// }
    ///
    /// async fn post(_: Post, bus: State<LocalBus>, line: String) -> String {
    ///     bus.publish("news", &line).await.unwrap().to_string()
    /// }
    ///
    /// let bus = Bus::new();
    /// let mut client = TestClient::new(App::new(move |_| bus.attach()).route(listen).route(post));
    /// let mut events = client.request("GET", &Listen).open();
    /// assert_eq!(events.header("content-type"), Some("text/event-stream"));
    ///
    /// let id = client.request("POST", &Post).body("kiln 1.0 is out").send().text();
    /// let event = events.next_event(Duration::from_secs(5)).unwrap().expect("an event");
    /// assert_eq!((event.id(), event.data()), (Some(id.as_str()), "kiln 1.0 is out"));
    ///
    /// // Nothing more was said: the read gives up rather than hanging the test.
    /// assert!(events.next_event(Duration::from_millis(50)).is_err());
    /// ```
    pub fn open(self) -> TestStream {
        let (client, head, answer) = self.run();
        let driver = Rc::clone(&client.driver);
        let stream = match answer {
            Answer::Served(mut res) => {
                let body = if head { None } else { res.take_body_stream() };
                TestStream::new(driver, TestResponse::from_response(&res, head), body)
            }
            Answer::Refused(res) | Answer::Panicked(res) => TestStream::new(driver, res, None),
        };
        client.store_cookies(stream.head());
        stream
    }

    /// Opens a WebSocket: sends the handshake (RFC 6455 §4.1) with this request's
    /// headers and, once the app answers `101`, talks to the socket its handler runs,
    /// in process ([`TestWebSocket`]). Any other answer comes back as the error.
    /// The test client offers no extension (no permessage-deflate).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use kiln::test::TestClient;
    /// use kiln::ws::{CloseCode, Message, WebSocketUpgrade};
    /// use kiln::{App, IntoResponse, Route};
    ///
    /// #[derive(Route)]
    /// #[route("/echo")]
    /// struct Echo;
    ///
    /// async fn echo(_: Echo, ws: WebSocketUpgrade) -> impl IntoResponse {
    ///     ws.on_upgrade(|mut socket| async move {
    ///         while let Some(message) = socket.recv().await {
    ///             if socket.send(message).await.is_err() {
    ///                 break;
    ///             }
    ///         }
    ///     })
    /// }
    ///
    /// let mut client = TestClient::new(App::new(|_| ()).route(echo));
    /// let mut socket = client.request("GET", &Echo).websocket().expect("101");
    /// let wait = Duration::from_secs(5);
    /// socket.send("hello");
    /// assert_eq!(socket.recv(wait).unwrap(), Some(Message::Text("hello".into())));
    /// socket.send(vec![1, 2, 3]);
    /// assert_eq!(socket.recv(wait).unwrap(), Some(Message::Binary(vec![1, 2, 3])));
    /// let answer = socket.close(CloseCode::NORMAL, "bye", wait).unwrap();
    /// assert_eq!(answer.map(|frame| frame.code), Some(CloseCode::NORMAL));
    ///
    /// // A request that is no handshake gets the app's refusal.
    /// assert_eq!(client.get(&Echo).status(), 400);
    /// ```
    pub fn websocket(self) -> Result<TestWebSocket, TestResponse> {
        let mut req = self;
        for (name, value) in [
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            // RFC 6455 §4.1: a nonce; the test's own, if it set one.
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ("Sec-WebSocket-Version", "13"),
        ] {
            if !req.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
                req = req.header(name, value);
            }
        }
        let (client, head, answer) = req.run();
        let mut res = match answer {
            Answer::Served(res) => res,
            Answer::Refused(res) | Answer::Panicked(res) => return Err(res),
        };
        let answered = TestResponse::from_response(&res, head);
        client.store_cookies(&answered);
        match res.take_upgrade() {
            Some(on_upgrade) if answered.status() == StatusCode::SWITCHING_PROTOCOLS => {
                Ok(TestWebSocket::start(Rc::clone(&client.driver), answered, on_upgrade))
            }
            _ => Err(answered),
        }
    }

    /// The request through the engine's parser and the service, in a task of its own.
    /// Returns the client, whether the request was `HEAD`, and the answer.
    fn run(self) -> (&'c mut TestClient<S>, bool, Answer) {
        let head = self.method == "HEAD";
        let mut raw = format!("{} {} HTTP/1.1\r\n", self.method, self.target);
        // HTTP/1.1 needs a `Host` (RFC 9112 §3.2); the test's own, if it set one.
        if !self.headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
            raw.push_str("Host: test\r\n");
        }
        if !self.headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("cookie")) {
            if let Some(cookies) = self.client.cookie_header() {
                raw.push_str(&format!("Cookie: {cookies}\r\n"));
            }
        }
        for (name, value) in &self.headers {
            raw.push_str(&format!("{name}: {value}\r\n"));
        }
        if !self.body.is_empty() {
            raw.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        raw.push_str("\r\n");
        let mut bytes = raw.into_bytes();
        bytes.extend_from_slice(&self.body);
        let peer = SocketAddr::from(([127, 0, 0, 1], 40000));
        let client = self.client;
        let service = Rc::clone(&client.service);
        let parsed = match RequestBytes::parse_for(bytes.clone(), peer, &client.limits, |req| service.body_mode(req)) {
            Ok(mut parsed) => {
                parsed.stream_in_chunks(&self.chunks);
                parsed
            }
            Err(refusal) => {
                let mut res = Response::new();
                refusal.render(&mut res);
                // A body over its limit is refused after the head was read, and the
                // server hands that refusal to the service (`Service::refused`): the
                // head, read again without the limit, is the request it sees.
                if refusal.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    let unlimited = kiln_http::Limits { max_body_bytes: usize::MAX, ..client.limits.clone() };
                    if let Ok(head_read) =
                        RequestBytes::parse_for(bytes, peer, &unlimited, |_| kiln_http::BodyMode::Buffer)
                    {
                        service.refused(&head_read.request(), &mut res);
                    }
                }
                let mut res = TestResponse::from_response(&res, head);
                res.push_header("Connection", "close");
                return (client, head, Answer::Refused(res));
            }
        };
        // A task of its own, as each connection's is on a server: what a request may
        // ask of `tokio::task` (its id) is there, and a panic ends only the task.
        let call = async move {
            let mut res = Response::new();
            service.call(parsed.request(), &mut res).await;
            res
        };
        let answer = match client.driver.block_on(client.driver.spawn(call)) {
            Ok(res) => Answer::Served(res),
            // The server answers a panicking handler so, and goes on serving.
            Err(e) if e.is_panic() => Answer::Panicked(TestResponse::internal_server_error()),
            Err(e) => panic!("the request's task did not finish: {e}"),
        };
        (client, head, answer)
    }
}

/// What became of a request.
enum Answer {
    /// The service answered.
    Served(Response),
    /// The engine refused it before the service saw it.
    Refused(TestResponse),
    /// The handler panicked: `500`, as the server answers.
    Panicked(TestResponse),
}
