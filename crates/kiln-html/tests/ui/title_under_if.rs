#![allow(unused_imports)]
use kiln_html::{Flow, Fragment, Interactive, ListItem, Phrasing, TableRow, html};

fn main() {
    let _ = { let x = true; html! { html lang="en" { head { @if x { title { "a" } } } body {} } } };
}
