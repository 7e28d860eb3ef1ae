//! One file as it is served: where it lies, what identifies its version, its bytes
//! when small, and its header lines rendered once.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use bytes::Bytes;

use super::resolve::PathRefusal;

/// What tells one version of a file from the next: if any of these changed, the
/// cached copy is stale. The inode catches a file replaced by another (or by a symlink)
/// of the same size and age.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    pub(crate) len: u64,
    mtime_ns: i128,
}

impl Stamp {
    pub(crate) fn of(meta: &Metadata) -> Stamp {
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        }
    }

    /// The stamp of the file at `path` now, following symlinks; `None` if there is
    /// no regular file there.
    pub(crate) fn current(path: &Path) -> Option<Stamp> {
        std::fs::metadata(path).ok().filter(Metadata::is_file).map(|m| Stamp::of(&m))
    }

    /// `Last-Modified` in whole seconds (RFC 9110 §8.8.2 has one-second resolution).
    pub(crate) fn modified_secs(&self) -> u64 {
        u64::try_from(self.mtime_ns.div_euclid(1_000_000_000)).unwrap_or(0)
    }
}

/// A content coding of a precompressed sibling (`file.br`, `file.gz`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coding {
    Identity,
    Brotli,
    Gzip,
}

impl Coding {
    /// The suffix of the sibling file holding this coding.
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Coding::Identity => "",
            Coding::Brotli => ".br",
            Coding::Gzip => ".gz",
        }
    }

    fn token(self) -> Option<&'static str> {
        match self {
            Coding::Identity => None,
            Coding::Brotli => Some("br"),
            Coding::Gzip => Some("gzip"),
        }
    }
}

/// How representations are loaded; a copy of the `StaticDir` settings.
#[derive(Debug, Clone)]
pub(crate) struct LoadRules {
    /// The root, canonical (every symlink resolved).
    pub(crate) root: PathBuf,
    /// Files up to this size are held in memory.
    pub(crate) max_cached_file: u64,
    /// Whether symlinks may lead out of the root.
    pub(crate) follow_symlinks_out: bool,
    /// Whether files and folders whose name begins with a dot may be served.
    pub(crate) allow_dotfiles: bool,
    /// The rendered `Cache-Control` header line, if any.
    pub(crate) cache_control: Option<Box<str>>,
}

/// One file ready to serve.
#[derive(Debug)]
pub(crate) struct Representation {
    /// The canonical path, reopened for every response when the file is large.
    pub(crate) path: PathBuf,
    pub(crate) stamp: Stamp,
    /// The whole file, when it is small enough to be held in memory.
    pub(crate) body: Option<Bytes>,
    /// `ETag`, quotes included.
    pub(crate) etag: Box<str>,
    /// Every header line; the first `validator_len` bytes are those a `304` repeats
    /// (RFC 9110 §15.4.5).
    pub(crate) headers: Box<[u8]>,
    pub(crate) validator_len: usize,
}

impl Representation {
    /// Opens the file at `path` (following symlinks only as far as the rules allow)
    /// and reads it if it is small. The headers are rendered later by `render`, once
    /// it is known whether siblings exist.
    pub(crate) fn load(path: &Path, rules: &LoadRules) -> Result<Representation, PathRefusal> {
        let canonical = std::fs::canonicalize(path).map_err(|e| PathRefusal::of_io(&e))?;
        if !rules.follow_symlinks_out && !canonical.starts_with(&rules.root) {
            return Err(PathRefusal::NotFound);
        }
        // The requested name was checked by `resolve`; a symlink's target is checked
        // here, or `public/x -> .env` would serve the dotfile (issue 13).
        if !rules.allow_dotfiles && leads_to_a_dotfile(&canonical, &rules.root) {
            return Err(PathRefusal::NotFound);
        }
        let mut file = File::open(&canonical).map_err(|e| PathRefusal::of_io(&e))?;
        let meta = file.metadata().map_err(|_| PathRefusal::NotFound)?;
        if !meta.is_file() {
            return Err(PathRefusal::NotFound);
        }
        let stamp = Stamp::of(&meta);
        let body = if stamp.len <= rules.max_cached_file {
            Some(read_exact_len(&mut file, stamp.len).map_err(|_| PathRefusal::NotFound)?)
        } else {
            None
        };
        Ok(Representation {
            path: canonical,
            stamp,
            body,
            etag: Box::from(""),
            headers: Box::from(&[][..]),
            validator_len: 0,
        })
    }

    /// Renders the `ETag` and the header lines. `vary`: whether siblings in other
    /// codings exist, so that caches must key on `Accept-Encoding` (§12.5.5).
    pub(crate) fn render(&mut self, content_type: &str, coding: Coding, vary: bool, rules: &LoadRules) {
        let s = &self.stamp;
        let coding_tag = coding.token().map_or(String::new(), |t| format!("-{t}"));
        // Strong: a change of content changes the modification time or the length.
        self.etag = format!(
            "\"{:x}.{:x}-{:x}{coding_tag}\"",
            s.mtime_ns.div_euclid(1_000_000_000),
            s.mtime_ns.rem_euclid(1_000_000_000),
            s.len
        )
        .into();
        let modified = httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(s.modified_secs()));
        let mut h = format!("ETag: {}\r\nLast-Modified: {modified}\r\n", self.etag);
        if let Some(cc) = &rules.cache_control {
            h.push_str(&format!("Cache-Control: {cc}\r\n"));
        }
        if vary {
            h.push_str("Vary: Accept-Encoding\r\n");
        }
        self.validator_len = h.len();
        h.push_str(&format!("Content-Type: {content_type}\r\nAccept-Ranges: bytes\r\n"));
        if let Some(token) = coding.token() {
            h.push_str(&format!("Content-Encoding: {token}\r\n"));
        }
        self.headers = h.into_bytes().into_boxed_slice();
    }

    /// The bytes this representation holds in memory.
    pub(crate) fn memory(&self) -> usize {
        self.body.as_ref().map_or(0, Bytes::len) + self.headers.len() + self.path.as_os_str().len()
    }

    /// Opens the file for one response and checks that it is still the version the
    /// headers describe. `Ok(None)`: it changed; reload.
    pub(crate) fn open(&self) -> io::Result<Option<File>> {
        let file = File::open(&self.path)?;
        let meta = file.metadata()?;
        Ok((Stamp::of(&meta) == self.stamp).then_some(file))
    }
}

/// Whether a name on the resolved path, below the root (or anywhere, for a target
/// outside it), begins with a dot.
fn leads_to_a_dotfile(canonical: &Path, root: &Path) -> bool {
    let below = canonical.strip_prefix(root).unwrap_or(canonical);
    below.components().any(|c| matches!(c, Component::Normal(name) if name.as_encoded_bytes().starts_with(b".")))
}

/// Reads exactly `len` bytes; a file that changed size while being read is an error,
/// so that the stamp and the bytes always agree.
fn read_exact_len(file: &mut File, len: u64) -> io::Result<Bytes> {
    let mut buf = Vec::with_capacity(len as usize);
    file.take(len + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 != len {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "file changed while being read"));
    }
    Ok(Bytes::from(buf))
}
