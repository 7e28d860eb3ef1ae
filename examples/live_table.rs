//! A sortable, filterable table as a live view: `cargo run --example live_table`, then
//! open <http://127.0.0.1:3000/players>. Each reader sorts (a click on a column) and
//! filters (typing, debounced) for themselves; the rows are keyed, so a sort is sent
//! as moves and a filter as removes and inserts, never the table whole. A score posted
//! to `POST /players/{id}/score/{score}` reaches every open table over the bus, as
//! that one row's changed cell.

use kiln::live::{HandleInfo, Live, LiveSocket, LiveView};
use kiln::markup::{Document, ExternalUrl, Flow, Fragment, PreEscaped};
use kiln::realtime::{Bus, LocalBus, Message};
use kiln::{App, Key, Rejection, RequestContext, Route, State, html, live_html};
use serde::{Deserialize, Serialize};

/// Rows in the table.
const PLAYERS: u32 = 100;
/// The bus topic of score changes: `id score`.
const SCORES: &str = "scores";

/// Dims the view while its socket is down (the client script sets the class).
const STYLE: &str = ".kiln-disconnected { opacity: 0.5 } td.score { font-weight: bold }";

#[derive(Route)]
#[route("/players")]
pub(crate) struct PlayersPage;

#[derive(Route)]
#[route(POST, "/players/{id}/score/{score}")]
pub(crate) struct PostScore {
    id: u32,
    score: u32,
}

#[derive(Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Column {
    Name,
    Score,
}

/// The filter form's field.
#[derive(Deserialize)]
pub(crate) struct Filter {
    q: String,
}

#[derive(Serialize, Deserialize)]
pub(crate) enum Event {
    Sort(Column),
    #[serde(skip_serializing)]
    Filter(Filter),
}

struct Player {
    id: u32,
    name: String,
    score: u32,
}

pub(crate) struct Table {
    bus: LocalBus,
    players: Vec<Player>,
    sort: Column,
    filter: String,
}

impl Table {
    /// The rows this reader sees, in this reader's order.
    fn visible(&self) -> Vec<&Player> {
        let mut rows: Vec<&Player> = self.players.iter().filter(|p| p.name.contains(&self.filter)).collect();
        match self.sort {
            Column::Name => rows.sort_by(|a, b| a.name.cmp(&b.name)),
            Column::Score => rows.sort_by(|a, b| b.score.cmp(&a.score).then(a.id.cmp(&b.id))),
        }
        rows
    }
}

impl LiveView for Table {
    type AppState = LocalBus;
    type Route = PlayersPage;
    type Event = Event;

    async fn mount(_: PlayersPage, cx: RequestContext<'_, LocalBus>) -> Result<Self, Rejection> {
        // A real app loads them from its database here.
        let players =
            (0..PLAYERS).map(|id| Player { id, name: format!("player-{id:02}"), score: id * 37 % 101 }).collect();
        Ok(Table { bus: LocalBus::clone(cx.state()), players, sort: Column::Name, filter: String::new() })
    }

    fn connected(&mut self, socket: &mut LiveSocket<Self>) {
        socket.subscribe::<Message>(self.bus.subscribe(SCORES));
    }

    fn handle(&mut self, event: Event, _: &mut LiveSocket<Self>) {
        match event {
            Event::Sort(column) => self.sort = column,
            Event::Filter(filter) => self.filter = filter.q,
        }
    }

    fn page(&self, view: Fragment<Flow>) -> Fragment<Document> {
        html! {
            html lang="en" {
                head {
                    meta charset="utf-8";
                    title { "Players" }
                    // No icon, so that the browser asks for none.
                    link rel="icon" href=(ExternalUrl("data:,"));
                    style { (PreEscaped(STYLE)) }
                }
                body { (view) }
            }
        }
    }

    fn render(&self) -> Live<Event> {
        live_html! {
            form on:input=(Event::Filter) {
                input type="search" name="q" placeholder="Filter by name" value=(self.filter);
            }
            table {
                thead {
                    tr {
                        th { button #by-name type="button" on:click=(Event::Sort(Column::Name)) { "Name" } }
                        th { button #by-score type="button" on:click=(Event::Sort(Column::Score)) { "Score" } }
                    }
                }
                tbody {
                    @for player in self.visible(); key = player.id {
                        tr { td { (player.name) } td.score[player.score > 90] { (player.score) } }
                    }
                }
            }
        }
    }
}

impl HandleInfo<Message> for Table {
    fn handle_info(&mut self, message: Message, _: &mut LiveSocket<Self>) {
        let Some((id, score)) = message.payload().split_once(' ') else { return };
        let (Ok(id), Ok(score)) = (id.parse::<u32>(), score.parse()) else { return };
        if let Some(player) = self.players.iter_mut().find(|p| p.id == id) {
            player.score = score;
        }
    }
}

/// Tells every open table of a new score.
async fn post_score(change: PostScore, bus: State<LocalBus>) -> Result<&'static str, Rejection> {
    if change.id >= PLAYERS {
        return Err(Rejection::custom(kiln::StatusCode::NOT_FOUND, "no such player"));
    }
    bus.publish(SCORES, &format!("{} {}", change.id, change.score))
        .await
        .map_err(|e| Rejection::custom(kiln::StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
    Ok("posted")
}

/// The app: the table's page and the scores' route, every worker on one bus.
pub(crate) fn app(key: Key) -> App<LocalBus> {
    let bus = Bus::new();
    App::new(move |_| bus.attach()).secret_key(key).live::<Table>().route(post_score)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().init();
    let key = match std::env::var("KILN_SECRET_KEY") {
        Ok(secret) => Key::new(secret)?,
        Err(_) => Key::generate(),
    };
    let server = kiln::http::Server::new().listen("127.0.0.1:3000");
    kiln::serve(app(key), server)?.run_until_signal()?;
    Ok(())
}
