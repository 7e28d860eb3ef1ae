//! The site's settings: its flags (each with an environment variable), checked once
//! at start and shared by every worker.

use std::net::SocketAddr;
use std::time::Duration;

use argon2::Argon2;
use argon2::password_hash::rand_core::{OsRng, RngCore};
use argon2::password_hash::{PasswordHash, PasswordHasher, SaltString};
use kiln::{App, Key, RateLimit};

use super::api::routes::ApiToken;
use super::errors::render_rejection;
use super::routes::Login;

/// The site's flags.
#[derive(Debug, clap::Args)]
pub(crate) struct SiteArgs {
    /// The site's address as visitors reach it, for the absolute links of the feed and
    /// the sitemap [default: the `--listen` address, `https://` with `--tls-cert`, else
    /// `http://`].
    #[arg(long, env = "KILN_PUBLIC_URL")]
    public_url: Option<String>,
    /// A secret of at least 32 bytes that signs the session and CSRF cookies [default: a
    /// random one, so sessions end with the process].
    #[arg(long, env = "KILN_SECRET_KEY", hide_env_values = true)]
    secret_key: Option<String>,
    /// The editor's password as an Argon2 PHC string (`$argon2id$v=19$...`) [default: a
    /// random password, printed once on standard error at start].
    #[arg(long, env = "KILN_EDITOR_PASSWORD_HASH", hide_env_values = true)]
    editor_password_hash: Option<String>,
    /// Seconds an editor's session lasts, on the server's clock (at least 1).
    #[arg(long, env = "KILN_SESSION_TTL", default_value_t = 24 * 3600, value_parser = session_seconds)]
    session_ttl: u64,
    /// Comments one client address may post per minute, counted across the workers (429 beyond).
    #[arg(long, env = "KILN_COMMENTS_PER_MINUTE", default_value_t = 5)]
    comments_per_minute: u32,
    /// Login attempts one client address may make per minute, counted across the workers (429 beyond).
    #[arg(long, env = "KILN_LOGINS_PER_MINUTE", default_value_t = 10)]
    logins_per_minute: u32,
    /// Marks the session and CSRF cookies `Secure`: turn on when served over HTTPS.
    #[arg(long, env = "KILN_SECURE_COOKIES")]
    secure_cookies: bool,
}

/// The checked settings.
#[derive(Debug)]
pub(crate) struct Settings {
    /// The editor's password hash, a PHC string that parsed.
    pub(crate) password_hash: String,
    /// Comments stored, by client address: asked by the handler, which counts only the
    /// comments it would store.
    pub(crate) comments: RateLimit,
    /// Login attempts, by client address: every `POST /login` and `POST /api/tokens`
    /// counts (both check the editor's password), a refused one too, since the limit is
    /// what stands between a guesser and the password.
    logins: RateLimit,
    public_url: String,
    key: Key,
    session_ttl: Duration,
    secure_cookies: bool,
}

impl SiteArgs {
    /// Checks the flags; makes up what is missing (saying so on stderr). `tls`: whether
    /// the server speaks HTTPS at `listen`.
    pub(crate) fn settings(&self, listen: SocketAddr, tls: bool) -> Result<Settings, String> {
        let key = match &self.secret_key {
            Some(secret) => Key::new(secret).map_err(|e| format!("--secret-key: {e}"))?,
            None => Key::generate(),
        };
        let password_hash = match &self.editor_password_hash {
            Some(hash) => {
                PasswordHash::new(hash)
                    .map_err(|e| format!("--editor-password-hash: not an Argon2 PHC string: {e}"))?;
                hash.clone()
            }
            None => {
                let password = random_password();
                eprintln!(
                    "kiln-demo: no --editor-password-hash given; the editor's password for this run is: {password}"
                );
                hash_password(&password)?
            }
        };
        let public_url = self.public_url.clone().unwrap_or_else(|| default_public_url(listen, tls));
        Ok(Settings {
            password_hash,
            comments: RateLimit::per_minute(self.comments_per_minute),
            logins: RateLimit::per_minute(self.logins_per_minute)
                .route::<Login>()
                .route::<ApiToken>()
                .message("Too many login attempts from your address; wait a minute and try again."),
            public_url,
            key,
            session_ttl: Duration::from_secs(self.session_ttl),
            secure_cookies: self.secure_cookies,
        })
    }
}

impl Settings {
    /// Gives the app the site's public URL, key, session policy, error pages and login
    /// limit.
    pub(crate) fn apply<S: 'static>(&self, app: App<S>) -> App<S> {
        app.public_url(&self.public_url)
            .rate_limit(self.logins.clone())
            .secret_key(self.key.clone())
            .session_ttl(self.session_ttl)
            .secure_cookies(self.secure_cookies)
            .on_rejection(render_rejection)
    }
}

/// The site's URL when `--public-url` is not given: the address it listens on, in the
/// scheme it speaks there.
fn default_public_url(listen: SocketAddr, tls: bool) -> String {
    let scheme = if tls { "https" } else { "http" };
    let host = if listen.ip().is_unspecified() { "localhost".to_owned() } else { listen.ip().to_string() };
    let host = if listen.is_ipv6() && host != "localhost" { format!("[{host}]") } else { host };
    format!("{scheme}://{host}:{}", listen.port())
}

/// `--session-ttl`: whole seconds, at least one.
fn session_seconds(arg: &str) -> Result<u64, String> {
    match arg.parse::<u64>() {
        Ok(0) => Err("a session must last at least 1 second: with 0 every login would end at once".into()),
        Ok(seconds) => Ok(seconds),
        Err(e) => Err(e.to_string()),
    }
}

/// 16 random bytes as 32 hex digits.
fn random_password() -> String {
    let mut bytes = [0u8; 16];
    OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The Argon2id PHC string of `password`, with a random salt.
fn hash_password(password: &str) -> Result<String, String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default().hash_password(password.as_bytes(), &salt).map(|h| h.to_string()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        site: SiteArgs,
    }

    /// The audit found the feed's links `http://` on the HTTPS port when TLS was on and
    /// `--public-url` was not given.
    #[test]
    fn the_default_public_url_speaks_https_when_tls_is_on() {
        let table = [
            ("127.0.0.1:8443", true, "https://127.0.0.1:8443"),
            ("127.0.0.1:8080", false, "http://127.0.0.1:8080"),
            ("0.0.0.0:443", true, "https://localhost:443"),
            ("[::1]:8443", true, "https://[::1]:8443"),
            ("[::]:8080", false, "http://localhost:8080"),
        ];
        for (listen, tls, url) in table {
            assert_eq!(default_public_url(listen.parse().unwrap(), tls), url, "{listen} tls={tls}");
        }
    }

    #[test]
    fn a_session_ttl_of_zero_is_refused_when_the_flags_are_read() {
        let error = Flags::try_parse_from(["test", "--session-ttl", "0"]).err().expect("0 refused");
        let message = error.to_string();
        assert!(message.contains("--session-ttl") && message.contains("at least 1 second"), "{message}");
        assert!(Flags::try_parse_from(["test", "--session-ttl", "-1"]).is_err());
        let flags = Flags::try_parse_from(["test", "--session-ttl", "1"]).expect("1 second is a session");
        assert_eq!(flags.site.session_ttl, 1);
    }
}
