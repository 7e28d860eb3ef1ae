//! [`Compression`]: responses compressed with the best coding the client accepts
//! (brotli, zstd, gzip, each compiled in by kiln's cargo feature of that name), as an
//! `App` layer.

#[cfg(feature = "brotli")]
mod brotli;
mod encoder;
#[cfg(feature = "gzip")]
mod gzip;
#[cfg(feature = "gzip")]
mod gzip_bulk;
mod negotiate;
#[cfg(any(feature = "gzip", feature = "brotli"))]
mod room;
#[cfg(feature = "zstd")]
mod zstd_context;

use kiln_http::{Request, Response, StatusCode};

use super::headers::{has_token, response_header};
use encoder::{Compressed, Encoder, compress};
pub use negotiate::Encoding;
use negotiate::negotiate;

/// Bodies smaller than this are sent as they are by default: under a packet's worth
/// the coding's framing and the CPU outweigh the bytes saved.
pub const DEFAULT_COMPRESSION_MIN_SIZE: usize = 512;

/// Compression levels, per coding. The defaults are chosen for speed at a good ratio:
/// a page is compressed on every request, so the server's CPU per response counts as
/// much as the bytes. The level of a coding whose feature is off is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Levels {
    /// gzip, 0–9 (default 4), zlib's levels: a whole body is compressed by libdeflate
    /// at its level of the same number (tuned to match zlib's ratio, faster), a
    /// streamed one by zlib-rs. Past 9 counts as 9.
    pub gzip: u32,
    /// Brotli quality, 0–11 (default 4: smaller than gzip's 9 at about gzip's 5's cost).
    /// Compressed by the C brotli library (as nginx's brotli module is). Past 11 counts as 11.
    pub brotli: u32,
    /// zstd, 1–22 (default 3, zstd's own default).
    pub zstd: i32,
}

impl Default for Levels {
    fn default() -> Self {
        Levels { gzip: 4, brotli: 4, zstd: 3 }
    }
}

/// Compresses responses with the coding the request's `Accept-Encoding` prefers
/// (RFC 9110 §12.5.3: q-values, `identity`, `*`; among equals brotli, then zstd, then
/// gzip), and says `Vary: Accept-Encoding`; give it with
/// [`App::compression`](crate::App::compression).
///
/// Each coding is compiled in by a cargo feature of `kiln`, none of them on by default
/// (each builds a codec, C for two of them: the README's "Cargo features" table has
/// their build times):
///
/// | feature  | coding              | library                                          |
/// |----------|---------------------|--------------------------------------------------|
/// | `gzip`   | `Encoding::Gzip`    | libdeflate for whole bodies, zlib-rs for streams |
/// | `brotli` | `Encoding::Brotli`  | Google's C brotli                                |
/// | `zstd`   | `Encoding::Zstd`    | the C zstd library                               |
///
/// [`Compression::new`] offers the codings compiled in; with none it compresses
/// nothing, and calling it warns at compile time. A coding's [`Encoding`] variant
/// exists only with its feature, so naming one that is off does not compile.
///
/// Left as they are: bodies under [`min_size`](Self::min_size), types that are
/// compressed already (images but SVG, audio, video, WOFF fonts, archives) or unknown,
/// `text/event-stream`, ranged responses (`206`, `Content-Range`), responses already
/// encoded (a static file's precompressed `.br`/`.gz` sibling) or marked
/// `Cache-Control: no-transform`, and files sent with `sendfile` (static files over
/// their cache's size limit). A streamed body is compressed as it streams, each chunk
/// flushed. `HEAD` gets the headers `GET` gets, and a `304` the `Vary` its `200` would
/// carry.
///
/// A static file without a precompressed sibling is compressed like any other body,
/// per request, as nginx's `gzip on` does. A compressed response's strong `ETag` is
/// made weak (`W/"…"`): the tag named the exact bytes of the uncompressed
/// representation, and the compressed bytes are another (RFC 9110 §8.8.1), equivalent
/// for the weak comparison `If-None-Match` uses (§13.1.2), never for the strong one of
/// `If-Match` and `If-Range`; so a `304` to a client revalidating such a copy carries
/// the weak tag too. Its `Accept-Ranges` goes: a range is of the uncompressed bytes
/// (a `206` is never compressed), not of the bytes this response sent.
///
/// ```
/// use kiln::{App, Compression, Route};
///
/// #[derive(Route)]
/// #[route("/page")]
/// struct Page;
///
/// async fn page(_: Page) -> kiln::Html<String> {
///     kiln::Html("<p>a repeated line</p>".repeat(100))
/// }
///
/// let app = App::new(|_| ()).route(page).compression(Compression::new());
/// let mut client = kiln::test::TestClient::new(app);
/// let res = client.request("GET", &Page).header("Accept-Encoding", "gzip").send();
/// assert_eq!(res.header("content-encoding"), Some("gzip"));
/// assert_eq!(res.header("vary"), Some("Accept-Encoding"));
/// assert!(res.bytes().len() < 200);
/// ```
#[derive(Debug, Clone)]
pub struct Compression {
    encodings: Vec<Encoding>,
    levels: Levels,
    min_size: usize,
    except: fn(&str) -> bool,
}

