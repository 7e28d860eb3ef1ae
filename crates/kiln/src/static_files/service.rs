//! [`StaticDir`] and [`StaticFile`]: from a request to a response, through the cache.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use kiln_http::{Bytes, Request, Response, StatusCode};

use super::cache::{Cache, Entry, REVALIDATE_EVERY};
use super::conditional::{self, Conditions, Outcome, Validators};
use super::encoding::accepts;
use super::representation::{Coding, LoadRules, Representation};
use super::resolve::{PathRefusal, resolve};

/// Files up to this size are held in memory; larger ones are sent with `sendfile(2)`.
pub const DEFAULT_MAX_CACHED_FILE: u64 = 64 * 1024;
/// Bytes one worker's cache may hold (file bodies and header lines).
pub const DEFAULT_CACHE_BYTES: usize = 32 * 1024 * 1024;
/// Files one worker's cache may hold.
pub const DEFAULT_CACHE_ENTRIES: usize = 4096;

static NEXT_ID: AtomicUsize = AtomicUsize::new(0);

/// Serves the files below one folder.
///
/// A `StaticDir` is a cheap, shareable description; its cache is per worker thread
/// (each worker fills its own on first use), so a hit takes no lock. Only `GET` and
/// `HEAD` are answered.
///
/// ```no_run
/// use kiln::static_files::StaticDir;
/// use kiln::http::{Request, Response, Server, Service};
///
/// struct Site(StaticDir);
///
/// impl Service for Site {
///     async fn call<'a>(&'a self, req: Request<'a>, res: &'a mut Response) {
///         match req.path().strip_prefix("/static/") {
///             Some(rest) => self.0.serve(&req, rest, res).await,
///             None => res.set_status(kiln::http::StatusCode::NOT_FOUND),
///         }
///     }
/// }
///
/// let server = Server::new()
///     .serve(|_| Site(StaticDir::new("public").expect("public/ exists").cache_control("public, max-age=60")))
///     .expect("listen");
/// server.run_until_signal().expect("serve");
/// ```
#[derive(Debug, Clone)]
pub struct StaticDir {
    /// Names this folder's cache in each worker's [`CACHES`].
    id: usize,
    rules: LoadRules,
    cache_bytes: usize,
    cache_entries: usize,
    revalidate_every: Duration,
}

thread_local! {
    /// Each worker thread's caches, one per `StaticDir` it serves. A worker is one
    /// thread, so this is the worker's own: no lock, no atomic.
    static CACHES: RefCell<HashMap<usize, Cache>> = RefCell::new(HashMap::new());
}

/// Runs `f` on this thread's cache for `dir`.
fn with_cache<T>(dir: &StaticDir, f: impl FnOnce(&mut Cache) -> T) -> T {
    CACHES.with(|caches| {
        let mut caches = caches.borrow_mut();
        f(caches.entry(dir.id).or_insert_with(|| Cache::new(dir.cache_bytes, dir.cache_entries, dir.revalidate_every)))
    })
}

impl StaticDir {
    /// Serves the folder `root`, which must exist. Defaults: files up to
    /// [`DEFAULT_MAX_CACHED_FILE`] held in memory, no `Cache-Control`, symlinks that
    /// lead out of the root and dotfiles not served.
    pub fn new(root: impl AsRef<Path>) -> io::Result<StaticDir> {
        let root = std::fs::canonicalize(root.as_ref())?;
        if !root.is_dir() {
            return Err(io::Error::new(io::ErrorKind::NotADirectory, format!("{} is not a folder", root.display())));
        }
        Ok(StaticDir {
            rules: LoadRules {
                root,
                max_cached_file: DEFAULT_MAX_CACHED_FILE,
                follow_symlinks_out: false,
                allow_dotfiles: false,
                cache_control: None,
            },
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            cache_bytes: DEFAULT_CACHE_BYTES,
            cache_entries: DEFAULT_CACHE_ENTRIES,
            revalidate_every: REVALIDATE_EVERY,
        })
    }

    /// Files up to `bytes` are held in memory; larger ones are sent from disk.
    pub fn max_cached_file(mut self, bytes: u64) -> Self {
        self.rules.max_cached_file = bytes;
        self
    }

    /// Bounds this worker's cache to `bytes` and `entries`.
    pub fn cache_capacity(mut self, bytes: usize, entries: usize) -> Self {
        (self.cache_bytes, self.cache_entries) = (bytes, entries);
        self
    }

    /// How long each worker trusts what it cached of a file (its bytes when small, its
    /// metadata and `ETag`) before it looks at the file system again: one `stat` of the
    /// file (and of each precompressed sibling) per file per interval. A file replaced
    /// (renamed over), modified (its size, modification time or inode changed) or
    /// deleted is served fresh by the first request after the interval. The default is
    /// [`REVALIDATE_EVERY`] (one second); `Duration::ZERO` checks on every request.
    pub fn revalidate_every(mut self, interval: Duration) -> Self {
        self.revalidate_every = interval;
        self
    }

