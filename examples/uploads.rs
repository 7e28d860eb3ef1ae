//! An image and file upload form with a CSRF token: `cargo run --example uploads`, then
//! open http://127.0.0.1:3000/.
//!
//! The upload route streams its body (`App::stream_body`): the engine reads it only as
//! `Multipart` asks, so a large or stalled upload holds one read buffer, and files over
//! the memory threshold go straight to a temporary file, then into the uploads folder.

use std::sync::{Arc, Mutex};

use kiln::markup::{Document, Fragment};
use kiln::multipart::{Multipart, MultipartLimits};
use kiln::{App, Csrf, CsrfGuard, Key, Redirect, Rejection, Route, State, Typed, html};

#[derive(Route)]
#[route("/")]
pub(crate) struct Home;

#[derive(Route)]
#[route(POST, "/upload")]
pub(crate) struct Upload;

#[derive(Route)]
#[route("/files/{id}")]
pub(crate) struct StoredFile {
    pub(crate) id: usize,
}

/// The largest upload the form accepts.
pub(crate) const MAX_UPLOAD: u64 = 20 * 1024 * 1024;

/// One stored upload: its title, what it is, and where it lies.
struct Stored {
    title: String,
    content_type: &'static str,
    path: std::path::PathBuf,
}

/// What every worker shares: the uploads folder and the list of what is in it.
#[derive(Clone)]
pub(crate) struct Shelf {
    dir: std::path::PathBuf,
    files: Arc<Mutex<Vec<Stored>>>,
}

impl Shelf {
    /// A shelf storing its files in `dir` (created if missing).
    pub(crate) fn new(dir: std::path::PathBuf) -> Self {
        std::fs::create_dir_all(&dir).expect("the uploads folder can be created");
        Shelf { dir, files: Arc::default() }
    }
}

async fn home(_: Home, shelf: State<Shelf>, csrf: Csrf) -> (Csrf, Fragment<Document>) {
    let files: Vec<(usize, String, bool)> = shelf
        .files
        .lock()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(id, f)| (id, f.title.clone(), f.content_type.starts_with("image/")))
        .collect();
    let page = html! {
        html lang="en" {
            head { meta charset="utf-8"; title { "Uploads" } }
            body {
                h1 { "Uploads" }
                // The token first: on a streamed route `Multipart` checks it before
                // reading anything else.
                form method="post" action=(Upload) enctype="multipart/form-data" {
                    (csrf.field())
                    input name="title" required;
                    input type="file" name="file" required;
                    button type="submit" { "Upload" }
                }
                ul {
                    @for (id, title, image) in &files {
                        li {
                            a href=(StoredFile { id: *id }) { (title) }
                            @if *image {
                                " " img src=(StoredFile { id: *id }) alt=(title) width="120";
                            }
                        }
                    }
                }
            }
        }
    };
    (csrf, page)
}

async fn upload(_: Upload, _: CsrfGuard, shelf: State<Shelf>, form: Multipart) -> Result<Redirect, Rejection> {
    let limits = MultipartLimits { max_fields: 10, ..MultipartLimits::default() };
    let mut form = form.with_limits(limits).collect().await?;
    let title = form.text("title")?.trim().to_owned();
    let file = form.take_file("file")?;
    let content_type = served_as(file.content_type());
    let mut files = shelf.files.lock().unwrap();
    // Stored under a name of our own: the client's file name is never a path.
    let path = shelf.dir.join(format!("upload-{}", files.len()));
    file.persist(&path).map_err(|e| Rejection::custom(kiln::StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    files.push(Stored { title, content_type, path });
    Ok(Redirect::to(&Home))
}

/// The type a stored file is served as: the common image types as sent, anything else
/// as a download, so that an uploaded page or script never runs on this site.
fn served_as(sent: Option<&str>) -> &'static str {
    match sent.unwrap_or("") {
        "image/png" => "image/png",
        "image/jpeg" => "image/jpeg",
        "image/gif" => "image/gif",
        "image/webp" => "image/webp",
        _ => "application/octet-stream",
    }
}

async fn stored_file(route: StoredFile, shelf: State<Shelf>) -> Result<Typed<Vec<u8>>, Rejection> {
    let (content_type, path) = {
        let files = shelf.files.lock().unwrap();
        let f = files.get(route.id).ok_or_else(|| kiln::rejection::NotFound::new("no such file"))?;
        (f.content_type, f.path.clone())
    };
    let bytes = std::fs::read(path).map_err(|_| kiln::rejection::NotFound::new("the file is gone"))?;
    Ok(Typed(content_type, bytes))
}

/// The app, storing uploads in `shelf`.
pub(crate) fn app(key: Key, shelf: Shelf) -> App<Shelf> {
    App::new(move |_worker| shelf.clone())
        .secret_key(key)
        .route(home)
        .route(upload)
        .route(stored_file)
        .stream_body::<Upload>(MAX_UPLOAD)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().init();
    let shelf = Shelf::new(std::env::temp_dir().join("kiln-uploads-example"));
    let server = kiln::http::Server::new().listen("127.0.0.1:3000");
    kiln::serve(app(Key::generate(), shelf), server)?.run_until_signal()?;
    Ok(())
}
