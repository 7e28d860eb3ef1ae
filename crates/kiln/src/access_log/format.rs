//! One log line, in Combined Log Format or as a JSON object, appended to a buffer
//! without allocating; and the clock that renders the time once a second.

use std::time::{SystemTime, UNIX_EPOCH};

/// How each request is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Apache's Combined Log Format, then the duration in microseconds:
    /// `127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" 200 13 "-" "curl/8" 42`.
    #[default]
    Combined,
    /// One JSON object per line, with the same fields named
    /// (`remote`, `time`, `method`, `target`, `version`, `status`, `bytes`,
    /// `referer`, `user_agent`, `duration_us`).
    Json,
}

/// The fields of one line.
pub(crate) struct Line<'a> {
    /// The client's address, as text.
    pub(crate) remote: &'a [u8],
    pub(crate) method: &'a str,
    pub(crate) target: &'a str,
    pub(crate) version: &'static str,
    pub(crate) status: u16,
    /// Body bytes sent; 0 when none (HEAD, 304) or unknown in advance.
    pub(crate) bytes: u64,
    pub(crate) referer: Option<&'a [u8]>,
    pub(crate) user_agent: Option<&'a [u8]>,
    pub(crate) micros: u64,
}

impl Line<'_> {
    /// Appends the line, ending in `\n`, to `out`.
    pub(crate) fn write(&self, format: LogFormat, clock: &Clock, out: &mut Vec<u8>) {
        match format {
            LogFormat::Combined => self.combined(clock, out),
            LogFormat::Json => self.json(clock, out),
        }
    }

    fn combined(&self, clock: &Clock, out: &mut Vec<u8>) {
        let mut num = itoa::Buffer::new();
        out.extend_from_slice(self.remote);
        out.extend_from_slice(b" - - [");
        out.extend_from_slice(&clock.clf);
        out.extend_from_slice(b"] \"");
        clf_escape(out, self.method.as_bytes());
        out.push(b' ');
        clf_escape(out, self.target.as_bytes());
        out.push(b' ');
        out.extend_from_slice(self.version.as_bytes());
        out.extend_from_slice(b"\" ");
        out.extend_from_slice(num.format(self.status).as_bytes());
        out.push(b' ');
        // Apache's `%b`: `-` for no body.
        match self.bytes {
            0 => out.push(b'-'),
            n => out.extend_from_slice(num.format(n).as_bytes()),
        }
        for field in [self.referer, self.user_agent] {
            out.extend_from_slice(b" \"");
            match field {
                Some(v) => clf_escape(out, v),
                None => out.push(b'-'),
            }
            out.push(b'"');
        }
        out.push(b' ');
        out.extend_from_slice(num.format(self.micros).as_bytes());
        out.push(b'\n');
    }

    fn json(&self, clock: &Clock, out: &mut Vec<u8>) {
        let mut num = itoa::Buffer::new();
        out.extend_from_slice(b"{\"remote\":\"");
        out.extend_from_slice(self.remote);
        out.extend_from_slice(b"\",\"time\":\"");
        out.extend_from_slice(&clock.iso);
        out.extend_from_slice(b"\",\"method\":");
        json_string(out, self.method.as_bytes());
        out.extend_from_slice(b",\"target\":");
        json_string(out, self.target.as_bytes());
        out.extend_from_slice(b",\"version\":\"");
        out.extend_from_slice(self.version.as_bytes());
        out.extend_from_slice(b"\",\"status\":");
        out.extend_from_slice(num.format(self.status).as_bytes());
        out.extend_from_slice(b",\"bytes\":");
        out.extend_from_slice(num.format(self.bytes).as_bytes());
        for (name, field) in [(&b",\"referer\":"[..], self.referer), (b",\"user_agent\":", self.user_agent)] {
            out.extend_from_slice(name);
            match field {
                Some(v) => json_string(out, v),
                None => out.extend_from_slice(b"null"),
            }
        }
        out.extend_from_slice(b",\"duration_us\":");
        out.extend_from_slice(num.format(self.micros).as_bytes());
        out.extend_from_slice(b"}\n");
    }
}

/// Apache's escaping: `"` and `\` backslashed, other bytes outside printable ASCII as
/// `\xHH`, so that a client cannot forge a line or a field.
fn clf_escape(out: &mut Vec<u8>, value: &[u8]) {
    if value.iter().all(|&b| CLF_PLAIN[usize::from(b)]) {
        out.extend_from_slice(value);
        return;
    }
    for &b in value {
        match b {
            b'"' | b'\\' => out.extend_from_slice(&[b'\\', b]),
            0x20..=0x7e => out.push(b),
            _ => out.extend_from_slice(&[b'\\', b'x', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]),
        }
    }
}