    /// Sends `Cache-Control: value` with every file (and its `304`s).
    ///
    /// # Panics
    /// If `value` holds CR, LF or NUL, which would split the response.
    pub fn cache_control(mut self, value: &str) -> Self {
        assert!(!value.bytes().any(|b| matches!(b, b'\r' | b'\n' | 0)), "Cache-Control value holds CR, LF or NUL");
        self.rules.cache_control = Some(value.into());
        self
    }

    /// Follows symlinks that lead out of the root (off by default: such a link is
    /// answered `404`).
    pub fn follow_symlinks_out(mut self, follow: bool) -> Self {
        self.rules.follow_symlinks_out = follow;
        self
    }

    /// Serves files and folders whose name begins with a dot (off by default: `.git`
    /// and `.env` are answered `404`).
    pub fn allow_dotfiles(mut self, allow: bool) -> Self {
        self.rules.allow_dotfiles = allow;
        self
    }

    /// The folder served, canonical.
    pub fn root(&self) -> &Path {
        &self.rules.root
    }

    /// Answers `req` with the file at `rel_path`, the still percent-encoded part of the
    /// request path below the mount point (a leading `/` is allowed). Hostile or
    /// malformed paths get `400`, missing files, folders and dotfiles `404`, a file
    /// that cannot be opened for want of file descriptors `503` with `Retry-After`,
    /// methods other than `GET` and `HEAD` `405`; each as plain text.
    pub async fn serve(&self, req: &Request<'_>, rel_path: &str, res: &mut Response) {
        if let Err(refusal) = self.serve_now(req, rel_path, res) {
            refuse(res, refusal);
        }
    }

    /// [`serve`](Self::serve), which never waits: metadata and small reads only. A
    /// refusal is left to the caller to render (an app renders it its own way).
    pub(crate) fn serve_now(&self, req: &Request<'_>, rel_path: &str, res: &mut Response) -> Result<(), PathRefusal> {
        let Some(file_req) = FileRequest::from_request(req) else {
            method_not_allowed(res);
            return Ok(());
        };
        let key = resolve(rel_path, self.rules.allow_dotfiles)?;
        self.respond(&key, &file_req, res)
    }

    /// Answers for the file at the clean relative path `key`.
    pub(crate) fn respond(&self, key: &str, req: &FileRequest<'_>, res: &mut Response) -> Result<(), PathRefusal> {
        let now = Instant::now();
        // A large file may change between its revalidation and its opening; then the
        // entry is reloaded once.
        for _ in 0..2 {
            let entry: Rc<Entry> = with_cache(self, |cache| cache.get(key, &self.rules, now))?;
            match answer(&entry, req, res) {
                Ok(()) => return Ok(()),
                Err(Changed) => with_cache(self, |cache| cache.remove(key)),
            }
        }
        Err(PathRefusal::NotFound)
    }
}

/// Serves one file, as a route of its own (`/favicon.ico`, `/robots.txt`).
#[derive(Debug, Clone)]
pub struct StaticFile {
    dir: StaticDir,
    key: String,
}

impl StaticFile {
    /// Serves the file at `path`, which must lie in a folder that exists. The file
    /// itself is looked up per request (with the same cache as [`StaticDir`]), so it
    /// may appear or change later.
    pub fn new(path: impl AsRef<Path>) -> io::Result<StaticFile> {
        let path = path.as_ref();
        let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("{} does not name a file", path.display()))
        })?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        // The name was chosen by the program, not by a client: dotfiles are allowed.
        Ok(StaticFile { dir: StaticDir::new(parent)?.allow_dotfiles(true), key: name.to_owned() })
    }

    /// How often the file is looked at again; see [`StaticDir::revalidate_every`].
    pub fn revalidate_every(mut self, interval: Duration) -> Self {
        self.dir = self.dir.revalidate_every(interval);
        self
    }

    /// Sends `Cache-Control: value` with the file; see [`StaticDir::cache_control`].
    pub fn cache_control(mut self, value: &str) -> Self {
        self.dir = self.dir.cache_control(value);
        self
    }

    /// Answers `req` with the file.
    pub async fn serve(&self, req: &Request<'_>, res: &mut Response) {
        if let Err(refusal) = self.serve_now(req, res) {
            refuse(res, refusal);
        }
    }

    /// [`serve`](Self::serve) without waiting, leaving a refusal to the caller.
    pub(crate) fn serve_now(&self, req: &Request<'_>, res: &mut Response) -> Result<(), PathRefusal> {
        match FileRequest::from_request(req) {
            Some(file_req) => self.dir.respond(&self.key, &file_req, res),
            None => {
                method_not_allowed(res);
                Ok(())
            }
        }
    }
}

/// The parts of a request that decide how a file is answered.
#[derive(Debug, Default)]
pub(crate) struct FileRequest<'a> {
    pub(crate) head: bool,
    pub(crate) conditions: Conditions<'a>,
    pub(crate) accept_encoding: Option<&'a [u8]>,
}

