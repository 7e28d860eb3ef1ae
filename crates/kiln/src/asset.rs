//! Content-hashed assets: [`asset!`](crate::asset) renders `/static/site.3f9a1c0b.css`
//! at compile time; [`App::assets`] serves that name for ever cacheable, and every
//! other file of the folder as ordinary static files.

use std::collections::HashMap;
use std::io;
use std::path::Path;

use kiln_http::{Method, Response};
use sha2::{Digest, Sha256};

use crate::App;
use crate::extract::RequestContext;
use crate::handler::{Dispatch, Handler};
use crate::rejection::Rejection;
use crate::route::percent_decode;
use crate::static_files::{PathRefusal, StaticDir};

/// Where [`App::assets`] serves the folder and where `asset!` links point.
pub const ASSET_PREFIX: &str = "/static";
/// `Cache-Control` of a content-hashed name: its content never changes.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// Hex digits of the content hash in a name; `kiln-macros`' `asset!` uses the same.
const HASH_HEX: usize = 8;
/// The catch-all capture holding the path below [`ASSET_PREFIX`].
const REST: &str = "path";

/// The folder's files under their hashed names, and the two ways of serving them.
struct Assets {
    /// `css/site.3f9a1c0b.css` → `css/site.css`, computed at start-up.
    hashed: HashMap<String, String>,
    immutable: StaticDir,
    plain: StaticDir,
}

/// Marks the handler below, whose argument is not an extractor.
#[doc(hidden)]
pub(crate) struct AssetRequest;

impl<S: 'static> Handler<AssetRequest, S> for Assets {
    fn start<'a>(&'a self, cx: &RequestContext<'a, S>, res: &'a mut Response) -> Dispatch<'a> {
        let rest = cx.params().get(REST).unwrap_or("");
        let original = percent_decode(rest, false).and_then(|name| self.hashed.get(&*name));
        let served = match original {
            Some(original) => self.immutable.serve_now(&cx.request(), original, res),
            None => self.plain.serve_now(&cx.request(), rest, res),
        };
        if let Err(refusal) = served {
            // As `App::static_dir` does: the app's renderer, and `Retry-After` on a 503.
            cx.config().reject(&Rejection::custom(refusal.status(), refusal.reason()), res);
            if refusal == PathRefusal::Unavailable && !res.has_header("retry-after") {
                res.append_header_unchecked(b"Retry-After", b"1");
            }
        }
        Dispatch::Done
    }
}

impl<S: 'static> App<S> {
    /// Serves the folder `root` under [`ASSET_PREFIX`] (`/static/`): a name made by
    /// [`asset!`](crate::asset) (`site.3f9a1c0b.css`) with
    /// `Cache-Control: public, max-age=31536000, immutable` when its hash is the file's,
    /// every other file as [`App::static_dir`] would. The hashes are computed once,
    /// here; a file changed while the server runs keeps its old hashed name until the
    /// next start (and the binary, built with the new hash, asks for the new one).
    ///
    /// ```
    /// use kiln::{App, asset};
    ///
    /// let link = asset!("hello.txt");
    /// assert!(link.starts_with("/static/hello.") && link.ends_with(".txt"));
    /// let app = App::new(|_| ()).assets(concat!(env!("CARGO_MANIFEST_DIR"), "/public"));
    /// let mut client = kiln::test::TestClient::new(app);
    /// let res = client.get(link);
    /// assert_eq!(res.header("cache-control"), Some("public, max-age=31536000, immutable"));
    /// ```
    ///
    /// # Panics
    /// If `root` is not a folder that can be read: a configuration error, caught at
    /// start-up. [`App::try_assets`] returns it instead.
    pub fn assets(self, root: impl AsRef<Path>) -> Self {
        self.try_assets(root).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`App::assets`], with a folder that cannot be read as an error naming it, for an
    /// app that reports its configuration errors itself rather than panicking.
    ///
    /// ```
    /// let err = kiln::App::new(|_| ()).try_assets("/no/such/folder").err().unwrap();
    /// assert!(err.to_string().starts_with("assets /no/such/folder: "), "{err}");
    /// ```
    pub fn try_assets(self, root: impl AsRef<Path>) -> io::Result<Self> {
        self.try_assets_linked(root, &[])
    }

    /// [`App::try_assets`], also refusing a folder that does not hold the files of
    /// `links` (made by [`asset!`](crate::asset)) as they were when the binary was built:
    /// a folder from another version would serve pages whose stylesheet is a `404`.
    ///
    /// ```
    /// use kiln::{App, asset};
    ///
    /// let public = concat!(env!("CARGO_MANIFEST_DIR"), "/public");
    /// assert!(App::new(|_| ()).try_assets_linked(public, &[asset!("hello.txt")]).is_ok());
    /// let stale = "/static/hello.00000000.txt";
    /// let err = App::new(|_| ()).try_assets_linked(public, &[stale]).err().unwrap();
    /// assert!(err.to_string().contains("links as /static/hello.00000000.txt (changed or missing)"), "{err}");
    /// ```
    pub fn try_assets_linked(self, root: impl AsRef<Path>, links: &[&str]) -> io::Result<Self> {
        let root = root.as_ref();
        let named = |e: io::Error| io::Error::new(e.kind(), format!("assets {}: {e}", root.display()));
        let mut hashed = HashMap::new();
        collect(root, "", &mut hashed).map_err(named)?;
        for link in links {
            let name = link.strip_prefix(ASSET_PREFIX).and_then(|l| l.strip_prefix('/')).unwrap_or(link);
            if !hashed.contains_key(name) {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "assets {}: no file here is the one this binary was built with and links as {link} \
                         (changed or missing): serve the folder of the same version",
                        root.display()
                    ),
                ));
            }
        }
        let plain = StaticDir::new(root).map_err(named)?;
        let immutable = StaticDir::new(root).map_err(named)?.cache_control(IMMUTABLE);
        let pattern = format!("{ASSET_PREFIX}/{{*{REST}}}");
        let name = format!("assets from {}", root.display());
        Ok(self.insert(pattern, Method::GET, name, Assets { hashed, immutable, plain }))
    }
}

