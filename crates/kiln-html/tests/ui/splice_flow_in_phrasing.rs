#![allow(unused_imports)]
use kiln_html::{Flow, Fragment, Interactive, ListItem, Phrasing, TableRow, html};

fn main() {
    let _ = { let nav: Fragment<Flow> = html! { div { "x" } }; html! { p { (nav) } } };
}
