//! From a percent-encoded request path to a relative file path that cannot leave the
//! root: the path is decoded exactly once, segment by segment, and every segment that
//! could mean anything but "a name inside this folder" is refused.
//!
//! What is refused, and why each spelling matters:
//! - `..` and `.` in any spelling: raw, `%2e%2e`, `.%2e`; a double-encoded `%252e`
//!   decodes once to `%2e`, and a decoded `%` is refused so that no later layer can
//!   decode it again; the overlong UTF-8 `%c0%ae` is not valid UTF-8 and is refused.
//! - separators hidden in a segment: an encoded `/` (`%2f`) or a backslash (raw or
//!   `%5c`), which a Windows file system or a careless proxy would split on;
//! - NUL and every control byte, which would truncate or confuse a C path;
//! - `:` (drive letters such as `C:`, NTFS alternate streams), and empty segments,
//!   which make an absolute path (`//etc/passwd`) after joining;
//! - dotfiles (`.git`, `.env`) unless allowed: they are answered "not found" so that
//!   their existence is not revealed.
//!
//! Symlinks are checked later, against the file system, in `representation`: where
//! a link leads, and whether its target is itself a dotfile.

use kiln_http::StatusCode;

/// Why a path was refused; each maps to one status and one short reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathRefusal {
    /// The path is malformed or tries to leave the root: `400 Bad Request`.
    Malformed(&'static str),
    /// The path names nothing that may be served (a dotfile, a directory, a file that
    /// does not exist or lies outside the root): `404 Not Found`.
    NotFound,
    /// The file could not be opened for want of resources (file descriptors, memory):
    /// `503 Service Unavailable` with `Retry-After`, never a `404` that a cache would
    /// keep for a file that exists.
    Unavailable,
}

impl PathRefusal {
    /// The status this refusal is answered with.
    pub fn status(self) -> StatusCode {
        match self {
            PathRefusal::Malformed(_) => StatusCode::BAD_REQUEST,
            PathRefusal::NotFound => StatusCode::NOT_FOUND,
            PathRefusal::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// A short reason for the response body.
    pub fn reason(self) -> &'static str {
        match self {
            PathRefusal::Malformed(reason) => reason,
            PathRefusal::NotFound => "not found",
            PathRefusal::Unavailable => "server busy, retry later",
        }
    }

    /// Why opening a path failed: out of resources, or nothing to serve there.
    pub(crate) fn of_io(e: &std::io::Error) -> PathRefusal {
        // EMFILE, ENFILE and ENOMEM (errno 24, 23, 12 on Linux): passing, so not "not found".
        match e.raw_os_error() {
            Some(24 | 23 | 12) => PathRefusal::Unavailable,
            _ => PathRefusal::NotFound,
        }
    }
}

/// Decodes `encoded` (the part of the request path below the mount point, with or
/// without one leading `/`) into a clean relative path whose segments are joined by
/// `/`, or refuses it.
pub(crate) fn resolve(encoded: &str, allow_dotfiles: bool) -> Result<String, PathRefusal> {
    let encoded = encoded.strip_prefix('/').unwrap_or(encoded);
    if encoded.is_empty() || encoded.ends_with('/') {
        // A folder: there are no listings and no index files.
        return Err(PathRefusal::NotFound);
    }
    let mut clean = String::with_capacity(encoded.len());
    for raw in encoded.split('/') {
        let segment = decode_segment(raw)?;
        check_segment(&segment)?;
        if segment.starts_with('.') && !allow_dotfiles {
            return Err(PathRefusal::NotFound);
        }
        if !clean.is_empty() {
            clean.push('/');
        }
        clean.push_str(&segment);
    }
    Ok(clean)
}

/// Percent-decodes one segment, once, into UTF-8.
fn decode_segment(raw: &str) -> Result<String, PathRefusal> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hi = bytes.get(i + 1).and_then(|&h| hex(h));
            let lo = bytes.get(i + 2).and_then(|&l| hex(l));
            match (hi, lo) {
                (Some(hi), Some(lo)) => out.push(hi << 4 | lo),
                _ => return Err(PathRefusal::Malformed("bad percent-encoding in path")),
            }
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    // Overlong forms (`%c0%ae` for `.`) are invalid UTF-8, so they end here.
    String::from_utf8(out).map_err(|_| PathRefusal::Malformed("path is not valid UTF-8"))
}

fn check_segment(segment: &str) -> Result<(), PathRefusal> {
    if segment.is_empty() {
        return Err(PathRefusal::Malformed("empty path segment"));
    }
    if segment == "." || segment == ".." {
        return Err(PathRefusal::Malformed("dot segment in path"));
    }
    for c in segment.chars() {
        let refused = match c {
            '/' | '\\' => "path separator inside a segment",
            ':' => "colon in path",
            '%' => "percent sign left after decoding",
            c if c.is_control() => "control character in path",
            _ => continue,
        };
        return Err(PathRefusal::Malformed(refused));
    }
    Ok(())
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_paths_pass_decoded() {
        assert_eq!(resolve("hello.txt", false).unwrap(), "hello.txt");
        assert_eq!(resolve("/css/site.css", false).unwrap(), "css/site.css");
        assert_eq!(resolve("a%20b/caf%C3%A9.txt", false).unwrap(), "a b/café.txt");
        assert_eq!(resolve("v1.2/x..y", false).unwrap(), "v1.2/x..y");
    }

    #[test]
    fn dotfiles_are_not_found_unless_allowed() {
        assert_eq!(resolve(".env", false), Err(PathRefusal::NotFound));
        assert_eq!(resolve("a/.git/config", false), Err(PathRefusal::NotFound));
        assert_eq!(resolve("%2egit/config", false), Err(PathRefusal::NotFound));
        assert_eq!(resolve(".well-known/x", true).unwrap(), ".well-known/x");
        assert!(matches!(resolve("..", true), Err(PathRefusal::Malformed(_))));
    }

    #[test]
    fn folders_are_not_listed() {
        assert_eq!(resolve("", false), Err(PathRefusal::NotFound));
        assert_eq!(resolve("/", false), Err(PathRefusal::NotFound));
        assert_eq!(resolve("css/", false), Err(PathRefusal::NotFound));
    }

    #[test]
    fn every_spelling_of_traversal_is_refused() {
        let hostile = [
            "../etc/passwd",
            "a/../../etc/passwd",
            "%2e%2e/etc/passwd",
            "%2E%2E/etc/passwd",
            ".%2e/etc/passwd",
            "%2e./etc/passwd",
            "%252e%252e/etc/passwd",
            "%c0%ae%c0%ae/etc/passwd",
            "%e0%80%ae%e0%80%ae/etc/passwd",
            "..%2fetc%2fpasswd",
            "%2e%2e%2fetc%2fpasswd",
            "..%5cetc%5cpasswd",
            "..\\etc\\passwd",
            "a/./b",
            "//etc/passwd",
            "a//b",
            "hello.txt%00.png",
            "hello%00",
            "C:/windows/win.ini",
            "c%3a/windows",
            "file.txt::$DATA",
            "%",
            "%zz",
            "%2",
            "a%0d%0aSet-Cookie:x",
            "%ff%fe",
        ];
        for path in hostile {
            assert!(matches!(resolve(path, false), Err(PathRefusal::Malformed(_))), "{path:?} was not refused");
        }
    }
}
