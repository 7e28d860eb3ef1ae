//! actix-web 4 over rustls: `/pong` on one worker, HTTPS only, for the suite's TLS
//! workloads (bench/kilnbench/tls.py). PORT, TLS_CERT and TLS_KEY from the environment.

use std::sync::Arc;

use actix_web::http::header::ContentType;
use actix_web::{web, App, HttpResponse, HttpServer};
use rustls::crypto::ring;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::ServerSessionMemoryCache;

async fn pong() -> HttpResponse {
    HttpResponse::Ok().content_type(ContentType::plaintext()).body("PONG")
}

fn tls_config() -> rustls::ServerConfig {
    let cert = std::env::var("TLS_CERT").expect("TLS_CERT");
    let key = std::env::var("TLS_KEY").expect("TLS_KEY");
    let chain = CertificateDer::pem_file_iter(&cert).expect("cert file").collect::<Result<Vec<_>, _>>().expect("cert");
    let key = PrivateKeyDer::from_pem_file(&key).expect("key");
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("certificate and key");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    // As kiln: tickets for TLS 1.3, a session cache for TLS 1.2.
    config.ticketer = ring::Ticketer::new().expect("ticketer");
    config.session_storage = ServerSessionMemoryCache::new(4096);
    config
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8443);
    HttpServer::new(|| App::new().route("/pong", web::get().to(pong)))
        .workers(1)
        .backlog(4096)
        .bind_rustls_0_23(("127.0.0.1", port), tls_config())?
        .run()
        .await
}
