// `on:click` names a live view's event: `html!` has none.
use kiln::html;

fn main() {
    let _ = html! { button type="button" on:click=(1) { "go" } };
}
