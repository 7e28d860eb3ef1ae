//! The drift check (`kiln::openapi::compare`, `assert_matches`): two versions of one
//! app, each change classified as breaking or additive.
#![cfg(feature = "openapi")]

use kiln::openapi::{ChangeKind, JsonSchema, assert_matches, compare};
use kiln::{App, Json, Route};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Saves a note.
#[derive(Route)]
#[route(POST, "/notes")]
struct SaveNote;

/// Lists the notes.
#[derive(Route)]
#[route("/notes")]
struct ListNotes;

mod v1 {
    use super::*;

    #[derive(Deserialize, Serialize, JsonSchema)]
    #[schemars(crate = "kiln::openapi::schemars")]
    pub(super) struct Note {
        pub(super) text: String,
        pub(super) author: String,
    }

    async fn save(_: SaveNote, Json(note): Json<Note>) -> Json<Note> {
        Json(note)
    }

    async fn list(_: ListNotes) -> Json<Vec<Note>> {
        Json(Vec::new())
    }

    pub(super) fn app() -> App<()> {
        App::new(|_| ()).api(save).api(list)
    }
}

/// `author` is a number now.
mod changed_type {
    use super::*;

    #[derive(Deserialize, Serialize, JsonSchema)]
    #[schemars(crate = "kiln::openapi::schemars")]
    pub(super) struct Note {
        pub(super) text: String,
        pub(super) author: u64,
    }

    async fn save(_: SaveNote, Json(note): Json<Note>) -> Json<Note> {
        Json(note)
    }

    async fn list(_: ListNotes) -> Json<Vec<Note>> {
        Json(Vec::new())
    }

    pub(super) fn app() -> App<()> {
        App::new(|_| ()).api(save).api(list)
    }
}

/// An optional `tag`, and no listing.
mod added_field {
    use super::*;

    #[derive(Deserialize, Serialize, JsonSchema)]
    #[schemars(crate = "kiln::openapi::schemars")]
    pub(super) struct Note {
        pub(super) text: String,
        pub(super) author: String,
        pub(super) tag: Option<String>,
    }

    async fn save(_: SaveNote, Json(note): Json<Note>) -> Json<Note> {
        Json(note)
    }

    pub(super) fn app(with_list: bool) -> App<()> {
        let app = App::new(|_| ()).api(save);
        if with_list { app.api(list) } else { app }
    }

    async fn list(_: ListNotes) -> Json<Vec<Note>> {
        Json(Vec::new())
    }
}

/// A new required field.
mod required_field {
    use super::*;

    #[derive(Deserialize, Serialize, JsonSchema)]
    #[schemars(crate = "kiln::openapi::schemars")]
    pub(super) struct Note {
        pub(super) text: String,
        pub(super) author: String,
        pub(super) title: String,
    }

    async fn save(_: SaveNote, Json(note): Json<Note>) -> Json<Note> {
        Json(note)
    }

    async fn list(_: ListNotes) -> Json<Vec<Note>> {
        Json(Vec::new())
    }

    pub(super) fn app() -> App<()> {
        App::new(|_| ()).api(save).api(list)
    }
}

fn json(app: App<()>) -> Value {
    app.openapi().into_json()
}

fn lines(changes: &[kiln::openapi::Change]) -> Vec<String> {
    changes.iter().map(ToString::to_string).collect()
}

#[test]
fn a_changed_field_type_is_breaking() {
    let changes = compare(&json(v1::app()), &json(changed_type::app()));
    assert_eq!(
        lines(&changes),
        [
            "breaking: GET /notes response 200 application/json [].author: type changed from string to integer",
            "breaking: POST /notes request body application/json .author: type changed from string to integer",
            "breaking: POST /notes response 200 application/json .author: type changed from string to integer",
        ]
    );
}

#[test]
fn an_added_optional_field_and_a_new_operation_are_additive() {
    let changes = compare(&json(v1::app()), &json(added_field::app(true)));
    assert!(changes.iter().all(|c| c.kind == ChangeKind::Additive), "{changes:#?}");
    assert!(
        lines(&changes)
            .contains(&"additive: POST /notes request body application/json .tag: a new optional field".to_owned())
    );
    assert!(
        lines(&changes).contains(&"additive: GET /notes response 200 application/json [].tag: a new field".to_owned())
    );
    let grown = compare(&json(added_field::app(false)), &json(added_field::app(true)));
    assert_eq!(lines(&grown), ["additive: GET /notes: the operation is new"]);
}

#[test]
fn a_removed_operation_and_a_new_required_input_are_breaking() {
    let removed = compare(&json(added_field::app(true)), &json(added_field::app(false)));
    assert_eq!(lines(&removed), ["breaking: GET /notes: the operation is removed"]);
    let required = compare(&json(v1::app()), &json(required_field::app()));
    let breaking: Vec<_> = required.iter().filter(|c| c.kind == ChangeKind::Breaking).collect();
    assert_eq!(breaking.len(), 1, "{required:#?}");
    assert_eq!(
        breaking[0].to_string(),
        "breaking: POST /notes request body application/json .title: a new required field"
    );
}

#[test]
fn assert_matches_passes_an_additive_change_and_returns_it() {
    let dir = std::env::temp_dir().join(format!("kiln-openapi-drift-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let committed = dir.join("additive.json");
    std::fs::write(&committed, v1::app().openapi().to_pretty_string()).unwrap();
    assert!(assert_matches(&v1::app().openapi(), &committed).is_empty());
    let additive = assert_matches(&added_field::app(true).openapi(), &committed);
    assert!(!additive.is_empty() && additive.iter().all(|c| c.kind == ChangeKind::Additive));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn assert_matches_fails_a_breaking_change_with_a_readable_diff() {
    let dir = std::env::temp_dir().join(format!("kiln-openapi-drift-breaking-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let committed = dir.join("breaking.json");
    std::fs::write(&committed, v1::app().openapi().to_pretty_string()).unwrap();
    let doc = changed_type::app().openapi();
    let failure = std::panic::catch_unwind(|| assert_matches(&doc, &committed)).unwrap_err();
    let message = failure.downcast_ref::<String>().expect("a formatted message");
    assert!(message.contains("the API breaks its committed contract"), "{message}");
    assert!(
        message.contains(
            "  breaking: POST /notes request body application/json .author: type changed from string to integer"
        ),
        "{message}"
    );
    assert!(message.contains("KILN_OPENAPI_UPDATE=1"), "{message}");
    std::fs::remove_dir_all(&dir).unwrap();
}
