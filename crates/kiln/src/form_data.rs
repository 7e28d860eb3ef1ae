//! A streaming `multipart/form-data` parser (RFC 7578 over RFC 2046 §5.1): fed the
//! body in pieces of any size, it yields each part's headers and then its data in
//! pieces, holding no more than a piece plus a delimiter's length. The
//! [`Multipart`](crate::multipart::Multipart) extractor reads forms with it, and
//! [`CsrfGuard`](crate::CsrfGuard) a buffered form's token.

use bytes::{Buf, Bytes, BytesMut};

/// Why a form breaks the framing: answered `400`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Malformed(pub(crate) &'static str);

/// The most bytes of one part's headers.
const MAX_PART_HEAD: usize = 8 * 1024;

/// One part's headers, as far as a form needs them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PartHead {
    pub(crate) name: String,
    pub(crate) file_name: Option<String>,
    pub(crate) content_type: Option<String>,
}

/// What the parser found next.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// It needs more of the body.
    NeedMore,
    /// A part begins.
    Part(PartHead),
    /// Data of the current part.
    Data(Bytes),
    /// The current part ended (the next event is a part or the end).
    PartEnd,
    /// The closing delimiter: the form is complete.
    End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the first delimiter (a preamble is allowed and ignored).
    Preamble,
    /// After a delimiter: `\r\n` (a part follows) or `--` (the end).
    AfterDelimiter,
    Head,
    Data,
    Done,
}

/// The parser's state; the caller owns the buffer and appends the body to it.
#[derive(Debug)]
pub(crate) struct Parser {
    /// `\r\n--boundary`: what ends a part's data.
    delimiter: Vec<u8>,
    state: State,
    /// Nothing consumed yet: the first delimiter may open the body without a CRLF.
    fresh: bool,
}

impl Parser {
    pub(crate) fn new(boundary: &str) -> Self {
        let mut delimiter = b"\r\n--".to_vec();
        delimiter.extend_from_slice(boundary.as_bytes());
        Parser { delimiter, state: State::Preamble, fresh: true }
    }

    /// The next event from what `buf` holds, consuming what it used; `eof` says the
    /// body has no more, so what is missing now never comes (`400`).
    pub(crate) fn next(&mut self, buf: &mut BytesMut, eof: bool) -> Result<Event, Malformed> {
        let event = self.step(buf)?;
        if event == Event::NeedMore && eof {
            return Err(Malformed("the body ended inside the form"));
        }
        Ok(event)
    }

    fn step(&mut self, buf: &mut BytesMut) -> Result<Event, Malformed> {
        match self.state {
            State::Preamble => {
                // The first delimiter may open the body, without the CRLF before it.
                let dash = &self.delimiter[2..];
                if self.fresh && buf.len() < dash.len() && dash.starts_with(buf) {
                    return Ok(Event::NeedMore);
                }
                if self.fresh && buf.starts_with(dash) {
                    buf.advance(dash.len());
                    self.state = State::AfterDelimiter;
                    return self.step(buf);
                }
                match find(buf, &self.delimiter) {
                    Some(at) => {
                        buf.advance(at + self.delimiter.len());
                        self.state = State::AfterDelimiter;
                        self.step(buf)
                    }
                    None => {
                        // Keep only what could begin a delimiter.
                        let keep = (self.delimiter.len() - 1).min(buf.len());
                        self.fresh = false;
                        buf.advance(buf.len() - keep);
                        Ok(Event::NeedMore)
                    }
                }
            }
            State::AfterDelimiter => {
                if buf.len() < 2 {
                    return Ok(Event::NeedMore);
                }
                if buf.starts_with(b"--") {
                    // The epilogue after the close delimiter is ignored.
                    buf.clear();
                    self.state = State::Done;
                    return Ok(Event::End);
                }
                // RFC 2046 §5.1.1: transport padding (spaces) may precede the CRLF.
                let line_end = buf.iter().position(|&b| b != b' ' && b != b'\t');
                match line_end {
                    None => Ok(Event::NeedMore),
                    Some(i) if buf.len() < i + 2 => Ok(Event::NeedMore),
                    Some(i) if &buf[i..i + 2] == b"\r\n" => {
                        buf.advance(i + 2);
                        self.state = State::Head;
                        self.step(buf)
                    }
                    Some(_) => Err(Malformed("a delimiter is not followed by a line end")),
                }
            }
            State::Head => match find(buf, b"\r\n\r\n") {
                Some(at) => {
                    let head = parse_head(&buf[..at])?;
                    buf.advance(at + 4);
                    self.state = State::Data;
                    Ok(Event::Part(head))
                }
                // A part with no headers at all: its empty line comes first.
                None if buf.starts_with(b"\r\n") => Err(Malformed("a part has no headers")),
                None if buf.len() > MAX_PART_HEAD => Err(Malformed("a part's headers are too long")),
                None => Ok(Event::NeedMore),
            },
            State::Data => match find(buf, &self.delimiter) {
                Some(0) => {
                    buf.advance(self.delimiter.len());
                    self.state = State::AfterDelimiter;
                    Ok(Event::PartEnd)
                }
                Some(at) => Ok(Event::Data(buf.split_to(at).freeze())),
                None => {
                    // Everything but a tail that could begin the delimiter is data.
                    let safe = buf.len().saturating_sub(self.delimiter.len() - 1);
                    match safe {
                        0 => Ok(Event::NeedMore),
                        n => Ok(Event::Data(buf.split_to(n).freeze())),
                    }
                }
            },
            State::Done => Ok(Event::End),
        }
    }
}

