//! The HTML: the three whole pages (what a GET of the page answers) and the fragments their
//! streams patch in. A page is written for the Datastar client 1.0 that the SDK speaks to
//! (`data-init`, `data-on:`, `data-bind:`, `data-signals`), as in the SDK's examples.

use std::fmt::Write;

use crate::state::{Line, Row};

/// Where every page loads the Datastar client from (served by this peer, see main.rs).
const CLIENT: &str = "/static/datastar.js";

fn page(title: &str, body: &str) -> String {
    format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<script type="module" src="{CLIENT}"></script>
</head>
{body}
</html>
"#
    )
}

/// `&`, `<`, `>`, `"` and `'` as entities: chat lines are the readers' own text.
pub fn escape(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// The counter's element that each change replaces.
pub fn count(count: u64) -> String {
    format!(r#"<span id="count">{count}</span>"#)
}

/// `/bench/live/counter`: the stream opens on load; the button posts the trigger.
pub fn counter_page(now: u64) -> String {
    page(
        "Counter",
        &format!(
            r#"<body>
<main data-init="@get('/bench/live/counter/updates')">
<h1>Counter</h1>
<p>Count: {}</p>
<button data-on:click="@post('/bench/live/counter/bump')">+1</button>
</main>
</body>"#,
            count(now)
        ),
    )
}

/// One row of the table, the element a change of its score replaces.
pub fn row(row: &Row, out: &mut String) {
    let _ = write!(
        out,
        r#"<tr id="row-{id}"><td>{id}</td><td>{name}</td><td>{score}</td><td>{team}</td></tr>"#,
        id = row.id,
        name = row.name,
        score = row.score,
        team = row.team
    );
}

/// The table's body with `rows` in the order given.
pub fn rows<'a>(rows: impl IntoIterator<Item = &'a Row>) -> String {
    let mut out = String::from(r#"<tbody id="rows">"#);
    for r in rows {
        row(r, &mut out);
    }
    out.push_str("</tbody>");
    out
}

/// `/bench/live/table`: each reader's sort column, direction and name filter are signals; the
/// stream opens on load with them and again whenever they change, always from `<main>` (the
/// client cancels an element's earlier request, so the new stream replaces the old one). The
/// form's submit only tidies the filter: the box is bound, so typing already re-requests.
pub fn table_page(body: &str) -> String {
    let url = "/bench/live/table/updates";
    let mut headers = String::new();
    for column in ["id", "name", "score", "team"] {
        let _ = write!(
            headers,
            r#"<th><button data-on:click="$desc = $sort == '{column}' ? !$desc : false; $sort = '{column}'">{column}</button></th>"#
        );
    }
    page(
        "Table",
        &format!(
            r#"<body data-signals="{{sort: 'id', desc: false, filter: ''}}">
<main data-init="@get('{url}')" data-on-signal-patch__debounce.100ms="@get('{url}')" data-on-signal-patch-filter="{{include: /^(sort|desc|filter)$/}}">
<h1>Table</h1>
<form data-on:submit__prevent="$filter = $filter.trim()"><label>Filter by name <input type="search" name="filter" data-bind:filter></label></form>
<table>
<thead><tr>{headers}</tr></thead>
{body}
</table>
</main>
</body>"#
        ),
    )
}

/// One line of the room, as appended to its list.
pub fn line(line: &Line, out: &mut String) {
    let _ = write!(out, r#"<li id="line-{}">"#, line.seq);
    escape(&line.text, out);
    out.push_str("</li>");
}

/// The room's list with `lines`, oldest first.
pub fn room<'a>(lines: impl IntoIterator<Item = &'a Line>) -> String {
    let mut out = String::from(r#"<ol id="chat">"#);
    for l in lines {
        line(l, &mut out);
    }
    out.push_str("</ol>");
    out
}

/// `/bench/live/chat`: the stream opens on load; the form posts its `line` signal to the
/// trigger, which takes a Datastar request's signals as well as a plain text body.
pub fn chat_page(room: &str) -> String {
    page(
        "Chat",
        &format!(
            r#"<body data-signals="{{line: ''}}">
<main data-init="@get('/bench/live/chat/updates')">
<h1>Chat</h1>
{room}
<form data-on:submit__prevent="@post('/bench/live/chat/say'); $line = ''"><label>Say <input name="line" maxlength="200" data-bind:line></label> <button>Send</button></form>
</main>
</body>"#
        ),
    )
}
