#![allow(unused_imports)]
use kiln_html::{Flow, Fragment, Interactive, ListItem, Phrasing, TableRow, html};

fn main() {
    let _ = { let row: Fragment<TableRow> = html! { tr { td { "x" } } }; html! { ul { (row) } } };
}
