//! `migrations!()`: the app's `migrations/NNNN_name.sql` files, embedded at
//! compile time in the order of their numbers.

use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::LitStr;

/// The folder read when the macro names none, relative to the crate's manifest.
const DEFAULT_DIR: &str = "migrations";

pub(crate) fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let dir = if input.is_empty() { DEFAULT_DIR.to_owned() } else { syn::parse2::<LitStr>(input)?.value() };
    let root = std::env::var("CARGO_MANIFEST_DIR").map_err(|_| error("CARGO_MANIFEST_DIR is not set"))?;
    let folder = Path::new(&root).join(&dir);
    let entries = std::fs::read_dir(&folder).map_err(|e| error(&format!("cannot read {}: {e}", folder.display())))?;
    let mut found: Vec<(u32, String, PathBuf)> = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| error(&e.to_string()))?.path();
        let Some(file) = path.file_name().and_then(|f| f.to_str()).map(str::to_owned) else { continue };
        if !file.ends_with(".sql") {
            continue;
        }
        let (version, name) = parse_name(&file).ok_or_else(|| {
            error(&format!("{dir}/{file}: a migration's name is NNNN_name.sql, as in 0001_create_users.sql"))
        })?;
        if let Some((_, other, _)) = found.iter().find(|(v, ..)| *v == version) {
            return Err(error(&format!("{dir}/{file} and the migration named {other} share the number {version}")));
        }
        found.push((version, name, path));
    }
    found.sort_by_key(|(version, ..)| *version);
    let migrations = found.iter().map(|(version, name, path)| {
        let path = path.to_string_lossy();
        quote! { ::kiln::db::Migration::new(#version, #name, ::core::include_str!(#path)) }
    });
    Ok(quote! {{
        const MIGRATIONS: &[::kiln::db::Migration] = &[#(#migrations),*];
        MIGRATIONS
    }})
}

/// `0003_add_email.sql` as `(3, "add_email")`.
fn parse_name(file: &str) -> Option<(u32, String)> {
    let stem = file.strip_suffix(".sql")?;
    let (number, name) = stem.split_once('_')?;
    let valid = !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) && !name.is_empty();
    valid.then_some(())?;
    Some((number.parse().ok()?, name.to_owned()))
}

fn error(message: &str) -> syn::Error {
    syn::Error::new(Span::call_site(), message)
}

#[cfg(test)]
mod tests {
    use super::parse_name;

    #[test]
    fn names_are_a_number_then_a_name() {
        assert_eq!(parse_name("0003_add_email.sql"), Some((3, "add_email".into())));
        assert_eq!(parse_name("12_x.sql"), Some((12, "x".into())));
        for bad in ["add_email.sql", "0003.sql", "0003_.sql", "x3_y.sql", "_y.sql"] {
            assert_eq!(parse_name(bad), None, "{bad}");
        }
    }
}
