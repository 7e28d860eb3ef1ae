//! The upload benchmark (issue 25): `POST /bench/upload` reads a `multipart/form-data`
//! body field by field as it arrives, counts the bytes of its file fields, discards
//! them (nothing goes to memory or disk beyond one piece at a time), and answers the
//! count as text. The axum peer (bench/peers/axum-upload) does the same with axum's
//! `Multipart`, so the two measure the multipart readers and the body streaming.

use kiln::multipart::{Multipart, MultipartError};
use kiln::{App, Route};

/// The largest upload the benchmark accepts (`413` beyond): far above the 100 MiB it
/// sends, far below what the machine could not hold if it were ever buffered.
pub(crate) const MAX_UPLOAD: u64 = 1024 * 1024 * 1024;

/// The upload: a multipart form whose file fields are counted.
#[derive(Route)]
#[route(POST, "/bench/upload")]
pub(crate) struct BenchUpload;

/// A `GET` on the same path, for a runner's readiness probe.
#[derive(Route)]
#[route("/bench/upload")]
pub(crate) struct BenchUploadReady;

/// Mounts both, the `POST` with a streamed body.
pub(crate) fn mount<S: 'static>(app: App<S>) -> App<S> {
    app.route(upload).route(ready).stream_body::<BenchUpload>(MAX_UPLOAD)
}

async fn ready(_: BenchUploadReady) -> &'static str {
    "POST a multipart form here\n"
}

/// Bytes in the form's file fields (those sent with a file name); text fields are
/// skipped unread, as `next_field` does with what a handler leaves.
async fn upload(_: BenchUpload, mut form: Multipart) -> Result<String, MultipartError> {
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
