//! What one request span costs the kiln demo's subscriber, measured alone (issue 25):
//! `tracing_subscriber::registry()` with the demo's two layers (a printer that only
//! reacts to events, and a `Targets` filter at `info`), installed globally as the demo
//! installs it, and N spans like kiln's `request` span (target `kiln::request`, fields
//! `method` and `path`, borrowed `&str`s): each created, entered once, exited and closed,
//! as kiln does for a `/pong` answered in one poll.
//!
//! ```text
//! spancost MODE N
//! ```
//!
//! MODE: `recorded` (the span as the demo records it: a root, `parent: None`, as kiln
//! makes it), `contextual` (the same span without `parent: None`: the registry looks
//! up the thread's current span for a parent, as kiln did before), `unwanted`
//! (`Targets` turns `kiln::request` off, as `RUST_LOG=info,kiln::request=warn`: the
//! span is never made) or `empty` (the same loop with no span: the loop's own cost). It prints the time per
//! span of the loop (the thread's CPU time, not the wall clock's: a shared machine
//! makes the thread wait for a core); `kilnbench.spancost` runs it under callgrind with the count on
//! only inside [`measure`], for instructions per span.

use std::hint::black_box;

use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// The demo's printer, minus the printing: a layer with only `on_event`.
struct EventsOnly;

impl<S: Subscriber> Layer<S> for EventsOnly {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        black_box(event);
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Recorded,
    Contextual,
    Unwanted,
    Empty,
}

/// N spans, or N turns of the same loop without one. Not inlined: callgrind counts
/// from its entry to its return (`--toggle-collect=spancost::measure*`).
#[inline(never)]
fn measure(mode: Mode, n: u64) {
    let (method, path) = (black_box("GET"), black_box("/pong"));
    for _ in 0..n {
        if mode == Mode::Empty {
            black_box((method, path));
            continue;
        }
        let span = if mode == Mode::Contextual {
            tracing::info_span!(target: "kiln::request", "request", method, path)
        } else {
            tracing::info_span!(target: "kiln::request", parent: None, "request", method, path)
        };
        let span = black_box(span);
        if !span.is_disabled() {
            let entered = span.enter();
            black_box(&entered);
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = match args.next().as_deref() {
        Some("recorded") => Mode::Recorded,
        Some("contextual") => Mode::Contextual,
        Some("unwanted") => Mode::Unwanted,
        Some("empty") => Mode::Empty,
        _ => {
            eprintln!("usage: spancost recorded|unwanted|empty N");
            std::process::exit(2);
        }
    };
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let targets = match mode {
        Mode::Unwanted => Targets::new().with_default(tracing::Level::INFO).with_target("kiln::request", tracing::Level::WARN),
        _ => Targets::new().with_default(tracing::Level::INFO),
    };
    tracing_subscriber::registry().with(EventsOnly).with(targets).init();
    // Warm: the callsite registered, the slab's first page allocated, the thread's
    // span stack made.
    measure(mode, 1_000);
    let started = thread_cpu_ns();
    measure(mode, n);
    let took = thread_cpu_ns() - started;
    println!("{:.2} ns per span", took as f64 / n as f64);
}

/// This thread's CPU time so far, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid, writable timespec; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}
