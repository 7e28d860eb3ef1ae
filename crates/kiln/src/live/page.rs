//! A live view's first answer: its whole page over plain HTTP on its typed route,
//! rendered from the state its `mount` built, so that it reads (and is crawled)
//! without JavaScript. It mounts the view ([`LiveView::mount`]; a rejection answers
//! instead), renders it into a `<div data-kiln-live>` and puts that into the view's
//! [`page`](LiveView::page).
//!
//! ```
//! use kiln::live::{Live, LiveView};
//! use kiln::{App, Rejection, RequestContext, Route, live_html};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Route)]
//! #[route("/hello/{name}")]
//! struct Hello {
//!     name: String,
//! }
//!
//! #[derive(Serialize, Deserialize)]
//! enum Event {
//!     Wave,
//! }
//!
//! struct Greeting {
//!     name: String,
//!     waves: u32,
//! }
//!
//! impl LiveView for Greeting {
//!     type AppState = ();
//!     type Route = Hello;
//!     type Event = Event;
//!
//!     async fn mount(route: Hello, _cx: RequestContext<'_, ()>) -> Result<Self, Rejection> {
//!         Ok(Greeting { name: route.name, waves: 0 })
//!     }
//!
//!     fn handle(&mut self, Event::Wave: Event) {
//!         self.waves += 1;
//!     }
//!
//!     fn render(&self) -> Live<Event> {
//!         live_html! { p { "Hello, " (self.name) " (" (self.waves) " waves)" } }
//!     }
//! }
//!
//! let app = App::new(|_| ()).live::<Greeting>();
//! let mut client = kiln::test::TestClient::new(app);
//! let page = client.get(&Hello { name: "<ann>".into() }).text();
//! assert!(page.contains("<p>Hello, &lt;ann&gt; (0 waves)</p></div>"), "{page}");
//! ```

use std::marker::PhantomData;

use kiln_http::Response;

use crate::extract::{RequestContext, route_from_request};
use crate::handler::{Dispatch, Handler, RouteHandler};
use crate::live::view::LiveView;
use crate::markup::{Flow, Fragment, PreEscaped};
use crate::response::IntoResponse;

/// The handler answering a live view's route with its whole page, which
/// [`App::live`](crate::App::live) registers.
pub(crate) struct LivePage<V>(PhantomData<fn() -> V>);

/// The handler of `V`'s first answer.
pub(crate) fn page<V: LiveView>() -> LivePage<V> {
    LivePage(PhantomData)
}

/// What a [`LivePage`] takes in place of a handler's arguments: the request, which
/// it gives to the view's `mount`.
pub(crate) struct MountArgs<V>(PhantomData<fn() -> V>);

impl<V: LiveView> Handler<MountArgs<V>, V::AppState> for LivePage<V> {
    fn start<'a>(&'a self, cx: &RequestContext<'a, V::AppState>, res: &'a mut Response) -> Dispatch<'a> {
        let config = cx.config();
        let route = match route_from_request::<_, V::Route>(cx) {
            Ok(route) => route,
            Err(rejection) => {
                config.reject(&rejection, res);
                return Dispatch::Done;
            }
        };
        let cx = cx.clone();
        Dispatch::Running(Box::pin(async move {
            match V::mount(route, cx).await {
                Ok(view) => config.rendering(|| first_answer(&view).into_response(res)),
                Err(rejection) => config.reject(&rejection, res),
            }
        }))
    }
}

impl<V: LiveView> RouteHandler<MountArgs<V>, V::AppState> for LivePage<V> {
    type Route = V::Route;
}

/// The view's page with the view rendered in its container.
fn first_answer<V: LiveView>(view: &V) -> Fragment<kiln_html::Document> {
    let live = view.render();
    let fingerprint = format!("{:016x}", live.part().statics().fingerprint());
    let container: Fragment<Flow> = crate::html! {
        div data-kiln-live=(fingerprint) { (PreEscaped(live.to_html())) }
    };
    view.page(container)
}
