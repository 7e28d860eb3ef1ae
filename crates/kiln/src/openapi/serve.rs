//! The document served: [`App::openapi_routes`] adds a route answering the document
//! as JSON and one answering its reference page, built when the app is.

use std::sync::Arc;

use kiln_http::{Method, Response};

use crate::app::App;
use crate::extract::RequestContext;
use crate::handler::{Dispatch, Handler};

use super::document::Document;
use super::page;

/// What [`App::openapi_routes`] asked for, kept until the app is built and its routes
/// are all known.
pub(crate) struct Served {
    json_path: String,
    page_path: String,
    finish: Box<dyn FnOnce(Document) -> Document>,
}

impl<S: 'static> App<S> {
    /// Serves the app's document (as [`openapi`](Self::openapi) builds it, then passed
    /// through `finish`, which may set its [`info`](Document::info)) as JSON at
    /// `json_path`, and a reference page for people at `page_path`: operations with
    /// their parameters, bodies and responses, and schemas with their fields, required
    /// marks and constraints, rendered by `kiln::html!` with no script.
    ///
    /// The document is built once, when the app is, from every route registered by
    /// then, so this may be called before the routes it describes. The two routes are
    /// not in the document themselves.
    ///
    /// ```
    /// use kiln::{App, Route};
    ///
    /// /// Shows a page.
    /// #[derive(Route)]
    /// #[route("/pages/{slug}")]
    /// struct Page { slug: String }
    ///
    /// async fn page(route: Page) -> String { route.slug }
    ///
    /// let app = App::new(|_| ())
    ///     .openapi_routes("/api/openapi.json", "/api/docs", |doc| doc.info("Wiki", "1.0"))
    ///     .route(page);
    /// let mut client = kiln::test::TestClient::new(app);
    /// let doc: serde_json::Value = client.get("/api/openapi.json").json();
    /// assert_eq!(doc["info"]["title"], "Wiki");
    /// assert_eq!(doc["paths"]["/pages/{slug}"]["get"]["summary"], "Shows a page.");
    /// assert!(client.get("/api/docs").text().contains("<code>/pages/{slug}</code>"));
    /// ```
    pub fn openapi_routes(
        self,
        json_path: &str,
        page_path: &str,
        finish: impl FnOnce(Document) -> Document + 'static,
    ) -> Self {
        self.serve_openapi(Served {
            json_path: json_path.to_owned(),
            page_path: page_path.to_owned(),
            finish: Box::new(finish),
        })
    }
}

/// Adds the routes [`App::openapi_routes`] asked for to `app`, whose routes are now
/// all registered; they are asked for no more.
pub(crate) fn install_served<S: 'static>(mut app: App<S>) -> App<S> {
    match app.take_served() {
        Some(served) => served.install(app),
        None => app,
    }
}

impl Served {
    /// Adds the two routes to `app`.
    fn install<S: 'static>(self, app: App<S>) -> App<S> {
        let doc = (self.finish)(app.openapi());
        let json = serde_json::to_vec(doc.json()).expect("a JSON value serialises");
        let page = page::render(doc.json()).into_string();
        let json = Fixed { content_type: "application/json", body: json.into() };
        let page = Fixed { content_type: "text/html; charset=utf-8", body: page.into_bytes().into() };
        app.insert(self.json_path, Method::GET, "the OpenAPI document", json).insert(
            self.page_path,
            Method::GET,
            "the OpenAPI reference page",
            page,
        )
    }
}

/// A route answering the same bytes each time.
struct Fixed {
    content_type: &'static str,
    body: Arc<[u8]>,
}

/// Marks [`Fixed`]'s handler, whose arguments are not extractors.
struct NoArgs;

impl<S: 'static> Handler<NoArgs, S> for Fixed {
    fn start<'a>(&'a self, _: &RequestContext<'a, S>, res: &'a mut Response) -> Dispatch<'a> {
        res.set_content_type(self.content_type);
        res.body_mut().extend_from_slice(&self.body);
        Dispatch::Done
    }
}
