//! [`TestEvent`]: one Server-Sent Event as a browser reads it (HTML Living Standard,
//! §9.2.6 "Interpreting an event stream").

use std::time::Duration;

/// One Server-Sent Event a [`TestStream`](super::TestStream) read: the fields its
/// lines gave, as an `EventSource` dispatches it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TestEvent {
    id: Option<String>,
    event: Option<String>,
    data: String,
    retry: Option<Duration>,
}

impl TestEvent {
    /// The `id` the event carried, if any (a browser sends the last one back as
    /// `Last-Event-ID`).
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// Its type: the `event` field, or `message` without one.
    pub fn event(&self) -> &str {
        self.event.as_deref().unwrap_or("message")
    }

    /// Its data: the `data` lines joined with `\n`.
    pub fn data(&self) -> &str {
        &self.data
    }

    /// The reconnection time its `retry` field set, if any.
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Takes the first whole event out of `buf`, with the comments and blocks of no
    /// data before it (dispatched by no browser); `None`, leaving `buf` as it was, if
    /// no event has ended yet.
    pub(super) fn take(buf: &mut Vec<u8>) -> Option<TestEvent> {
        let mut event = TestEvent::default();
        let mut has_data = false;
        let mut at = 0;
        while let Some((line, next)) = next_line(buf, at) {
            at = next;
            if line.is_empty() {
                // A blank line ends the event; one with no data is not dispatched.
                if has_data {
                    buf.drain(..at);
                    return Some(event);
                }
                event = TestEvent::default();
                continue;
            }
            let line = String::from_utf8_lossy(line);
            let (field, value) = line.split_once(':').unwrap_or((&line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                // A line that starts with a colon is a comment (keep-alives are).
                "" => {}
                "data" => {
                    if has_data {
                        event.data.push('\n');
                    }
                    event.data.push_str(value);
                    has_data = true;
                }
                "event" => event.event = Some(value.to_owned()),
                "id" if !value.contains('\0') => event.id = Some(value.to_owned()),
                "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                    event.retry = value.parse().ok().map(Duration::from_millis);
                }
                _ => {}
            }
        }
        None
    }
}

/// The line of `buf` from `at` and where the next begins: lines end with CRLF, LF or
/// CR; a CR at the very end waits for what follows (it may be a CRLF's first half).
fn next_line(buf: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let rest = &buf[at..];
    let end = rest.iter().position(|&b| b == b'\n' || b == b'\r')?;
    let next = match (rest[end], rest.get(end + 1)) {
        (b'\r', Some(b'\n')) => end + 2,
        (b'\r', None) => return None,
        _ => end + 1,
    };
    Some((&rest[..end], at + next))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> (Vec<TestEvent>, String) {
        let mut buf = text.as_bytes().to_vec();
        let events = std::iter::from_fn(|| TestEvent::take(&mut buf)).collect();
        (events, String::from_utf8(buf).unwrap())
    }

    #[test]
    fn events_are_read_as_a_browser_reads_them() {
        let (got, rest) = events(
            ":\n\nid: 7\nevent: note\ndata: one\ndata:two\nretry: 1500\n\n\
             id: 8\n\n: comment\r\ndata\r\n\r\ndata: cut",
        );
        let first = &got[0];
        assert_eq!((first.id(), first.event(), first.data()), (Some("7"), "note", "one\ntwo"));
        assert_eq!(first.retry(), Some(Duration::from_millis(1500)));
        // `id: 8` alone dispatches nothing; a bare `data` line is an empty datum.
        assert_eq!((got[1].id(), got[1].event(), got[1].data()), (None, "message", ""));
        assert_eq!(got.len(), 2);
        assert_eq!(rest, "data: cut", "an event not yet ended stays");
    }

    #[test]
    fn a_carriage_return_at_the_end_waits_for_what_follows() {
        let (got, rest) = events("data: x\r");
        assert!(got.is_empty());
        assert_eq!(rest, "data: x\r");
        let (got, rest) = events("data: x\r\r\n");
        assert_eq!((got[0].data(), rest.as_str()), ("x", ""));
    }
}
