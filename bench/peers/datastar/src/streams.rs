//! The SSE endpoint of each page: the stream its `data-init` opens. It first patches in the
//! page's live part as it is now, then, for every change published on the state's broadcast
//! channel, a patch of what that change alters for this reader (`datastar-patch-elements`,
//! written by the SDK). No keep-alive comments: an idle stream sends nothing.

use std::convert::Infallible;
use std::sync::Arc;

use asynk_strim::{stream_fn, Yielder};
use axum::extract::State;
use axum::response::sse::{Event, Sse};
use axum::response::IntoResponse;
use datastar::axum::ReadSignals;
use datastar::prelude::{ElementPatchMode, PatchElements};
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;

use crate::render;
use crate::state::{Row, Shared, ROOM_LINES};

type Out = Yielder<Result<Event, Infallible>>;

async fn patch(out: &mut Out, patch: PatchElements) {
    out.yield_item(Ok(patch.write_as_axum_sse_event())).await;
}

/// `GET /bench/live/counter/updates`: the count, then each new count.
pub async fn counter(State(shared): State<Arc<Shared>>) -> impl IntoResponse {
    Sse::new(stream_fn(move |mut out: Out| async move {
        let mut counts = shared.counts();
        patch(&mut out, PatchElements::new(render::count(shared.count()))).await;
        loop {
            let now = match counts.recv().await {
                Ok(now) => now,
                Err(RecvError::Lagged(_)) => shared.count(),
                Err(RecvError::Closed) => return,
            };
            patch(&mut out, PatchElements::new(render::count(now))).await;
        }
    }))
}

/// One reader's table signals: the column it sorts by, which way, and its name filter.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct View {
    sort: String,
    desc: bool,
    filter: String,
}

impl View {
    fn shows(&self, row: &Row) -> bool {
        row.name.contains(&self.filter)
    }

    /// The table's body for this reader: its rows, filtered and sorted.
    fn body(&self, rows: &[Row]) -> String {
        let mut shown: Vec<&Row> = rows.iter().filter(|row| self.shows(row)).collect();
        shown.sort_by(|a, b| {
            let by = match self.sort.as_str() {
                "name" => a.name.cmp(&b.name),
                "score" => a.score.cmp(&b.score).then(a.id.cmp(&b.id)),
                "team" => a.team.cmp(&b.team).then(a.id.cmp(&b.id)),
                _ => a.id.cmp(&b.id),
            };
            if self.desc {
                by.reverse()
            } else {
                by
            }
        });
        render::rows(shown)
    }
}

/// The page's table body as a reader with the default signals sees it.
pub fn default_body(rows: &[Row]) -> String {
    View::default().body(rows)
}

/// `GET /bench/live/table/updates?datastar={sort,desc,filter}`: the reader's table body, then
/// for each change the changed row (patched by its id) if the reader shows it, or the whole
/// body again when the reader sorts by score (the row may move).
pub async fn table(State(shared): State<Arc<Shared>>, signals: Option<ReadSignals<View>>) -> impl IntoResponse {
    let view = signals.map(|ReadSignals(view)| view).unwrap_or_default();
    Sse::new(stream_fn(move |mut out: Out| async move {
        let mut scores = shared.scores();
        patch(&mut out, PatchElements::new(view.body(&shared.rows()))).await;
        loop {
            let fragment = match scores.recv().await {
                Ok(row) if !view.shows(&row) => continue,
                Ok(row) if view.sort != "score" => {
                    let mut fragment = String::new();
                    render::row(&row, &mut fragment);
                    fragment
                }
                Ok(_) | Err(RecvError::Lagged(_)) => view.body(&shared.rows()),
                Err(RecvError::Closed) => return,
            };
            patch(&mut out, PatchElements::new(fragment)).await;
        }
    }))
}

/// `GET /bench/live/chat/updates`: the room, then each new line appended to it (and, once the
/// reader's list holds 50, its oldest line removed).
pub async fn chat(State(shared): State<Arc<Shared>>) -> impl IntoResponse {
    Sse::new(stream_fn(move |mut out: Out| async move {
        let mut said = shared.said();
        let lines = shared.lines();
        let mut shown = lines.len();
        patch(&mut out, PatchElements::new(render::room(&lines))).await;
        loop {
            match said.recv().await {
                Ok(line) => {
                    let mut fragment = String::new();
                    render::line(&line, &mut fragment);
                    patch(&mut out, PatchElements::new(fragment).selector("#chat").mode(ElementPatchMode::Append))
                        .await;
                    if shown == ROOM_LINES {
                        let oldest = line.seq - ROOM_LINES as u64;
                        patch(&mut out, PatchElements::new_remove(format!("#line-{oldest}"))).await;
                    } else {
                        shown += 1;
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    let lines = shared.lines();
                    shown = lines.len();
                    patch(&mut out, PatchElements::new(render::room(&lines))).await;
                }
                Err(RecvError::Closed) => return,
            }
        }
    }))
}
