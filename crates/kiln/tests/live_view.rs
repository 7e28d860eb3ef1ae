//! Live views through the public API, in process: a counter, a keyed table of 100
//! rows that each reader sorts and filters, and a chat fed by server messages. Each
//! test asserts on the page and on the diffs sent; `LiveTest` also rebuilds the page
//! from the wire alone after every message and checks it matches the server's.

use kiln::live::{HandleInfo, Live, LiveSocket, LiveTest, LiveView};
use kiln::{Rejection, RequestContext, Route, live_html};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Route)]
#[route("/counter")]
struct CounterPage;

#[derive(Debug, Serialize, Deserialize)]
enum CounterEvent {
    Increment,
    Add(u32),
}

struct Counter {
    title: &'static str,
    count: u32,
}

impl LiveView for Counter {
    type AppState = ();
    type Route = CounterPage;
    type Event = CounterEvent;

    async fn mount(_: CounterPage, _: RequestContext<'_, ()>) -> Result<Self, Rejection> {
        Ok(Counter { title: "Counter", count: 0 })
    }

    fn handle(&mut self, event: CounterEvent, _: &mut LiveSocket<Self>) {
        match event {
            CounterEvent::Increment => self.count += 1,
            CounterEvent::Add(n) => self.count += n,
        }
    }

    fn render(&self) -> Live<CounterEvent> {
        live_html! {
            section.counter {
                h1 { (self.title) }
                p.big[self.count > 9] { "Count: " (self.count) }
                button type="button" on:click=(CounterEvent::Increment) { "+1" }
                button type="button" on:click=(CounterEvent::Add(10)) { "+10" }
            }
        }
    }
}

