//! kiln's events (start, stop, refusals, 5xx, database outages, a hand-over) printed on
//! standard error, one `kiln: <message>` line each, as the demo printed them before
//! kiln spoke through `tracing`; scripts (`scripts/scale-out`) read these lines.
//! `RUST_LOG` filters them (default `info`): `target=level` directives, as
//! `tracing_subscriber::filter::Targets` reads them.
//!
//! With `--request-spans`, every request's `kiln::request` span is recorded by the
//! registry (an id, its parent, entered and exited per poll), so a layer added here
//! (OpenTelemetry, a span timer) sees it. The subscriber is chosen for what that span
//! costs on a tiny response (bench/results/2026-11-25-metrics-cost):
//! - a static [`Targets`] filter, not an `EnvFilter`: an `EnvFilter` takes a lock and
//!   looks in a hash map on every span enter, exit and close, in case a directive
//!   names span fields; `Targets` decides once per callsite;
//! - the printer is a [`Layer`] with only `on_event`: `tracing_subscriber::fmt`'s layer
//!   formats every span's fields into a string kept with the span, which these lines
//!   never show (formatting `method` and `path` cost more than answering `/pong`).

use std::io::Write;

use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::format::{DefaultFields, Writer};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// Prints `kiln: ` and the event's message and fields, nothing else.
struct Plain {
    fields: DefaultFields,
}

impl<S: Subscriber> Layer<S> for Plain {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut line = String::from("kiln: ");
        if self.fields.format_fields(Writer::new(&mut line), event).is_ok() {
            line.push('\n');
            // One write per line, so that lines from several workers do not interleave.
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
    }
}

/// The filter `RUST_LOG` asks for, else `info`.
fn filter() -> Targets {
    let default = || Targets::new().with_default(tracing::Level::INFO);
    match std::env::var("RUST_LOG") {
        Ok(directives) => directives.parse().unwrap_or_else(|e| {
            eprintln!("kiln: RUST_LOG={directives:?} ignored ({e}); logging at info");
            default()
        }),
        Err(_) => default(),
    }
}

/// Installs the subscriber for the process.
pub(crate) fn init() {
    tracing_subscriber::registry().with(Plain { fields: DefaultFields::new() }).with(filter()).init();
}
