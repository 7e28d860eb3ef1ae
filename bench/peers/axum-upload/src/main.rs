//! axum peer for the upload benchmark (issue 25) on a current-thread tokio runtime (one
//! worker): `POST /bench/upload` reads a multipart form with axum's `Multipart`, field by
//! field and piece by piece (`Field::chunk`), counts its file fields' bytes, discards
//! them, and answers the count as text, as kiln-demo's `/bench/upload` does.

use axum::extract::{DefaultBodyLimit, Multipart};
use axum::extract::multipart::MultipartError;
use axum::routing::get;
use axum::Router;

/// The largest upload accepted, as kiln-demo's route: 1 GiB.
const MAX_UPLOAD: usize = 1024 * 1024 * 1024;

/// Bytes in the form's file fields (those sent with a file name); text fields skipped.
async fn upload(mut form: Multipart) -> Result<String, MultipartError> {
    let mut bytes: u64 = 0;
    while let Some(mut field) = form.next_field().await? {
        if field.file_name().is_none() {
            continue;
        }
        while let Some(piece) = field.chunk().await? {
            bytes += piece.len() as u64;
        }
    }
    Ok(bytes.to_string())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080);
    let app = Router::new()
        .route("/bench/upload", get(|| async { "POST a multipart form here\n" }).post(upload))
        .layer(DefaultBodyLimit::max(MAX_UPLOAD));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    axum::serve(listener, app).await
}