impl Default for Compression {
    fn default() -> Self {
        Compression::compiled_in()
    }
}

impl Compression {
    /// The codings compiled in (brotli, zstd, gzip: those of kiln's features `brotli`,
    /// `zstd` and `gzip` that are on, in that order) at the default [`Levels`], bodies
    /// of [`DEFAULT_COMPRESSION_MIN_SIZE`] bytes and more, on every path.
    #[cfg_attr(
        not(any(feature = "gzip", feature = "brotli", feature = "zstd")),
        deprecated(note = "no coding is compiled in, so this compresses nothing: turn on kiln's \
                           cargo feature `gzip`, `brotli` or `zstd`")
    )]
    pub fn new() -> Self {
        Compression::compiled_in()
    }

    fn compiled_in() -> Self {
        Compression {
            encodings: Encoding::COMPILED_IN.to_vec(),
            levels: Levels::default(),
            min_size: DEFAULT_COMPRESSION_MIN_SIZE,
            except: |_| false,
        }
    }

    /// The codings offered, most preferred first (a tie in q-values goes to the
    /// earlier). An empty list compresses nothing.
    pub fn encodings(mut self, encodings: &[Encoding]) -> Self {
        self.encodings = encodings.to_vec();
        self
    }

    /// The levels of each coding.
    pub fn levels(mut self, levels: Levels) -> Self {
        self.levels = levels;
        self
    }

    /// The smallest body compressed.
    pub fn min_size(mut self, bytes: usize) -> Self {
        self.min_size = bytes;
        self
    }

    /// Paths left uncompressed whatever their content, such as the endpoints a
    /// benchmark compares with uncompressed peers.
    pub fn except(mut self, except: fn(&str) -> bool) -> Self {
        self.except = except;
        self
    }

    pub(crate) fn apply(&self, req: Request<'_>, path: &str, res: &mut Response) {
        let status = res.status();
        // A body too small to compress needs nothing, whatever the path: checked before
        // the app's `except`, which a benchmark endpoint's every answer would run.
        let small = res.body_bytes().is_some_and(|b| b.len() < self.min_size);
        if small && status != StatusCode::NOT_MODIFIED || self.encodings.is_empty() || (self.except)(path) {
            return;
        }
        // RFC 9110 §15.4.5: a 304 carries the `Vary` and the `ETag` its 200 would have.
        if status == StatusCode::NOT_MODIFIED {
            add_vary(res);
            if revalidates_a_compressed_copy(&req, res.raw_headers()) {
                weaken_etag(res);
            }
            return;
        }
        if status.is_informational()
            || status == StatusCode::NO_CONTENT
            || status == StatusCode::PARTIAL_CONTENT
            || !self.worth_it(res)
        {
            return;
        }
        add_vary(res);
        let Some(encoding) = negotiate(req.header("accept-encoding"), &self.encodings) else { return };
        if let Some(stream) = res.take_body_stream() {
            match Encoder::new(encoding, &self.levels, 0) {
                Ok(encoder) => res.set_body_stream(Box::pin(Compressed::new(stream, encoder))),
                Err(_) => {
                    res.set_body_stream(stream);
                    return;
                }
            }
        } else {
            let Some(body) = res.body_bytes() else { return };
            let compressed = compress(encoding, &self.levels, body);
            match compressed {
                // Already dense (a compressed blob under a text type): as it is.
                Ok(compressed) if compressed.len() < body.len() => *res.body_mut() = compressed,
                _ => return,
            }
        }
        res.append_header_unchecked(b"Content-Encoding", encoding.name().as_bytes());
        weaken_etag(res);
        // nginx's gzip filter drops it too: a client resuming this body by range would
        // be sent uncompressed bytes.
        res.remove_header("accept-ranges");
    }

    /// Whether the response is one compression may change and would shrink.
    fn worth_it(&self, res: &Response) -> bool {
        let headers = res.raw_headers();
        if response_header(headers, "content-encoding").is_some() || response_header(headers, "content-range").is_some()
        {
            return false;
        }
        if response_header(headers, "cache-control").is_some_and(|v| has_token(v, b"no-transform")) {
            return false;
        }
        if !response_header(headers, "content-type").is_some_and(compressible) {
            return false;
        }
        match (res.body_len(), res.body_bytes()) {
            (None, _) => true,
            (Some(len), Some(_)) => len >= self.min_size as u64,
            // A file, sent with `sendfile`.
            (Some(_), None) => false,
        }
    }
}