#[test]
fn live_counter_click_sends_a_one_slot_diff() {
    let mut test = LiveTest::new(Counter { title: "Counter", count: 0 });
    let mount = test.mount_message().json().unwrap().clone();
    assert!(mount["f"].as_str().is_some_and(|f| f.len() == 16), "{mount}");
    assert!(mount["s"].as_array().is_some_and(|s| s.len() == 6), "{mount}");
    assert!(test.html().contains(r#"data-kiln-click="&quot;Increment&quot;""#), "{}", test.html());
    assert!(test.html().contains(r#"data-kiln-click="{&quot;Add&quot;:10}""#), "{}", test.html());

    // The page sends back what the button carries.
    let diff = test.client_event(r#"{"event":"Increment"}"#).unwrap();
    assert_eq!(diff.as_str(), Some("2=1"), "one slot: a leaf message");
    assert!(test.html().contains("<p>Count: 1</p>"));

    // `.big` toggles in the same slot as the class attribute, nothing else is sent.
    let diff = test.client_event(r#"{"event":{"Add":10}}"#).unwrap();
    assert_eq!(diff.json(), Some(&json!({"1": " class=\"big\"", "2": "11"})));
    assert_eq!(test.sent().len(), 2);
}

#[test]
fn live_counter_refuses_an_event_it_does_not_have() {
    let mut test = LiveTest::new(Counter { title: "Counter", count: 0 });
    for bad in [r#"{"event":"Decrement"}"#, r#"{"event":{"Add":-1}}"#, "{}", "[1]"] {
        let err = test.client_event(bad).unwrap_err();
        assert!(!err.message().is_empty(), "{bad}");
    }
    assert_eq!(test.view().count, 0);
    assert!(test.sent().is_empty());
}

#[test]
fn live_counter_unchanged_state_sends_nothing() {
    let mut test = LiveTest::new(Counter { title: "Counter", count: 0 });
    let diff = test.event(CounterEvent::Add(0));
    assert!(diff.is_empty());
    assert!(test.sent().is_empty());
}

#[derive(Route)]
#[route("/people")]
struct TablePage;

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum Column {
    Name,
    Score,
}

#[derive(Debug, Deserialize)]
struct Filter {
    q: String,
}

#[derive(Debug, Serialize, Deserialize)]
enum TableEvent {
    Sort(Column),
    /// A form event is never rendered as a value: its payload need not serialise.
    #[serde(skip_serializing)]
    Filter(Filter),
}

struct Person {
    id: u32,
    name: String,
    score: u32,
}

struct Table {
    people: Vec<Person>,
    sort: Column,
    filter: String,
}

/// The server pushes a changed score.
struct ScoreChanged {
    id: u32,
    score: u32,
}

impl LiveView for Table {
    type AppState = ();
    type Route = TablePage;
    type Event = TableEvent;

    async fn mount(_: TablePage, _: RequestContext<'_, ()>) -> Result<Self, Rejection> {
        Ok(table())
    }

    fn handle(&mut self, event: TableEvent, _: &mut LiveSocket<Self>) {
        match event {
            TableEvent::Sort(column) => self.sort = column,
            TableEvent::Filter(filter) => self.filter = filter.q,
        }
    }

    fn render(&self) -> Live<TableEvent> {
        let mut rows: Vec<&Person> = self.people.iter().filter(|p| p.name.contains(&self.filter)).collect();
        match self.sort {
            Column::Name => rows.sort_by(|a, b| a.name.cmp(&b.name)),
            Column::Score => rows.sort_by_key(|p| std::cmp::Reverse(p.score)),
        }
        live_html! {
            form on:input=(TableEvent::Filter) {
                input type="search" name="q" value=(self.filter);
            }
            table {
                thead {
                    tr {
                        th { button type="button" on:click=(TableEvent::Sort(Column::Name)) { "Name" } }
                        th { button type="button" on:click=(TableEvent::Sort(Column::Score)) { "Score" } }
                    }
                }
                tbody {
                    @for person in rows; key = person.id {
                        tr id=(format!("p{}", person.id)) { td { (person.name) } td.top[person.score > 90] { (person.score) } }
                    }
                }
            }
        }
    }
}

impl HandleInfo<ScoreChanged> for Table {
    fn handle_info(&mut self, change: ScoreChanged, _: &mut LiveSocket<Self>) {
        if let Some(person) = self.people.iter_mut().find(|p| p.id == change.id) {
            person.score = change.score;
        }
    }
}

fn table() -> Table {
    let people = (0..100)
        .map(|i| Person { id: i, name: format!("person {:02}", (i * 37) % 100), score: (i * 53) % 90 })
        .collect();
    Table { people, sort: Column::Name, filter: String::new() }
}

/// The diff of the table's list slot, wherever it sits in the message.
fn list_diff(diff: &Value) -> &serde_json::Map<String, Value> {
    fn find(value: &Value) -> Option<&serde_json::Map<String, Value>> {
        let object = value.as_object()?;
        if ["o", "r", "u", "d"].iter().any(|k| object.contains_key(*k)) {
            return Some(object);
        }
        object.values().find_map(find)
    }
    find(diff).unwrap_or_else(|| panic!("no list diff in {diff}"))
}

#[test]
fn live_table_sort_sends_moves_not_rows() {
    let mut test = LiveTest::new(table());
    let diff = test.event(TableEvent::Sort(Column::Score));
    let json = diff.json().unwrap();
    let list = list_diff(json);
    assert!(!list.contains_key("d") && !list.contains_key("r") && !list.contains_key("u"), "{json}");
    let ops = list["o"].as_array().unwrap();
    assert!(ops.iter().all(|op| op[0] == "m"), "{json}");
    assert!(ops.len() < 100);
    // A move is its key and anchor: a few bytes, no markup.
    assert!(!diff.to_json().unwrap().contains("<td"), "{json}");
    assert!(test.html().find("person 00").is_some());
}

#[test]
fn live_table_one_row_change_sends_that_rows_changed_slots_only() {
    let mut test = LiveTest::new(table());
    let diff = test.info(ScoreChanged { id: 42, score: 95 });
    assert_eq!(
        list_diff(diff.json().unwrap()),
        json!({"u": {"42": {"2": " class=\"top\"", "3": "95"}}}).as_object().unwrap()
    );
    let bytes = diff.to_json().unwrap().len();
    assert!(bytes <= "\"95\" class=\\\"top\\\"".len() + 40, "{bytes} bytes: {diff}");
    assert!(test.html().contains("<td class=\"top\">95</td>"));
}

#[test]
fn live_table_one_cell_change_is_a_leaf_message_through_the_rows_key() {
    let mut test = LiveTest::new(table());
    // Person 42's score is 66: 43 keeps it out of `.top`, so only the cell changes.
    let diff = test.info(ScoreChanged { id: 42, score: 43 });
    let path = diff.as_str().and_then(|text| text.strip_suffix("=43")).expect("a leaf message");
    assert!(path.ends_with(".42.3"), "the row's key, then its slot: {diff}");
    assert_eq!(list_diff(diff.json().unwrap()), json!({"u": {"42": {"3": "43"}}}).as_object().unwrap());
    assert!(test.html().contains("<td>43</td>"));
}

#[test]
fn live_table_filter_decodes_the_form_and_removes_rows() {
    let mut test = LiveTest::new(table());
    let diff = test.submit("Filter", "q=person+1").unwrap();
    let list = list_diff(diff.json().unwrap());
    assert_eq!(list["r"].as_array().unwrap().len(), 90, "{diff}");
    assert!(!list.contains_key("o") && !list.contains_key("u"));
    assert!(test.html().contains("value=\"person 1\""));
    assert_eq!(test.html().matches("<tr id=").count(), 10);

    // Clearing the filter inserts the rows back, each after its neighbour.
    let diff = test.submit("Filter", "q=").unwrap();
    let ops = list_diff(diff.json().unwrap())["o"].as_array().unwrap().clone();
    assert_eq!(ops.len(), 90);
    assert!(ops.iter().all(|op| op[0] == "i"));
    assert!(test.submit("Filter", "nothing=1").is_err(), "a form without `q` does not fit `Filter`");
}

#[derive(Route)]
#[route("/chat")]
struct ChatPage;

#[derive(Debug, Deserialize)]
struct Say {
    text: String,
}

#[derive(Debug, Deserialize)]
enum ChatEvent {
    Say(Say),
}

#[derive(Clone)]
struct Posted {
    id: u64,
    author: String,
    text: String,
}

struct Chat {
    me: String,
    messages: Vec<Posted>,
    outbox: Vec<String>,
}

impl LiveView for Chat {
    type AppState = ();
    type Route = ChatPage;
    type Event = ChatEvent;

    async fn mount(_: ChatPage, _: RequestContext<'_, ()>) -> Result<Self, Rejection> {
        Ok(Chat { me: "ann".into(), messages: Vec::new(), outbox: Vec::new() })
    }

    fn handle(&mut self, event: ChatEvent, _: &mut LiveSocket<Self>) {
        // What is said goes to the bus; it comes back to every reader as `Posted`.
        let ChatEvent::Say(say) = event;
        self.outbox.push(say.text);
    }

    fn render(&self) -> Live<ChatEvent> {
        live_html! {
            div.chat {
                ol {
                    @for m in &self.messages; key = m.id {
                        li.mine[m.author == self.me] { b { (m.author) } ": " (m.text) }
                    }
                }
                @if self.messages.is_empty() { p { "No messages yet." } }
                form on:submit=(ChatEvent::Say) {
                    input type="text" name="text";
                    button { "Send" }
                }
            }
        }
    }
}

impl HandleInfo<Posted> for Chat {
    fn handle_info(&mut self, posted: Posted, _: &mut LiveSocket<Self>) {
        self.messages.push(posted);
    }
}

#[test]
fn live_chat_bus_message_appends_by_insert() {
    let mut test = LiveTest::new(Chat { me: "ann".into(), messages: Vec::new(), outbox: Vec::new() });
    assert!(test.html().contains("data-kiln-submit=\"Say\""));
    let said = test.submit("Say", "text=hello+%3Cworld%3E").unwrap();
    assert!(said.is_empty(), "saying changes nothing until the bus brings it back: {said}");
    assert_eq!(test.view().outbox, ["hello <world>"]);

    let first = test.info(Posted { id: 1, author: "ann".into(), text: "hello <world>".into() });
    let json = first.json().unwrap();
    assert_eq!(json["0"], json!({"o": [["i", "1", null, [" class=\"mine\"", "ann", "hello &lt;world&gt;"]]]}));
    assert_eq!(json["1"]["f"].as_str().map(str::len), Some(16), "the empty branch replaces the notice: {json}");

    let second = test.info(Posted { id: 2, author: "bob".into(), text: "hi".into() });
    assert_eq!(second.json(), Some(&json!({"0": {"o": [["i", "2", "1", ["", "bob", "hi"]]]}})));
    assert!(test.html().contains("<li><b>bob</b>: hi</li>"));
}

#[derive(Route)]
#[route("/profiles/{id}")]
struct ProfilePage {
    id: usize,
}

#[derive(Debug, Serialize, Deserialize)]
enum ProfileEvent {
    Like,
}

/// A view mounted from the app's state and its route, with a layout of its own.
struct Profile {
    name: String,
    likes: u32,
}

impl LiveView for Profile {
    type AppState = Vec<String>;
    type Route = ProfilePage;
    type Event = ProfileEvent;

    async fn mount(route: ProfilePage, cx: RequestContext<'_, Vec<String>>) -> Result<Self, Rejection> {
        let name = cx.state().get(route.id).ok_or_else(|| kiln::rejection::NotFound::new("no such profile"))?;
        Ok(Profile { name: name.clone(), likes: 0 })
    }

    fn handle(&mut self, ProfileEvent::Like: ProfileEvent, _: &mut LiveSocket<Self>) {
        self.likes += 1;
    }

    fn render(&self) -> Live<ProfileEvent> {
        live_html! {
            h1 { (self.name) }
            button type="button" on:click=(ProfileEvent::Like) { (self.likes) " likes" }
        }
    }

    fn page(&self, view: kiln::markup::Fragment<kiln::markup::Flow>) -> kiln::markup::Fragment<kiln::markup::Document> {
        kiln::html! {
            html lang="en" {
                head { title { "Profile of " (self.name) } }
                body { main { (view) } }
            }
        }
    }
}

#[test]
fn live_page_first_answer_is_the_whole_page_on_its_typed_route() {
    let app = kiln::App::new(|_| vec!["ann".to_owned(), "<bob>".to_owned()])
        .secret_key(kiln::Key::generate())
        .live::<Profile>();
    let mut client = kiln::test::TestClient::new(app);
    let res = client.get(&ProfilePage { id: 1 });
    assert_eq!(res.status(), 200);
    assert_eq!(res.header("content-type"), Some("text/html; charset=utf-8"));
    let view = Profile { name: "<bob>".into(), likes: 0 };
    let fingerprint = format!("{:016x}", view.render().part().statics().fingerprint());
    // The container carries the page's token (checked by `live_socket.rs`) and is
    // followed by the client script.
    let text = res.text();
    let (head, rest) = text.split_once(" data-kiln-token=\"").expect("a token");
    let (_token, rest) = rest.split_once('"').expect("the token ends");
    assert_eq!(
        head,
        format!(
            "<!DOCTYPE html><html lang=\"en\"><head><title>Profile of &lt;bob&gt;</title></head><body><main>\
             <div data-kiln-live=\"{fingerprint}\""
        )
    );
    let (view_html, script) = rest.split_once("</div>").expect("the container ends");
    assert_eq!(
        view_html,
        "><h1>&lt;bob&gt;</h1><button type=\"button\" data-kiln-click=\"&quot;Like&quot;\">0 likes</button>"
    );
    assert!(
        script.starts_with("<script src=\"/_kiln/live.") && script.ends_with("</script></main></body></html>"),
        "{script}"
    );
    // Joined statics and slots are what the test harness shows for the same state.
    assert!(res.text().contains(&LiveTest::new(view).html()));

    assert_eq!(client.get(&ProfilePage { id: 7 }).status(), 404, "mount's rejection answers");
    assert_eq!(client.get("/profiles/x").status(), 404);
}

#[derive(Route)]
#[route("/items")]
struct ItemsPage;

/// A keyed list changed at random by the test, through `update`-like messages.
struct Items {
    items: Vec<(u32, String, bool)>,
}

#[derive(Debug, Deserialize)]
enum NoEvent {}

impl LiveView for Items {
    type AppState = ();
    type Route = ItemsPage;
    type Event = NoEvent;

    async fn mount(_: ItemsPage, _: RequestContext<'_, ()>) -> Result<Self, Rejection> {
        Ok(Items { items: Vec::new() })
    }

    fn handle(&mut self, event: NoEvent, _: &mut LiveSocket<Self>) {
        match event {}
    }

    fn render(&self) -> Live<NoEvent> {
        live_html! {
            ul {
                @for (id, text, open) in &self.items; key = id {
                    li.open[*open] { (text) @if *open { " " b { (id) } } }
                }
            }
            p { (self.items.len()) " items" }
        }
    }
}

impl HandleInfo<Vec<(u32, String, bool)>> for Items {
    fn handle_info(&mut self, items: Vec<(u32, String, bool)>, _: &mut LiveSocket<Self>) {
        self.items = items;
    }
}

/// A small deterministic generator (64-bit LCG), so that the run is the same each time.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

#[test]
fn live_keyed_list_survives_random_moves_inserts_removes_and_edits() {
    let mut rng = Lcg(31);
    let mut next_id = 0;
    let mut items: Vec<(u32, String, bool)> = Vec::new();
    let mut test = LiveTest::new(Items { items: items.clone() });
    for step in 0..300 {
        for _ in 0..rng.below(4) {
            let at = rng.below(items.len() + 1);
            items.insert(at, (next_id, format!("item <{next_id}>"), rng.below(2) == 0));
            next_id += 1;
        }
        for _ in 0..rng.below(3) {
            if !items.is_empty() {
                items.remove(rng.below(items.len()));
            }
        }
        for _ in 0..rng.below(3) {
            if items.len() > 1 {
                let item = items.remove(rng.below(items.len()));
                items.insert(rng.below(items.len() + 1), item);
            }
        }
        if !items.is_empty() && rng.below(2) == 0 {
            let at = rng.below(items.len());
            items[at].1 = format!("edited at {step}");
            items[at].2 = !items[at].2;
        }
        // `LiveTest` rebuilds the page from the diff and checks it against the server's.
        let diff = test.info(items.clone());
        let sent = diff.to_json().unwrap_or_default();
        assert!(!sent.contains("\"d\""), "a keyed list is never sent whole: {sent}");
    }
    assert!(test.sent().len() > 250);
}

/// A save that awaits its store (a database insert in an app): the event starts the
/// work, the result comes back as a message.
#[derive(Route)]
#[route("/note")]
struct NotePage;

#[derive(Serialize, Deserialize)]
enum NoteEvent {
    Save,
}

struct Note {
    store: Option<tokio::sync::oneshot::Receiver<u64>>,
    saved: Option<u64>,
    ticks: u32,
}

/// The id the store gave the note.
struct Saved(u64);

#[derive(Clone)]
struct NoteTick;

impl LiveView for Note {
    type AppState = ();
    type Route = NotePage;
    type Event = NoteEvent;

    async fn mount(_: NotePage, _: RequestContext<'_, ()>) -> Result<Self, Rejection> {
        Ok(Note { store: None, saved: None, ticks: 0 })
    }

    fn connected(&mut self, socket: &mut LiveSocket<Self>) {
        socket.after(std::time::Duration::from_millis(1), NoteTick);
    }

    fn handle(&mut self, NoteEvent::Save: NoteEvent, socket: &mut LiveSocket<Self>) {
        if let Some(store) = self.store.take() {
            socket.spawn(async move { Saved(store.await.expect("the store answers")) });
        }
    }

    fn render(&self) -> Live<NoteEvent> {
        live_html! {
            @match self.saved { Some(id) => p { "saved as " (id) } None => p { "unsaved" } }
            p { (self.ticks) }
        }
    }
}

impl HandleInfo<Saved> for Note {
    fn handle_info(&mut self, Saved(id): Saved, _: &mut LiveSocket<Self>) {
        self.saved = Some(id);
    }
}

impl HandleInfo<NoteTick> for Note {
    fn handle_info(&mut self, NoteTick: NoteTick, _: &mut LiveSocket<Self>) {
        self.ticks += 1;
    }
}

#[tokio::test]
async fn live_test_runs_the_work_an_event_spawns_and_delivers_its_result() {
    let (store, stored) = tokio::sync::oneshot::channel();
    let mut test = LiveTest::new(Note { store: Some(stored), saved: None, ticks: 0 });
    assert!(test.event(NoteEvent::Save).is_empty(), "nothing changes until the work is done");
    store.send(7).unwrap();
    let diff = tokio::time::timeout(std::time::Duration::from_secs(10), test.push()).await.expect("the work ends");
    assert!(diff.to_json().unwrap().contains("saved as "), "{diff:?}");
    assert!(test.html().contains("<p>saved as 7</p>"));
}

#[tokio::test]
async fn live_test_connect_runs_connected_and_delivers_its_timers() {
    let mut test = LiveTest::connect(Note { store: None, saved: None, ticks: 0 });
    let diff = tokio::time::timeout(std::time::Duration::from_secs(10), test.push()).await.expect("the timer fires");
    assert_eq!(diff.as_str(), Some("1=1"));
}
