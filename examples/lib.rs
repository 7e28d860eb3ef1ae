//! kiln's examples, each a small app: run one with `cargo run --example NAME` at the
//! repository's root.
//!
//! - `hello`: one typed route.
//! - `json_api`: a JSON API for a front-end on another origin: CORS, bearer tokens
//!   signed with the app's key, compression, metrics.
//! - `uploads`: an image and file upload form with a CSRF token: a streamed route
//!   with its own body limit, `Multipart`, files kept on disk.
//! - `todo_sqlite`: a to-do list on embedded SQLite: checked HTML, forms with CSRF
//!   tokens, `?` on database errors.
//! - `todo_postgres`: the same app on PostgreSQL (`KILN_PG_URL` or
//!   `postgres://localhost/kiln`).
//! - `sse_chat`: a chat room over Server-Sent Events: a `Bus` shared by every worker,
//!   `Sse` and `Last-Event-ID` to resume after a reconnect.
//! - `ws_chat`: the same room over WebSocket: a socket reads its client and the bus at
//!   once with `tokio::select!`.
//! - `live_counter`: a live view: the page's state on the server, a click sent as a
//!   typed event, only the changed count sent back over a WebSocket.
//! - `live_chat`: a chat room as a live view: lines published on the bus, each view
//!   subscribed when its page connects.
//! - `live_table`: a table each reader sorts and filters for themselves (keyed rows:
//!   moves, removes and inserts), scores pushed to every open table over the bus.
//!
//! Each example's `app()` is what `tests/examples.rs` drives through
//! `kiln::test::TestClient`: requests, event streams and WebSockets, in process.
