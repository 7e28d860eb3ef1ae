//! Issue 11: `kiln::maud` was re-exported but `html!` expanded to `::maud::…`, so a
//! crate needed maud among its own dependencies. This crate has kiln alone.

use kiln::maud::{DOCTYPE, Markup, html};

fn page(title: &str, items: &[&str]) -> Markup {
    html! {
        (DOCTYPE)
        html {
            head { title { (title) } }
            body.wiki {
                h1 #top { (title) }
                @for item in items { p { (item) } }
                @if items.is_empty() { p { "nothing yet" } }
            }
        }
    }
}

fn main() {
    let markup = page("a < b", &["one & two"]);
    assert_eq!(
        markup.into_string(),
        "<!DOCTYPE html><html><head><title>a &lt; b</title></head><body class=\"wiki\">\
         <h1 id=\"top\">a &lt; b</h1><p>one &amp; two</p></body></html>"
    );
}
