// `live_html!` checks markup as `html!` does; an unknown event is refused too.
use kiln::live::Live;
use kiln::live_html;

fn main() {
    let _: Live<()> = live_html! { p { li { "item" } } };
    let _: Live<()> = live_html! { div on:hover=(()) { "x" } };
    let _: Live<()> = live_html! { li { "a list item alone" } };
}
