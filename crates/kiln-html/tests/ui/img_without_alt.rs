#![allow(unused_imports)]
use kiln_html::{Flow, Fragment, Interactive, ListItem, Phrasing, TableRow, html};

fn main() {
    let _ = { html! { img src=(kiln_html::Asset::new("/a.png")); } };
}
