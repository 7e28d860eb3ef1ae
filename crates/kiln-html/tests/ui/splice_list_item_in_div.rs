#![allow(unused_imports)]
use kiln_html::{Flow, Fragment, Interactive, ListItem, Phrasing, TableRow, html};

fn main() {
    let _ = { let item: Fragment<ListItem> = html! { li { "x" } }; html! { div { (item) } } };
}
