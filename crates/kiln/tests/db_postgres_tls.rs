//! `kiln::db` to PostgreSQL over TLS (rustls): `sslmode=require` encrypts,
//! `sslrootcert` verifies the server, and a server the CA did not sign is refused.
//! `scripts/pg` serves TLS with a certificate signed by `KILN_PG_CA`.
#![cfg(feature = "postgres")]

use kiln::db::{Database, Error, Options};
use kiln_test_support::{TempDir, on_worker, pg_url};

/// Whether the connection that runs the query is encrypted, as the server sees it.
fn encrypted(url: &str) -> Result<bool, Error> {
    let database = Database::open(url, Options::default())?;
    on_worker(async {
        let (ssl,): (bool,) =
            database.worker().query_one("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", &[]).await?;
        Ok(ssl)
    })
}

fn ca() -> String {
    std::env::var("KILN_PG_CA").expect("KILN_PG_CA: scripts/pg start prints it beside KILN_PG_URL")
}

#[test]
fn sslmode_require_encrypts_and_disable_does_not() {
    let Some(url) = pg_url("db_postgres_tls::sslmode_require_encrypts_and_disable_does_not") else { return };
    assert_eq!(encrypted(&format!("{url}?sslmode=require")), Ok(true));
    assert_eq!(encrypted(&format!("{url}?sslmode=disable")), Ok(false));
}

#[test]
fn the_server_is_verified_against_sslrootcert() {
    let Some(url) = pg_url("db_postgres_tls::the_server_is_verified_against_sslrootcert") else { return };
    assert_eq!(encrypted(&format!("{url}?sslmode=verify-full&sslrootcert={}", ca())), Ok(true));
}

#[test]
fn a_server_the_ca_did_not_sign_is_refused() {
    let Some(url) = pg_url("db_postgres_tls::a_server_the_ca_did_not_sign_is_refused") else { return };
    let dir = TempDir::new("other-ca");
    let other = dir.path().join("other-ca.pem");
    let made = std::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=another CA"])
        .arg("-keyout")
        .arg(dir.path().join("other.key"))
        .arg("-out")
        .arg(&other)
        .output()
        .expect("run openssl");
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let e = encrypted(&format!("{url}?sslmode=verify-full&sslrootcert={}", other.display())).unwrap_err();
    assert!(e.to_string().contains("TLS with PostgreSQL") && e.to_string().contains("certificate"), "{e}");
}

#[test]
fn a_bad_sslrootcert_refuses_to_open() {
    let dir = TempDir::new("bad-ca");
    let not_pem = dir.path().join("not.pem");
    std::fs::write(&not_pem, "not a certificate").expect("write");
    let url = format!("postgres://u:p@127.0.0.1:1/db?sslmode=verify-full&sslrootcert={}", not_pem.display());
    let e = Database::open(&url, Options::default()).unwrap_err();
    assert!(matches!(&e, Error::Open(m) if m.contains("no PEM certificate")), "{e}");
    let missing = "postgres://u:p@127.0.0.1:1/db?sslmode=require&sslrootcert=/nonexistent/ca.pem";
    let e = Database::open(missing, Options::default()).unwrap_err();
    assert!(matches!(&e, Error::Open(m) if m.contains("/nonexistent/ca.pem")), "{e}");
}
