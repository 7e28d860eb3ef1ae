//! A live view inside a page of the app's own: a handler renders the page (and
//! decides who may see it, as any handler does), and the view sits in it, its socket
//! on the view's own route ([`App::live`](crate::App::live)).

use std::time::SystemTime;

use crate::csrf::Csrf;
use crate::extract::{FromRequest, RequestContext};
use crate::key::Key;
use crate::live::page::{claims, container};
use crate::live::token;
use crate::live::view::LiveView;
use crate::markup::{Flow, Fragment};
use crate::rejection::Rejection;
use crate::signed::app_key;

/// What a handler needs to put a live view into its page: the app's key, which signs
/// the view's token. The view's route must be registered with
/// [`App::live`](crate::App::live): the page's socket connects there (the token
/// names it), and the view is mounted again there from the socket's request.
///
/// ```
/// use kiln::live::{Embed, Live, LiveSocket, LiveView};
/// use kiln::markup::{Document, Fragment};
/// use kiln::{App, Csrf, Key, Rejection, RequestContext, Route, html, live_html};
///
/// #[derive(Route)]
/// #[route("/clock")]
/// struct ClockView;
///
/// #[derive(Route)]
/// #[route("/")]
/// struct Home;
///
/// struct Clock;
///
/// impl LiveView for Clock {
///     type AppState = ();
///     type Route = ClockView;
///     type Event = ();
///
///     async fn mount(_: ClockView, _: RequestContext<'_, ()>) -> Result<Self, Rejection> {
///         Ok(Clock)
///     }
///
///     fn handle(&mut self, (): (), _: &mut LiveSocket<Self>) {}
///
///     fn render(&self) -> Live<()> {
///         live_html! { p { "tick" } }
///     }
/// }
///
/// async fn home(_: Home, embed: Embed, csrf: Csrf) -> (Csrf, Fragment<Document>) {
///     let clock = embed.view(&Clock, &ClockView, &csrf);
///     (csrf, html! { html lang="en" { head { meta charset="utf-8"; title { "Home" } } body { h1 { "Home" } (clock) } } })
/// }
///
/// let app = App::new(|_| ()).secret_key(Key::generate()).live::<Clock>().route(home);
/// let page = kiln::test::TestClient::new(app).get("/").text();
/// assert!(page.contains(r#"data-kiln-path="/clock""#) && page.contains("<p>tick</p>"), "{page}");
/// ```
pub struct Embed {
    key: Key,
}

impl<S> FromRequest<S> for Embed {
    const NEEDS_SECRET_KEY: Option<&'static str> = Some("Embed");

    fn from_request(cx: &RequestContext<'_, S>) -> Result<Self, Rejection> {
        Ok(Embed { key: app_key(cx.config(), "Embed")?.clone() })
    }
}

impl Embed {
    /// `view` rendered in its container, with the token of its socket (on `route`,
    /// for `visitor`: the handler's [`Csrf`], whose cookie the handler's answer sets
    /// when new) and the client script after it.
    pub fn view<V: LiveView>(&self, view: &V, route: &V::Route, visitor: &Csrf) -> Fragment<Flow> {
        let path = route.to_string();
        let token = token::issue(&self.key, &claims::<V>(&path, visitor), V::LIMITS.token_ttl, SystemTime::now());
        container(view, &token, Some(&path))
    }
}
