use kiln::{App, FromRequestAsync, Rejection, RequestContext, Route};

#[derive(Route)]
#[route("/pong")]
struct Pong;

struct Board;

/// An async extractor for the app's state: `Option<Viewer>` is an argument.
struct Viewer;

impl FromRequestAsync<Board> for Viewer {
    async fn from_request_async(_: RequestContext<'_, Board>) -> Result<Self, Rejection> {
        Ok(Viewer)
    }
}

/// Neither kind of extractor: `Option<NotAnExtractor>` is not an argument either, and
/// the error says what it lacks.
struct NotAnExtractor;

async fn pong(_: Pong, _: Option<Viewer>, _: Option<NotAnExtractor>) -> &'static str {
    "PONG"
}

fn main() {
    let _ = App::new(|_| Board).route(pong);
}