/// A JSON string (RFC 8259 §7). Bytes that are not UTF-8 (headers may carry obs-text)
/// are written as `\u00HH`, one per byte, so the line stays valid JSON.
fn json_string(out: &mut Vec<u8>, value: &[u8]) {
    let utf8 = std::str::from_utf8(value).is_ok();
    out.push(b'"');
    for &b in value {
        match b {
            b'"' | b'\\' => out.extend_from_slice(&[b'\\', b]),
            0x20..=0x7e => out.push(b),
            0x80..=0xff if utf8 => out.push(b),
            _ => out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]),
        }
    }
    out.push(b'"');
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The bytes a CLF field keeps as they are: printable ASCII but `"` and `\`. One
/// lookup per byte: every request's method, target and user agent pass through here.
const CLF_PLAIN: [bool; 256] = {
    let mut plain = [false; 256];
    let mut b = 0x20;
    while b < 0x7f {
        plain[b] = b != b'"' as usize && b != b'\\' as usize;
        b += 1;
    }
    plain
};

/// The current second, rendered for both formats; re-rendered only when the second
/// changes.
#[derive(Debug, Clone)]
pub(crate) struct Clock {
    second: u64,
    /// `10/Oct/2000:13:55:36 +0000`
    clf: [u8; 26],
    /// `2000-10-10T13:55:36Z`
    iso: [u8; 20],
}

impl Clock {
    pub(crate) fn new() -> Clock {
        let mut clock = Clock { second: u64::MAX, clf: [b' '; 26], iso: [b' '; 20] };
        clock.set(SystemTime::now());
        clock
    }

    /// Moves the clock to `now`.
    pub(crate) fn set(&mut self, now: SystemTime) {
        self.set_unix(now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()));
    }

    /// Moves the clock to the Unix time `second`.
    pub(crate) fn set_unix(&mut self, second: u64) {
        if second == self.second {
            return;
        }
        self.second = second;
        let (year, month, day) = civil_from_days((second / 86_400) as i64);
        let secs = second % 86_400;
        let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
        const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
        let mon = MONTHS[(month - 1) as usize];
        let clf = format!("{day:02}/{mon}/{year:04}:{h:02}:{m:02}:{s:02} +0000");
        let iso = format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z");
        self.clf.copy_from_slice(&clf.as_bytes()[..26]);
        self.iso.copy_from_slice(&iso.as_bytes()[..20]);
    }
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn clock_at(secs: u64) -> Clock {
        let mut c = Clock::new();
        c.set(UNIX_EPOCH + Duration::from_secs(secs));
        c
    }

    fn line<'a>() -> Line<'a> {
        Line {
            remote: b"127.0.0.1",
            method: "GET",
            target: "/a?b=c",
            version: "HTTP/1.1",
            status: 200,
            bytes: 13,
            referer: None,
            user_agent: Some(b"curl/8.0"),
            micros: 42,
        }
    }

    #[test]
    fn the_clock_renders_both_formats() {
        let c = clock_at(971_185_736);
        assert_eq!(&c.clf, b"10/Oct/2000:13:48:56 +0000");
        assert_eq!(&c.iso, b"2000-10-10T13:48:56Z");
        assert_eq!(&clock_at(951_782_400).iso, b"2000-02-29T00:00:00Z");
        assert_eq!(&clock_at(0).clf, b"01/Jan/1970:00:00:00 +0000");
    }

    #[test]
    fn combined_line() {
        let mut out = Vec::new();
        line().write(LogFormat::Combined, &clock_at(971_185_736), &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "127.0.0.1 - - [10/Oct/2000:13:48:56 +0000] \"GET /a?b=c HTTP/1.1\" 200 13 \"-\" \"curl/8.0\" 42\n"
        );
    }

    #[test]
    fn combined_escapes_what_could_forge_a_field() {
        let mut out = Vec::new();
        let l = Line { user_agent: Some(b"a\"b\\c\n\xff"), bytes: 0, ..line() };
        l.write(LogFormat::Combined, &clock_at(0), &mut out);
        let s = String::from_utf8(out).unwrap();
        assert!(s.ends_with(" 200 - \"-\" \"a\\\"b\\\\c\\x0a\\xff\" 42\n"), "{s}");
    }

    #[test]
    fn json_line() {
        let mut out = Vec::new();
        let l = Line { referer: Some("http://é/\"q\"".as_bytes()), user_agent: Some(b"\x01\xff"), ..line() };
        l.write(LogFormat::Json, &clock_at(971_185_736), &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"remote\":\"127.0.0.1\",\"time\":\"2000-10-10T13:48:56Z\",\"method\":\"GET\",\"target\":\"/a?b=c\",\
             \"version\":\"HTTP/1.1\",\"status\":200,\"bytes\":13,\"referer\":\"http://é/\\\"q\\\"\",\
             \"user_agent\":\"\\u0001\\u00ff\",\"duration_us\":42}\n"
        );
    }
}
