#![allow(unused_imports)]
use kiln_html::{Flow, Fragment, Interactive, ListItem, Phrasing, TableRow, html};

fn main() {
    let _ = { let name = "x"; html! { table { tr { (name) } } } };
}
