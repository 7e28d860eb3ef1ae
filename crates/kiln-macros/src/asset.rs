//! `asset!("site.css")`: a link to a static asset, checked and content-hashed at
//! compile time.

use std::path::{Component, Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;
use sha2::{Digest, Sha256};

/// The folder, beside the calling crate's `Cargo.toml`, that assets are read from.
const ASSETS_DIR: &str = "public";
/// Where the framework serves assets (`kiln::ASSET_PREFIX`).
const PREFIX: &str = "/static";
/// Hex digits of the content hash in a link: 32 bits, enough to tell versions of
/// one file apart.
const HASH_HEX: usize = 8;

pub(crate) fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let lit: syn::LitStr = syn::parse2(input)?;
    let rel = lit.value();
    check_relative(&rel).map_err(|msg| syn::Error::new(lit.span(), msg))?;
    let manifest = std::env::var("CARGO_MANIFEST_DIR")
        .map_err(|_| syn::Error::new(lit.span(), "CARGO_MANIFEST_DIR is not set: build with cargo"))?;
    let path: PathBuf = [manifest.as_str(), ASSETS_DIR, rel.as_str()].iter().collect();
    let content = std::fs::read(&path).map_err(|e| {
        syn::Error::new(
            lit.span(),
            format!("asset `{rel}` not found: {}: {e}", Path::new(ASSETS_DIR).join(&rel).display()),
        )
    })?;
    let link = format!("{PREFIX}/{}", hashed_name(&rel, &content));
    let tracked = path.to_string_lossy().into_owned();
    // `include_bytes!` makes cargo rebuild when the file changes; the constant is
    // never used, so the bytes are not kept in the binary.
    Ok(quote! {{
        const _: &[u8] = include_bytes!(#tracked);
        #link
    }})
}

/// A path below the assets folder: relative, no `..`, `.`, empty segment or backslash.
fn check_relative(rel: &str) -> Result<(), String> {
    if rel.is_empty() || rel.contains('\\') || rel.split('/').any(|s| s.is_empty() || s == "." || s == "..") {
        return Err(format!(
            "asset path `{rel}` must be relative to `{ASSETS_DIR}/`, without `..`, `.` or empty segments"
        ));
    }
    if !Path::new(rel).components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(format!("asset path `{rel}` must stay inside `{ASSETS_DIR}/`"));
    }
    Ok(())
}

/// `css/site.css` → `css/site.3f9a1c0b.css`: the hash before the last extension.
/// This must match `kiln`'s `asset::hashed_name`, which finds the file again.
fn hashed_name(rel: &str, content: &[u8]) -> String {
    let digest = Sha256::digest(content);
    let hash: String = digest.iter().flat_map(|b| [b >> 4, b & 15]).take(HASH_HEX).map(hex_digit).collect();
    let (dir, file) = rel.rsplit_once('/').map_or(("", rel), |(d, f)| (d, f));
    let file = match file.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => format!("{stem}.{hash}.{ext}"),
        _ => format!("{file}.{hash}"),
    };
    if dir.is_empty() { file } else { format!("{dir}/{file}") }
}

fn hex_digit(n: u8) -> char {
    char::from(b"0123456789abcdef"[usize::from(n)])
}
