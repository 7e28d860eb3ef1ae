//! A wiki page as a live view: the article is rendered once, in the first answer;
//! the discussion under it ([`Thread`]) lives on the server while the page is open.
//! A comment posted on any copy of the page, by the form over the page's socket or
//! by the plain form without JavaScript, is stored, then published on the page's bus
//! topic (`events.rs`); every open copy, on any instance (`Bus::postgres` carries it
//! across), reads the comments it lacks and is sent those, as keyed inserts. Without
//! JavaScript the page reads and posts as it always did.

use std::rc::Rc;

use kiln::live::{HandleInfo, Live, LiveSocket, LiveView};
use kiln::markup::{Document, Flow, Fragment};
use kiln::realtime::Message;
use kiln::{ClientAddr, Csrf, FromRequest, Rejection, RequestContext};

use super::comments;
use super::events::topic;
use super::layout;
use super::model::{self, Comment, Page};
use super::page_view::{self, CommentForm, Event, Thread};
use super::readers::{self, HEARTBEAT, Heartbeat, Presence, Readers, Said};
use super::routes::ShowPage;
use crate::state::Worker;

/// A wiki page, its discussion live.
pub(crate) struct Discussion {
    worker: Rc<Worker>,
    page_id: i64,
    /// The article, for the first answer only: a connected page drops it.
    article: Option<Page>,
    thread: Thread,
    csrf: Csrf,
    client: ClientAddr,
    /// Who else has the page open, once it is connected.
    readers: Option<Readers>,
}

/// The comments read again: once the page's subscription is up, so that none posted
/// between the first answer and the connection is missed, and on each new one.
struct Reloaded(Result<Vec<Comment>, String>);

/// How storing a comment the page posted ended.
struct Stored(Result<(), String>);

impl LiveView for Discussion {
    type AppState = Worker;
    type Route = ShowPage;
    type Event = Event;

    async fn mount(route: ShowPage, cx: RequestContext<'_, Worker>) -> Result<Self, Rejection> {
        let (csrf, client) = (Csrf::from_request(&cx)?, ClientAddr::from_request(&cx)?);
        let worker = Rc::clone(cx.state());
        let (page, comments) = futures_util::future::try_join(
            model::page(&worker.db, &route.slug),
            model::comments_of(&worker.db, &route.slug),
        )
        .await?;
        let thread = Thread {
            slug: route.slug,
            comments,
            csrf_token: csrf.token().to_owned(),
            form: CommentForm::default(),
            readers: None,
        };
        Ok(Discussion { worker, page_id: page.id, article: Some(page), thread, csrf, client, readers: None })
    }

    fn connected(&mut self, socket: &mut LiveSocket<Self>) {
        self.article = None;
        let (bus, slug) = (&self.worker.site.bus, &self.thread.slug);
        socket.subscribe::<Message>(bus.subscribe(&topic(slug)));
        self.reload(socket);
        // Subscribed before joining, so that every answer to the join is heard.
        let (bus, slug) = (&self.worker.site.bus, &self.thread.slug);
        socket.subscribe::<Presence>(bus.subscribe(&readers::topic(slug)));
        socket.every(HEARTBEAT, Heartbeat);
        let readers = Readers::new(bus, slug);
        socket.spawn(readers.say("join"));
        self.thread.readers = Some(readers.count());
        self.readers = Some(readers);
    }

    /// The copy goes: the others count one less at once, not after the heartbeat's
    /// staleness.
    fn disconnected(&mut self, socket: &mut LiveSocket<Self>) {
        if let Some(readers) = self.readers.take() {
            socket.spawn(readers.say("leave"));
        }
    }

    fn handle(&mut self, Event::Post(input): Event, socket: &mut LiveSocket<Self>) {
        let (author, body) = (input.author.unwrap_or_default(), input.body.unwrap_or_default());
        let refused = comments::check(Some(&author), Some(&body)).map_err(str::to_owned).and_then(
            // Only a comment that would be stored counts, as for the plain form.
            |()| self.worker.site.settings.comments.check_client(self.client).map_err(|e| comments::too_many(&e)),
        );
        if let Err(message) = refused {
            // Back in the form with what was typed (the client script emptied it).
            self.thread.form = CommentForm { author, body, error: Some(message) };
            return;
        }
        self.thread.form = CommentForm::default();
        // Shown once the bus brings it back, as every other copy of the page is shown it.
        let (worker, page_id, slug) = (Rc::clone(&self.worker), self.page_id, self.thread.slug.clone());
        socket.spawn(async move {
            let stored = comments::store(&worker, page_id, &slug, &author, &body).await;
            Stored(stored.map(drop).map_err(|e| e.to_string()))
        });
    }

    fn render(&self) -> Live<Event> {
        self.thread.render()
    }

    fn visitor(&self) -> Option<&Csrf> {
        Some(&self.csrf)
    }

    fn page(&self, view: Fragment<Flow>) -> Fragment<Document> {
        match &self.article {
            Some(article) => page_view::page(article, view),
            None => layout::page("", view),
        }
    }
}

/// A comment was posted: the bus carries it as HTML, for the event stream, so the
/// view reads the page's comments (one query, which a lost message cannot fool).
impl HandleInfo<Message> for Discussion {
    fn handle_info(&mut self, _: Message, socket: &mut LiveSocket<Self>) {
        self.reload(socket);
    }
}

