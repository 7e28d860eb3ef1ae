//! The to-do app both `todo_sqlite` and `todo_postgres` run: a list, a form to add to
//! it (with a CSRF token), and a button to mark an item done. Database errors are
//! rendered by `?` (a missing item is a 404).

use kiln::db::{Db, FromRow};
use kiln::markup::{Document, Flow, Fragment};
use kiln::{App, Csrf, CsrfGuard, Form, Key, Redirect, Rejection, Route, State, html};
use serde::Deserialize;

#[derive(Route)]
#[route("/")]
pub(crate) struct Home;

#[derive(Route)]
#[route(POST, "/todos")]
pub(crate) struct AddTodo;

#[derive(Route)]
#[route(POST, "/todos/{id}/done")]
pub(crate) struct MarkDone {
    pub(crate) id: i64,
}

#[derive(FromRow)]
struct Todo {
    id: i64,
    title: String,
    done: bool,
}

#[derive(Deserialize)]
struct NewTodo {
    title: String,
}

fn page(content: Fragment<Flow>) -> Fragment<Document> {
    html! {
        html lang="en" {
            head { meta charset="utf-8"; title { "To do" } }
            body { h1 { "To do" } (content) }
        }
    }
}

async fn home(_: Home, db: State<Db>, csrf: Csrf) -> Result<(Csrf, Fragment<Document>), Rejection> {
    let todos: Vec<Todo> = db.query_all("SELECT id, title, done FROM todos ORDER BY id", &[]).await?;
    let list = html! {
        ul {
            @for todo in &todos {
                li {
                    @if todo.done {
                        s { (todo.title) }
                    } @else {
                        (todo.title) " "
                        form method="post" action=(MarkDone { id: todo.id }) {
                            (csrf.field())
                            button type="submit" { "Done" }
                        }
                    }
                }
            }
        }
        form method="post" action=(AddTodo) {
            (csrf.field())
            input name="title" required;
            button type="submit" { "Add" }
        }
    };
    Ok((csrf, page(list)))
}

async fn add(_: AddTodo, _: CsrfGuard, db: State<Db>, Form(new): Form<NewTodo>) -> Result<Redirect, Rejection> {
    db.insert("INSERT INTO todos (title) VALUES ($1)", &[&new.title]).await?;
    Ok(Redirect::to(&Home))
}

async fn mark_done(route: MarkDone, _: CsrfGuard, db: State<Db>) -> Result<Redirect, Rejection> {
    // `RETURNING` so that a missing item is `NotFound`: a 404.
    let (_,): (i64,) = db.query_one("UPDATE todos SET done = TRUE WHERE id = $1 RETURNING id", &[&route.id]).await?;
    Ok(Redirect::to(&Home))
}

/// The app on `db`'s workers.
pub(crate) fn app(database: kiln::db::Database, key: Key) -> App<Db> {
    App::new(move |_worker| database.worker()).secret_key(key).route(home).route(add).route(mark_done)
}