/// The `Link` lines of a `103 Early Hints` announcing `links` ([`App::early_hints`]).
pub(crate) fn preload_lines(links: &[&str]) -> Vec<u8> {
    let mut lines = Vec::new();
    for link in links {
        lines.extend_from_slice(format!("Link: <{link}>; rel=preload; as={}\r\n", preload_as(link)).as_bytes());
    }
    lines
}

/// The `as` of a preload by the file's extension (the Fetch standard's destinations);
/// fonts are fetched in CORS mode, so their hint says `crossorigin` too.
fn preload_as(link: &str) -> &'static str {
    match link.rsplit('.').next().unwrap_or("") {
        "css" => "style",
        "js" | "mjs" => "script",
        "woff2" | "woff" | "ttf" | "otf" => "font; crossorigin",
        "png" | "jpg" | "jpeg" | "gif" | "webp" | "avif" | "svg" | "ico" => "image",
        _ => "fetch",
    }
}

/// Adds every visible file below `dir` to `hashed`, under its hashed name.
fn collect(dir: &Path, prefix: &str, hashed: &mut HashMap<String, String>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
        if name.starts_with('.') {
            continue;
        }
        let rel = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        let kind = entry.file_type()?;
        if kind.is_dir() {
            collect(&entry.path(), &rel, hashed)?;
        } else if kind.is_file() {
            let content = std::fs::read(entry.path())?;
            hashed.insert(hashed_name(&rel, &content), rel);
        }
    }
    Ok(())
}

/// `css/site.css` → `css/site.3f9a1c0b.css`: the first hex digits of the content's
/// SHA-256 before the last extension, exactly as `asset!` renders them.
fn hashed_name(rel: &str, content: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(content);
    let hash: String =
        digest.iter().flat_map(|b| [b >> 4, b & 15]).take(HASH_HEX).map(|n| char::from(HEX[usize::from(n)])).collect();
    let (dir, file) = rel.rsplit_once('/').unwrap_or(("", rel));
    let file = match file.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => format!("{stem}.{hash}.{ext}"),
        _ => format!("{file}.{hash}"),
    };
    if dir.is_empty() { file } else { format!("{dir}/{file}") }
}

#[cfg(test)]
mod tests {

    #[test]
    fn early_hints_say_what_each_file_is_fetched_as() {
        let lines =
            super::preload_lines(&["/static/site.1.css", "/static/f.2.woff2", "/static/a.3.js", "/static/x.4.png"]);
        assert_eq!(
            String::from_utf8(lines).unwrap(),
            "Link: </static/site.1.css>; rel=preload; as=style\r\n\
             Link: </static/f.2.woff2>; rel=preload; as=font; crossorigin\r\n\
             Link: </static/a.3.js>; rel=preload; as=script\r\n\
             Link: </static/x.4.png>; rel=preload; as=image\r\n"
        );
    }

    use super::hashed_name;

    #[test]
    fn the_hash_goes_before_the_last_extension() {
        // SHA-256("") = e3b0c442…
        assert_eq!(hashed_name("site.css", b""), "site.e3b0c442.css");
        assert_eq!(hashed_name("js/app.min.js", b""), "js/app.min.e3b0c442.js");
        assert_eq!(hashed_name("LICENSE", b""), "LICENSE.e3b0c442");
        assert_eq!(hashed_name(".env", b""), ".env.e3b0c442");
    }
}
