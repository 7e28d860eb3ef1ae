// A form event names a variant of the view's own events: another enum's variant does not compile.
use kiln::live::{Live, LiveView};
use kiln::{Rejection, RequestContext, Route, live_html};
use serde::Deserialize;

#[derive(Route)]
#[route("/notes")]
struct NotesPage;

#[derive(Deserialize)]
struct Note {
    text: String,
}

#[derive(Deserialize)]
enum Event {
    Clear,
    Save(Note),
}

#[derive(Deserialize)]
enum OtherEvent {
    Save(Note),
}

/// Not `Deserialize`: a form's fields cannot decode into it.
struct Unreadable;

enum NotAForm {
    Keep(Unreadable),
}

struct Notes {
    notes: Vec<String>,
}

impl LiveView for Notes {
    type AppState = ();
    type Route = NotesPage;
    type Event = Event;

    async fn mount(_: NotesPage, _: RequestContext<'_, ()>) -> Result<Self, Rejection> {
        Ok(Notes { notes: Vec::new() })
    }

    fn handle(&mut self, event: Event, _: &mut kiln::live::LiveSocket<Self>) {
        match event {
            Event::Clear => self.notes.clear(),
            Event::Save(note) => self.notes.push(note.text),
        }
    }

    fn render(&self) -> Live<Event> {
        live_html! {
            form on:submit=(OtherEvent::Save) { button { "save" } }
        }
    }
}

fn main() {}
