#![allow(dead_code)]
//! What the site's test binaries share: the demo binary started with a known editor
//! password on a database of its own, and a visitor that keeps its cookies.
//!
//! Each test binary uses a part of it, hence the `dead_code` allowance.

use std::collections::BTreeMap;

use argon2::password_hash::{PasswordHasher, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use kiln_test_support::{Reply, Server, TempDir, on_worker, request};

/// The editor's password the tests log in with.
pub(crate) const PASSWORD: &str = "correct horse battery staple";
/// The public URL the servers are started with: the feed's and sitemap's links start with it.
pub(crate) const PUBLIC_URL: &str = "https://wiki.example.org";

/// The Argon2id hash of [`PASSWORD`], with small costs so that a debug build checks it
/// quickly; the server takes the costs from the hash, as it would a real one's.
pub(crate) fn password_hash() -> String {
    let params = Params::new(256, 1, 1, None).expect("argon2 params");
    let salt = SaltString::encode_b64(b"kiln site tests").expect("salt");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
        .hash_password(PASSWORD.as_bytes(), &salt)
        .expect("hash")
        .to_string()
}

/// A running site: the server and its database.
pub(crate) struct Site {
    pub(crate) server: Server,
    /// The database's URL, for a second process on the same database.
    pub(crate) database: String,
    _dir: Option<TempDir>,
}

impl Site {
    /// The site on a fresh SQLite file, with `args` after the defaults.
    pub(crate) fn sqlite(name: &str, args: &[&str]) -> Site {
        let dir = TempDir::new(&format!("site-{name}"));
        let database = dir.sqlite_url();
        let server = start(&database, args);
        Site { server, database, _dir: Some(dir) }
    }

    /// The site on a fresh schema of the PostgreSQL at `base` (`KILN_PG_URL`).
    pub(crate) fn postgres(base: &str, name: &str, args: &[&str]) -> Site {
        let database = fresh_schema(base, &format!("site_{name}"));
        Site { server: start(&database, args), database, _dir: None }
    }

    pub(crate) fn visitor(&self) -> Visitor {
        Visitor { addr: self.server.addr, cookies: BTreeMap::new() }
    }
}

/// The demo on `database` (a URL), with `args` after the defaults: for a test that
/// stops a server and starts another on the same database.
pub(crate) fn start(database: &str, args: &[&str]) -> Server {
    let hash = password_hash();
    let defaults = [
        ("--workers", "1"),
        ("--database", database),
        ("--public-url", PUBLIC_URL),
        ("--editor-password-hash", &hash),
        ("--comments-per-minute", "1000"),
        ("--logins-per-minute", "1000"),
    ];
    // A flag in `args` replaces its default: clap refuses one given twice.
    let mut all: Vec<&str> =
        defaults.iter().filter(|(flag, _)| !args.contains(flag)).flat_map(|(flag, value)| [*flag, *value]).collect();
    all.extend_from_slice(args);
    Server::start(env!("CARGO_BIN_EXE_kiln-demo"), &all)
}

/// A schema named `schema`, dropped and made anew, first on the search path of the
/// URL returned.
fn fresh_schema(base: &str, schema: &str) -> String {
    on_worker(async {
        let (client, connection) =
            kiln::db::tokio_postgres::connect(base, kiln::db::tokio_postgres::NoTls).await.expect("connect");
        tokio::task::spawn_local(connection);
        client
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"))
            .await
            .expect("a fresh schema");
    });
    let separator = if base.contains('?') { '&' } else { '?' };
    format!("{base}{separator}options=-c%20search_path%3D{schema}")
}

/// A browser without a browser: one request per connection, cookies kept.
pub(crate) struct Visitor {
    pub(crate) addr: std::net::SocketAddr,
    pub(crate) cookies: BTreeMap<String, String>,
}

impl Visitor {
    pub(crate) fn get(&mut self, target: &str) -> Reply {
        self.send("GET", target, &[], None)
    }

    /// Posts `fields` as a URL-encoded form.
    pub(crate) fn post(&mut self, target: &str, fields: &[(&str, &str)]) -> Reply {
        let body = form(fields);
        self.send("POST", target, &[("Content-Type", "application/x-www-form-urlencoded")], Some(&body))
    }

    /// Sends a request with the visitor's cookies, and keeps the ones it is given.
    pub(crate) fn send(&mut self, method: &str, target: &str, headers: &[(&str, &str)], body: Option<&str>) -> Reply {
        let mut raw = format!("{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
        if !self.cookies.is_empty() {
            let jar: Vec<String> = self.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect();
            raw.push_str(&format!("Cookie: {}\r\n", jar.join("; ")));
        }
        for (name, value) in headers {
            raw.push_str(&format!("{name}: {value}\r\n"));
        }
        let body = body.unwrap_or("");
        if !body.is_empty() || method == "POST" {
            raw.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        raw.push_str("\r\n");
        raw.push_str(body);
        let reply = request(self.addr, &raw).unwrap_or_else(|e| panic!("{method} {target}: {e}"));
        for cookie in set_cookies(&reply) {
            let pair = cookie.split(';').next().unwrap_or("");
            let (name, value) = pair.split_once('=').expect("name=value");
            if value.is_empty() || cookie.contains("Max-Age=0") {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_owned(), value.to_owned());
            }
        }
        reply
    }

    /// Opens `target` and returns the CSRF token of its form.
    pub(crate) fn token(&mut self, target: &str) -> String {
        let page = self.get(target);
        assert_eq!(page.status, 200, "{target}: {}", page.text());
        csrf_token(page.text())
    }

    /// Logs in as the editor.
    pub(crate) fn log_in(&mut self) {
        let token = self.token("/login");
        let res = self.post("/login", &[("csrf_token", &token), ("password", PASSWORD)]);
        assert_eq!(res.status, 303, "{}", res.text());
        assert_eq!(res.header("Location"), Some("/editor"));
        assert!(self.cookies.contains_key("kiln_session"));
    }
}

/// Every `Set-Cookie` header of a reply.
pub(crate) fn set_cookies(reply: &Reply) -> Vec<String> {
    reply
        .head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(name, _)| name.eq_ignore_ascii_case("set-cookie"))
        .map(|(_, value)| value.trim().to_owned())
        .collect()
}

/// The value of the form's `csrf_token` field.
pub(crate) fn csrf_token(html: &str) -> String {
    let at = html.find(r#"name="csrf_token" value=""#).unwrap_or_else(|| panic!("no CSRF field in {html}"));
    let rest = &html[at + r#"name="csrf_token" value=""#.len()..];
    rest[..rest.find('"').expect("end of the token")].to_owned()
}

/// `application/x-www-form-urlencoded`.
pub(crate) fn form(fields: &[(&str, &str)]) -> String {
    let encode = |s: &str| {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => char::from(b).to_string(),
                b' ' => "+".to_owned(),
                _ => format!("%{b:02X}"),
            })
            .collect::<String>()
    };
    fields.iter().map(|(k, v)| format!("{}={}", encode(k), encode(v))).collect::<Vec<_>>().join("&")
}
