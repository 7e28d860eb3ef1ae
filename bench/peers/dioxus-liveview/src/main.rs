//! dioxus-liveview peer of the live-view benchmark (bench/peers/dioxus-liveview/README.md):
//! the counter, table and chat pages of LIVEBENCH.md as dioxus components, set up on axum as
//! dioxus-liveview's docs do (a `LiveViewPool`, a page carrying `interpreter_glue`, and a
//! WebSocket route per page whose sockets `launch` a VirtualDom), plus the POST triggers that
//! change the shared state. One worker: the process is pinned to one CPU before anything
//! starts, so the pool (sized by `available_parallelism`) has one thread, and axum runs on a
//! current-thread runtime.

mod pages;
mod state;

use std::sync::Arc;

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Html;
use axum::routing::{get, post, MethodRouter};
use axum::serve::ListenerExt;
use axum::Router;
use dioxus::prelude::{Element, VirtualDom};
use dioxus_liveview::{axum_socket, interpreter_glue, LiveViewPool};

use crate::state::Shared;

/// The HTML page a browser first gets: the docs' shell, with the interpreter glue that opens
/// the page's WebSocket.
fn page(title: &str, ws_path: &str) -> Html<String> {
    Html(format!(
        r#"<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>{title}</title></head>
<body><div id="main"></div></body>
{glue}
</html>"#,
        glue = interpreter_glue(ws_path)
    ))
}

/// The route of one page: GET answers the page, `<path>/ws` upgrades and runs its VirtualDom.
fn live(
    router: Router,
    path: &str,
    title: &str,
    root: fn() -> Element,
    pool: &LiveViewPool,
    shared: &Arc<Shared>,
) -> Router {
    let html = page(title, &format!("{path}/ws"));
    let (pool, shared) = (pool.clone(), shared.clone());
    let socket: MethodRouter = get(move |ws: WebSocketUpgrade| {
        let (pool, shared) = (pool.clone(), shared.clone());
        async move {
            ws.on_upgrade(move |socket| async move {
                let dom = move || VirtualDom::new(root).with_root_context(shared);
                // The view ends when its socket does; there is no one to tell about an error.
                let _ = pool.launch_virtualdom(axum_socket(socket), dom).await;
            })
        }
    });
    router.route(path, get(move || async move { html.clone() })).route(&format!("{path}/ws"), socket)
}

async fn bump(State(shared): State<Arc<Shared>>) -> String {
    shared.bump().to_string()
}

async fn change(State(shared): State<Arc<Shared>>) -> String {
    let (id, score) = shared.change();
    format!("{id} {score}")
}

async fn say(State(shared): State<Arc<Shared>>, text: String) -> (StatusCode, &'static str) {
    if text.is_empty() {
        return (StatusCode::BAD_REQUEST, "empty line\n");
    }
    if text.len() > pages::MAX_LINE {
        return (StatusCode::PAYLOAD_TOO_LARGE, "a line is at most 200 bytes\n");
    }
    shared.say(&text);
    (StatusCode::OK, "ok\n")
}

/// Pins this thread, and so every thread it starts after, to one CPU it may run on (the last
/// one: CPU 0 takes more of the machine's interrupts). The benchmark gives every server one
/// worker; `LiveViewPool::new` sizes its thread pool by `available_parallelism`, which follows
/// this mask.
fn one_cpu() {
    // SAFETY: cpu_set_t is plain data; the calls only read and write the sets passed in.
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut allowed) != 0 {
            return;
        }
        let Some(cpu) = (0..libc::CPU_SETSIZE as usize).rev().find(|&cpu| libc::CPU_ISSET(cpu, &allowed)) else {
            return;
        };
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut one);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one);
    }
}

fn main() -> std::io::Result<()> {
    one_cpu();
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(8080);
    tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async move {
        let pool = LiveViewPool::new();
        let shared = Shared::new();
        let mut app = Router::new().route("/pong", get(|| async { "PONG" }));
        app = live(app, "/bench/live/counter", "Counter", pages::counter, &pool, &shared);
        app = live(app, "/bench/live/table", "Table", pages::table, &pool, &shared);
        app = live(app, "/bench/live/chat", "Chat", pages::chat, &pool, &shared);
        let triggers = Router::new()
            .route("/bench/live/counter/bump", post(bump))
            .route("/bench/live/table/change", post(change))
            .route("/bench/live/chat/say", post(say))
            .with_state(shared);
        // No Nagle delay on the updates, as the other peers and kiln (axum::serve leaves it on).
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, app.merge(triggers)).await
    })
}
