//! Rendering once per distinct state (issue 31, item 4): views that give a
//! `LiveView::render_key` share one rendering and one message with the other views of
//! their type in the same state on a worker; views without one render their own.

use std::cell::Cell;

use kiln::live::{HandleInfo, Live, LiveSocket, LiveTest, LiveView};
use kiln::{Rejection, RequestContext, Route, live_html};

#[derive(Route)]
#[route("/board")]
struct BoardPage;

thread_local! {
    /// How many times a `Board` rendered on this test's thread.
    static RENDERS: Cell<u32> = const { Cell::new(0) };
}

fn renders() -> u32 {
    RENDERS.with(Cell::get)
}

/// A shared score (the same for every page, bumped by a message) and a per-page
/// choice (`wide`) that the markup reads too.
struct Board {
    score: u64,
    wide: bool,
    keyed: bool,
}

/// The shared score went up.
struct Bump;

/// A message that changes nothing the page shows.
struct Noop;

impl Board {
    fn new(keyed: bool) -> Self {
        Board { score: 0, wide: false, keyed }
    }
}

impl LiveView for Board {
    type AppState = ();
    type Route = BoardPage;
    type Event = ();

    async fn mount(_: BoardPage, _: RequestContext<'_, ()>) -> Result<Self, Rejection> {
        Ok(Board::new(true))
    }

    fn handle(&mut self, (): (), _: &mut LiveSocket<Self>) {
        self.wide = !self.wide;
    }

    fn render_key(&self) -> Option<u64> {
        self.keyed.then_some(self.score * 2 + u64::from(self.wide))
    }

    fn render(&self) -> Live<()> {
        RENDERS.with(|r| r.set(r.get() + 1));
        live_html! {
            div.wide[self.wide] { p { "Score: " (self.score) } @if self.score > 1 { p.hot { "hot" } } }
        }
    }
}

impl HandleInfo<Bump> for Board {
    fn handle_info(&mut self, Bump: Bump, _: &mut LiveSocket<Self>) {
        self.score += 1;
    }
}

impl HandleInfo<Noop> for Board {
    fn handle_info(&mut self, Noop: Noop, _: &mut LiveSocket<Self>) {}
}

#[test]
fn live_shared_two_views_in_one_state_render_once_and_send_one_message() {
    let mut a = LiveTest::new(Board::new(true));
    let mut b = LiveTest::new(Board::new(true));
    assert_eq!(renders(), 1, "the second mount takes the first one's rendering");
    assert_eq!(a.mount_message(), b.mount_message());

    let (before, diff_a) = (renders(), a.info(Bump));
    let diff_b = b.info(Bump);
    assert_eq!(renders() - before, 1, "one rendering for the two views");
    assert_eq!(diff_a.as_str(), Some("1=1"));
    assert_eq!(diff_a, diff_b);
    // Each page still rebuilds the server's page from what it was sent (LiveTest checks).
    assert_eq!(a.html(), b.html());

    // A branch whose statics these pages never got: each is sent them.
    a.info(Bump);
    let diff = b.info(Bump);
    assert!(diff.as_str().is_some_and(|d| d.contains(r#""s":["<p class=\"hot\">hot</p>"]"#)), "{diff}");
    assert_eq!(a.html(), b.html());
}

#[test]
fn live_shared_views_in_different_states_render_their_own() {
    let mut a = LiveTest::new(Board::new(true));
    let mut b = LiveTest::new(Board::new(true));
    b.event(());
    let before = renders();
    let (diff_a, diff_b) = (a.info(Bump), b.info(Bump));
    assert_eq!(renders() - before, 2, "two states, two renderings");
    assert_eq!((diff_a.as_str(), diff_b.as_str()), (Some("1=1"), Some("1=1")));
    assert!(b.html().contains(r#"class="wide""#) && !a.html().contains("wide"));
}

#[test]
fn live_shared_a_view_whose_key_did_not_change_is_not_rendered() {
    let mut a = LiveTest::new(Board::new(true));
    let before = renders();
    assert!(a.info(Noop).is_empty());
    assert_eq!(renders(), before);
}

#[test]
fn live_shared_a_view_without_a_key_renders_each_time() {
    let mut a = LiveTest::new(Board::new(false));
    let mut b = LiveTest::new(Board::new(false));
    assert_eq!(renders(), 2);
    let (diff_a, diff_b) = (a.info(Bump), b.info(Bump));
    assert_eq!(renders(), 4);
    assert_eq!(diff_a, diff_b);
    assert!(a.info(Noop).is_empty());
    assert_eq!(renders(), 5, "rendered to find nothing changed");
}
