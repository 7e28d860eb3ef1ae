//! [`TestStream`]: a response whose body is read as it comes, while the test goes on
//! sending other requests.

use std::fmt;
use std::future::poll_fn;
use std::rc::Rc;
use std::time::Duration;

use kiln_http::{BodyStream, StatusCode};

use super::{Driver, TestEvent, TestResponse, TimedOut};

/// A response left open by [`TestRequest::open`](super::TestRequest::open): its status
/// and headers at once, its body read as it comes, each read waiting at most the time
/// the test gives it. A body that is not a stream comes as one chunk, then the end.
pub struct TestStream {
    /// Dropped before the driver: a stream may hold the runtime's timers.
    body: Option<BodyStream>,
    /// Read from `body` and not yet handed to the test.
    pending: Vec<u8>,
    head: TestResponse,
    driver: Rc<Driver>,
}

impl TestStream {
    pub(super) fn new(driver: Rc<Driver>, head: TestResponse, body: Option<BodyStream>) -> Self {
        let pending = head.bytes().to_vec();
        TestStream { body, pending, head: head.with_body(Vec::new()), driver }
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.head.status()
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.header(name)
    }

    /// The status and headers, as a response with no body.
    pub fn head(&self) -> &TestResponse {
        &self.head
    }

    /// The next bytes of the body (all of them that have come), waiting at most
    /// `timeout` for some; `Ok(None)` once the body has ended.
    pub fn next_chunk(&mut self, timeout: Duration) -> Result<Option<Vec<u8>>, TimedOut> {
        if self.pending.is_empty() && !self.read_more(timeout)? {
            return Ok(None);
        }
        Ok(Some(std::mem::take(&mut self.pending)))
    }

    /// The next Server-Sent Event, parsed as a browser's `EventSource` does (comments
    /// and keep-alives skipped), waiting at most `timeout` for it; `Ok(None)` once the
    /// stream has ended (a last event cut short is dropped, as a browser drops it).
    pub fn next_event(&mut self, timeout: Duration) -> Result<Option<TestEvent>, TimedOut> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(event) = TestEvent::take(&mut self.pending) {
                return Ok(Some(event));
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if !self.read_more(left).map_err(|_| TimedOut(timeout))? {
                return Ok(None);
            }
        }
    }

    /// Waits at most `limit` for more of the body, adding it to `pending`; `false`
    /// once the body has ended (or failed).
    fn read_more(&mut self, limit: Duration) -> Result<bool, TimedOut> {
        let Some(body) = &mut self.body else { return Ok(false) };
        match self.driver.within(limit, poll_fn(|cx| body.as_mut().poll_next(cx)))? {
            Some(Ok(chunk)) => {
                self.pending.extend_from_slice(&chunk);
                Ok(true)
            }
            Some(Err(_)) | None => {
                self.body = None;
                Ok(false)
            }
        }
    }

    /// The head with `body`, as a whole response.
    pub(super) fn into_response(self, body: Vec<u8>) -> TestResponse {
        self.head.clone().with_body(body)
    }
}

impl fmt::Debug for TestStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestStream")
            .field("status", &self.head.status())
            .field("pending", &self.pending.len())
            .field("ended", &self.body.is_none())
            .finish()
    }
}