impl<'a> FileRequest<'a> {
    /// `None` for a method other than `GET` or `HEAD`.
    fn from_request(req: &Request<'a>) -> Option<FileRequest<'a>> {
        let head = match req.method() {
            "GET" => false,
            "HEAD" => true,
            _ => return None,
        };
        let mut out = FileRequest { head, ..FileRequest::default() };
        let c = &mut out.conditions;
        // One pass over the headers rather than one lookup per field.
        for (name, value) in req.headers() {
            let slot = match name.len() {
                5 if name.eq_ignore_ascii_case("range") => &mut c.range,
                8 if name.eq_ignore_ascii_case("if-match") => &mut c.if_match,
                8 if name.eq_ignore_ascii_case("if-range") => &mut c.if_range,
                13 if name.eq_ignore_ascii_case("if-none-match") => &mut c.if_none_match,
                15 if name.eq_ignore_ascii_case("accept-encoding") => &mut out.accept_encoding,
                17 if name.eq_ignore_ascii_case("if-modified-since") => &mut c.if_modified_since,
                19 if name.eq_ignore_ascii_case("if-unmodified-since") => &mut c.if_unmodified_since,
                _ => continue,
            };
            slot.get_or_insert(value);
        }
        Some(out)
    }
}

/// The file changed on disk after its headers were rendered.
struct Changed;

/// Where the bytes of one response come from.
enum Body {
    Memory(Bytes),
    Disk(File),
}

fn answer(entry: &Entry, req: &FileRequest<'_>, res: &mut Response) -> Result<(), Changed> {
    let rep = choose(entry, req.accept_encoding);
    let total = rep.stamp.len;
    let v = Validators { etag: &rep.etag, modified: rep.stamp.modified_secs(), len: total };
    let (status, start, len) = match conditional::evaluate(&req.conditions, &v, !req.head) {
        Outcome::Full => (StatusCode::OK, 0, total),
        Outcome::Partial { start, len } => (StatusCode::PARTIAL_CONTENT, start, len),
        Outcome::NotModified => {
            res.set_status(StatusCode::NOT_MODIFIED);
            res.append_raw_headers(&rep.headers[..rep.validator_len]);
            return Ok(());
        }
        Outcome::PreconditionFailed => {
            plain(res, StatusCode::PRECONDITION_FAILED, "precondition failed");
            return Ok(());
        }
        Outcome::Unsatisfiable => {
            // RFC 9110 §15.5.17: say how long the representation is.
            res.set_status(StatusCode::RANGE_NOT_SATISFIABLE);
            res.append_raw_headers(&rep.headers[..rep.validator_len]);
            res.append_header_unchecked(b"Content-Range", format!("bytes */{total}").as_bytes());
            return Ok(());
        }
    };
    // Open before writing any header: a changed file means starting over.
    let body = match &rep.body {
        Some(bytes) => Body::Memory(bytes.slice(start as usize..(start + len) as usize)),
        None => Body::Disk(open(rep)?),
    };
    res.set_status(status);
    res.append_raw_headers(&rep.headers);
    if status == StatusCode::PARTIAL_CONTENT {
        // §14.4: the range sent, and the complete length.
        let range = format!("bytes {start}-{}/{total}", start + len - 1);
        res.append_header_unchecked(b"Content-Range", range.as_bytes());
    }
    match body {
        Body::Memory(bytes) => res.set_body_bytes(bytes),
        Body::Disk(file) => res.set_body_file(file, start, len),
    }
    Ok(())
}

fn open(rep: &Representation) -> Result<File, Changed> {
    match rep.open() {
        Ok(Some(file)) => Ok(file),
        // Reloading tells a file gone (404) from one that could not be opened (503).
        Ok(None) | Err(_) => Err(Changed),
    }
}

/// The representation to send: a precompressed sibling when the client accepts it,
/// Brotli first since it is the smaller.
fn choose<'e>(entry: &'e Entry, accept_encoding: Option<&[u8]>) -> &'e Representation {
    if let Some(ae) = accept_encoding {
        if let Some(br) = entry.brotli.as_ref().filter(|_| accepts(ae, Coding::Brotli)) {
            return br;
        }
        if let Some(gz) = entry.gzip.as_ref().filter(|_| accepts(ae, Coding::Gzip)) {
            return gz;
        }
    }
    &entry.identity
}

fn refuse(res: &mut Response, refusal: PathRefusal) {
    plain(res, refusal.status(), refusal.reason());
    retry_after(res, refusal);
}

/// RFC 9110 §10.2.3: a `503` says when to come back, so that it is not taken as lasting.
pub(crate) fn retry_after(res: &mut Response, refusal: PathRefusal) {
    if refusal == PathRefusal::Unavailable && !res.has_header("retry-after") {
        res.append_header_unchecked(b"Retry-After", b"1");
    }
}

fn method_not_allowed(res: &mut Response) {
    // RFC 9110 §15.5.6: a 405 lists the methods that are allowed.
    res.append_header_unchecked(b"Allow", b"GET, HEAD");
    plain(res, StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD are allowed here");
}

fn plain(res: &mut Response, status: StatusCode, reason: &str) {
    res.set_status(status);
    res.set_content_type("text/plain; charset=utf-8");
    let body = res.body_mut();
    body.extend_from_slice(reason.as_bytes());
    body.push(b'\n');
}