impl HandleInfo<Reloaded> for Discussion {
    fn handle_info(&mut self, Reloaded(comments): Reloaded, _: &mut LiveSocket<Self>) {
        match comments {
            Ok(comments) => comments.into_iter().for_each(|c| self.add(c)),
            // The page keeps what it has; new comments still arrive.
            Err(e) => eprintln!("kiln-demo: comments of {} not read again: {e}", self.thread.slug),
        }
    }
}

impl HandleInfo<Stored> for Discussion {
    fn handle_info(&mut self, Stored(stored): Stored, _: &mut LiveSocket<Self>) {
        if let Err(e) = stored {
            eprintln!("kiln-demo: a comment on {} not stored: {e}", self.thread.slug);
            self.thread.form.error = Some("The comment could not be stored; please try again.".to_owned());
        }
    }
}

impl HandleInfo<Presence> for Discussion {
    fn handle_info(&mut self, presence: Presence, socket: &mut LiveSocket<Self>) {
        let Some(readers) = &mut self.readers else { return };
        if let Some(answer) = readers.heard(&presence) {
            socket.spawn(readers.say(answer));
        }
        self.thread.readers = Some(readers.count());
    }
}

impl HandleInfo<Heartbeat> for Discussion {
    fn handle_info(&mut self, Heartbeat: Heartbeat, socket: &mut LiveSocket<Self>) {
        let Some(readers) = &mut self.readers else { return };
        readers.expire();
        socket.spawn(readers.say("here"));
        self.thread.readers = Some(readers.count());
    }
}

impl HandleInfo<Said> for Discussion {
    fn handle_info(&mut self, Said: Said, _: &mut LiveSocket<Self>) {}
}

impl Discussion {
    /// Reads the page's comments again, beside the view.
    fn reload(&self, socket: &mut LiveSocket<Self>) {
        let (worker, slug) = (Rc::clone(&self.worker), self.thread.slug.clone());
        socket.spawn(async move { Reloaded(model::comments_of(&worker.db, &slug).await.map_err(|e| e.to_string())) });
    }

    /// Adds a comment in its place by id, once: the bus and a reload may both bring it.
    fn add(&mut self, comment: Comment) {
        let comments = &mut self.thread.comments;
        if let Err(at) = comments.binary_search_by_key(&comment.id, |c| c.id) {
            comments.insert(at, comment);
        }
    }
}

#[cfg(test)]
mod readers_tests {
    use std::time::Duration;

    use kiln::test::{TestClient, TestWebSocket};
    use kiln::ws::{CloseCode, Message};
    use serde_json::Value;

    use crate::state::Worker;

    /// A hang guard only.
    const WAIT: Duration = Duration::from_secs(10);

    /// Opens the page's live view as the client script does; gives its socket and
    /// the mount message.
    fn open(client: &mut TestClient<kiln::AppService<Worker>>, page: &str) -> (TestWebSocket, Value) {
        let html = client.get(page).text().to_owned();
        let token = html.split("data-kiln-token=\"").nth(1).and_then(|t| t.split('"').next()).expect("a live page");
        let protocols = format!("kiln-live, {token}");
        let mut socket = client.request("GET", page).header("Sec-WebSocket-Protocol", &protocols).websocket().unwrap();
        let mount = next(&mut socket);
        (socket, mount)
    }

    fn next(socket: &mut TestWebSocket) -> Value {
        match socket.recv(WAIT).expect("a message in time") {
            Some(Message::Text(text)) => serde_json::from_str(&text).expect("JSON"),
            other => panic!("expected a text message, got {other:?}"),
        }
    }

    /// Every string in a message: the slots' values and statics sent.
    fn strings(value: &Value) -> Vec<&str> {
        match value {
            Value::String(s) => vec![s.as_str()],
            Value::Array(items) => items.iter().flat_map(strings).collect(),
            Value::Object(fields) => fields.values().flat_map(strings).collect(),
            _ => Vec::new(),
        }
    }

    #[test]
    fn the_page_counts_its_open_copies_and_one_less_when_one_leaves() {
        let (client, _dir) = super::super::tests::client("readers");
        let mut client = client.keep_cookies();
        let (mut one, mount) = open(&mut client, "/pages/tour");
        assert!(strings(&mount).contains(&"1") && strings(&mount).contains(&" reader"), "alone: {mount}");

        // Only the count changes on the page while nobody posts: each message is one.
        let (mut two, _) = open(&mut client, "/pages/tour");
        let seen = next(&mut one);
        assert!(strings(&seen).contains(&"2") && strings(&seen).contains(&" readers"), "{seen}");
        let mut count = Value::Null;
        while !strings(&count).contains(&"2") {
            count = next(&mut two);
        }

        // Another page's readers are counted apart.
        let (_other, mount) = open(&mut client, "/pages/welcome");
        assert!(strings(&mount).contains(&"1"), "{mount}");

        two.close(CloseCode::NORMAL, "bye", WAIT).unwrap();
        let left = next(&mut one);
        assert!(strings(&left).contains(&"1"), "one less at once, not after a heartbeat: {left}");
    }
}