/// The `boundary` parameter of a `multipart/form-data` content type (RFC 2046 §5.1.1:
/// 1 to 70 characters, quoted or not).
pub(crate) fn boundary(content_type: &str) -> Option<&str> {
    let param = content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case("boundary").then_some(v.trim())
    })?;
    let b = param.strip_prefix('"').and_then(|p| p.strip_suffix('"')).unwrap_or(param);
    let valid = (1..=70).contains(&b.len())
        && b.bytes().all(|c| c.is_ascii_alphanumeric() || b"'()+_,-./:=? ".contains(&c))
        && !b.ends_with(' ');
    valid.then_some(b)
}

/// Where a field that must open the form (the CSRF token) is in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Opening {
    /// It is the first field, with this text.
    First(String),
    /// It comes later: after the field named here, the form's first.
    After(String),
    /// The form has no such field (or it is not text of at most 1 KiB, or the form
    /// is malformed).
    Absent,
}

/// Where the text field `name` is in a multipart body held whole, for checks made
/// before the handler runs, such as the CSRF token's.
pub(crate) fn opening_field(content_type: &str, body: &[u8], name: &str) -> Opening {
    let Some(boundary) = boundary(content_type) else { return Opening::Absent };
    let mut parser = Parser::new(boundary);
    let mut buf = BytesMut::from(body);
    let mut first: Option<String> = None;
    let mut value: Option<Vec<u8>> = None;
    loop {
        let Ok(event) = parser.next(&mut buf, true) else { return Opening::Absent };
        match event {
            Event::Part(head) if head.name == name => match first {
                Some(first) => return Opening::After(first),
                None => value = Some(Vec::new()),
            },
            Event::Part(head) if first.is_none() => first = Some(head.name),
            Event::Data(data) => {
                if let Some(value) = &mut value {
                    if value.len() + data.len() > 1024 {
                        return Opening::Absent;
                    }
                    value.extend_from_slice(&data);
                }
            }
            Event::PartEnd => {
                if let Some(value) = value.take() {
                    return String::from_utf8(value).map_or(Opening::Absent, Opening::First);
                }
            }
            Event::End | Event::NeedMore => return Opening::Absent,
            Event::Part(_) => {}
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

/// Parses a part's header lines: `Content-Disposition: form-data; name="…"` is
/// required (RFC 7578 §4.2), `Content-Type` is kept.
fn parse_head(raw: &[u8]) -> Result<PartHead, Malformed> {
    let text = std::str::from_utf8(raw).map_err(|_| Malformed("a part's headers are not UTF-8"))?;
    let mut head = PartHead::default();
    let mut named = false;
    for line in text.split("\r\n") {
        let Some((name, value)) = line.split_once(':') else {
            return Err(Malformed("a part's header line has no colon"));
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-disposition") {
            let mut params = split_params(value);
            if !params.next().is_some_and(|kind| kind.trim().eq_ignore_ascii_case("form-data")) {
                return Err(Malformed("a part's Content-Disposition is not form-data"));
            }
            for param in params {
                let Some((key, val)) = param.split_once('=') else { continue };
                let val = unquote(val.trim());
                match key.trim().to_ascii_lowercase().as_str() {
                    "name" => {
                        head.name = val;
                        named = true;
                    }
                    "filename" => head.file_name = Some(val),
                    _ => {}
                }
            }
        } else if name.eq_ignore_ascii_case("content-type") {
            head.content_type = Some(value.to_owned());
        }
    }
    if !named {
        return Err(Malformed("a part has no name in its Content-Disposition"));
    }
    Ok(head)
}

/// Splits `form-data; name="a;b"; filename="c"` at the semicolons outside quotes.
fn split_params(value: &str) -> impl Iterator<Item = &str> {
    let mut quoted = false;
    let mut escaped = false;
    value.split(move |c: char| {
        if escaped {
            escaped = false;
            return false;
        }
        match c {
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ';' if !quoted => return true,
            _ => {}
        }
        false
    })
}

/// A quoted-string's content (`"a\"b"` is `a"b`), or a token as it is. Browsers send
/// file names as UTF-8 with `"` as `%22` (the WHATWG form encoding), kept as sent.
fn unquote(value: &str) -> String {
    let Some(inner) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) else {
        return value.to_owned();
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORM: &[u8] =
        b"preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHello\r\n--XyZ\r\n\
Content-Disposition: form-data; name=\"file\"; filename=\"a \\\"b\\\".txt\"\r\nContent-Type: text/plain\r\n\r\n\
line one\r\n--Xy not yet\r\nline two\r\n--XyZ--\r\nepilogue";

    /// A part as parsed: name, file name, data.
    type Part = (String, Option<String>, Vec<u8>);

    /// Parses `body` fed in pieces of `step` bytes.
    fn parse_in_pieces(body: &[u8], step: usize) -> Result<Vec<Part>, Malformed> {
        let mut parser = Parser::new("XyZ");
        let mut buf = BytesMut::new();
        let mut fed = 0;
        let mut parts = Vec::new();
        loop {
            match parser.next(&mut buf, fed == body.len())? {
                Event::NeedMore => {
                    let end = (fed + step).min(body.len());
                    buf.extend_from_slice(&body[fed..end]);
                    fed = end;
                }
                Event::Part(head) => parts.push((head.name, head.file_name, Vec::new())),
                Event::Data(data) => parts.last_mut().unwrap().2.extend_from_slice(&data),
                Event::PartEnd => {}
                Event::End => return Ok(parts),
            }
        }
    }

    #[test]
    fn a_boundary_is_read_quoted_or_not_and_refused_when_invalid() {
        assert_eq!(boundary("multipart/form-data; boundary=abc"), Some("abc"));
        assert_eq!(boundary("multipart/form-data; charset=x; Boundary=\"a b:c\""), Some("a b:c"));
        assert_eq!(boundary("multipart/form-data"), None);
        assert_eq!(boundary("multipart/form-data; boundary="), None);
        assert_eq!(boundary(&format!("multipart/form-data; boundary={}", "x".repeat(71))), None);
        assert_eq!(boundary("multipart/form-data; boundary=a\u{7f}b"), None);
    }

    #[test]
    fn every_split_of_a_form_gives_the_same_parts() {
        for step in 1..FORM.len() {
            let parts = parse_in_pieces(FORM, step).unwrap();
            assert_eq!(parts.len(), 2, "step {step}");
            assert_eq!((parts[0].0.as_str(), parts[0].2.as_slice()), ("title", &b"Hello"[..]));
            assert_eq!(parts[1].1.as_deref(), Some("a \"b\".txt"));
            assert_eq!(parts[1].2, b"line one\r\n--Xy not yet\r\nline two");
        }
    }

    #[test]
    fn the_opening_field_is_first_later_or_absent() {
        let ct = "multipart/form-data; boundary=XyZ";
        assert_eq!(opening_field(ct, FORM, "title"), Opening::First("Hello".into()));
        assert_eq!(opening_field(ct, FORM, "file"), Opening::After("title".into()));
        assert_eq!(opening_field(ct, FORM, "csrf_token"), Opening::Absent);
        assert_eq!(opening_field("multipart/form-data", FORM, "title"), Opening::Absent);
    }

    #[test]
    fn a_body_that_ends_inside_the_form_is_malformed() {
        let cut = &FORM[..FORM.len() - 20];
        assert!(matches!(parse_in_pieces(cut, 7), Err(Malformed(_))));
        assert!(matches!(parse_in_pieces(b"no delimiter at all", 4), Err(Malformed(_))));
    }

    #[test]
    fn a_part_without_a_name_or_with_a_bad_header_is_malformed() {
        let nameless = b"--XyZ\r\nContent-Disposition: form-data\r\n\r\nx\r\n--XyZ--";
        assert!(matches!(parse_in_pieces(nameless, 5), Err(Malformed(_))));
        let colonless = b"--XyZ\r\nnonsense\r\n\r\nx\r\n--XyZ--";
        assert!(matches!(parse_in_pieces(colonless, 5), Err(Malformed(_))));
        let endless_head = [b"--XyZ\r\nX: ".as_slice(), &[b'a'; 10_000]].concat();
        assert!(matches!(parse_in_pieces(&endless_head, 512), Err(Malformed(_))));
    }
}
