#![allow(unused_imports)]
use kiln_html::{Flow, Fragment, Interactive, ListItem, Phrasing, TableRow, html};

fn main() {
    let _ = { let link: Fragment<Interactive> = html! { a href="#x" { "x" } }; html! { a href="#y" { (link) } } };
}