/// The strong `ETag` of `headers`, quotes included.
fn strong_etag(headers: &[u8]) -> Option<&[u8]> {
    response_header(headers, "etag").filter(|v| !v.starts_with(b"W/"))
}

/// `ETag: "x"` becomes `ETag: W/"x"`; a weak or absent one stays as it is.
fn weaken_etag(res: &mut Response) {
    let Some(tag) = strong_etag(res.raw_headers()) else { return };
    let weak = [&b"W/"[..], tag].concat();
    res.remove_header("etag");
    res.append_header_unchecked(b"ETag", &weak);
}

/// Whether the request's `If-None-Match` names the weak form of the 304's strong tag:
/// what this layer sent with a compressed copy, which the client (or a cache) now
/// revalidates. The 304 must carry that tag for the cache to update the copy it holds
/// (RFC 9111 §4.3.4).
fn revalidates_a_compressed_copy(req: &Request<'_>, headers: &[u8]) -> bool {
    let (Some(ours), Some(theirs)) = (strong_etag(headers), req.header("if-none-match")) else { return false };
    theirs.split(|&b| b == b',').filter_map(|t| t.trim_ascii().strip_prefix(b"W/")).any(|t| t == ours)
}

fn add_vary(res: &mut Response) {
    let headers = res.raw_headers();
    let varies =
        response_header(headers, "vary").is_some_and(|v| has_token(v, b"accept-encoding") || has_token(v, b"*"));
    if !varies {
        res.append_header_unchecked(b"Vary", b"Accept-Encoding");
    }
}

/// Whether a body of this `Content-Type` is worth compressing: text, and the
/// structured types that are text underneath; not what is compressed already.
fn compressible(content_type: &[u8]) -> bool {
    let essence = content_type.split(|&b| b == b';').next().unwrap_or_default().trim_ascii();
    let mut lower = [0u8; 64];
    let Some(lower) = lower.get_mut(..essence.len()) else { return false };
    for (l, b) in lower.iter_mut().zip(essence) {
        *l = b.to_ascii_lowercase();
    }
    let lower = &*lower;
    if lower == b"text/event-stream" {
        // Each event must reach the client as it is sent; see the streaming note.
        return false;
    }
    if lower.starts_with(b"text/") || lower.ends_with(b"+json") || lower.ends_with(b"+xml") {
        return true;
    }
    matches!(
        lower,
        b"application/json"
            | b"application/javascript"
            | b"application/ecmascript"
            | b"application/x-javascript"
            | b"application/xml"
            | b"application/wasm"
            | b"application/graphql"
            | b"application/x-ndjson"
            | b"application/vnd.ms-fontobject"
            | b"font/ttf"
            | b"font/otf"
            | b"image/x-icon"
            | b"image/bmp"
    )
}

/// Incompressible bytes (xorshift), for the encoders' tests: output larger than input.
#[cfg(all(test, any(feature = "gzip", feature = "brotli")))]
fn noise(len: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_u32;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// A gzip body decoded, for the tests of the two gzip encoders.
#[cfg(all(test, feature = "gzip"))]
fn gunzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes).read_to_end(&mut out).unwrap();
    out
}

#[cfg(test)]
mod tests {
    use super::compressible;

    #[test]
    fn text_is_compressible_and_compressed_formats_are_not() {
        for yes in ["text/html; charset=utf-8", "TEXT/CSS", "application/json", "application/rss+xml", "image/svg+xml"]
        {
            assert!(compressible(yes.as_bytes()), "{yes}");
        }
        for no in ["image/png", "font/woff2", "application/zip", "application/octet-stream", "text/event-stream", ""] {
            assert!(!compressible(no.as_bytes()), "{no}");
        }
    }
}
