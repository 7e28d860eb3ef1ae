//! The Prometheus text exposition format (version 0.0.4): `# HELP`, `# TYPE`, then
//! one sample per line.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use super::counters::{BUCKETS_US, CLASSES, WorkerCounters};

pub(super) fn render(
    routes: &[String],
    workers: &[Arc<WorkerCounters>],
    queued_calls: Option<usize>,
    out: &mut Vec<u8>,
) {
    let sum = |f: &dyn Fn(&WorkerCounters) -> u64| workers.iter().map(|w| f(w)).fold(0u64, u64::wrapping_add);

    out.extend_from_slice(b"# HELP kiln_requests_total Requests answered, by route pattern and status class.\n");
    out.extend_from_slice(b"# TYPE kiln_requests_total counter\n");
    let rows = routes.len() + 1;
    for row in 0..rows {
        let route = routes.get(row).map_or("(unmatched)", String::as_str);
        for class in 0..CLASSES {
            let n = sum(&|w| w.requests.get(row).map_or(0, |r| r[class].load(Relaxed)));
            if n == 0 {
                continue;
            }
            out.extend_from_slice(b"kiln_requests_total{route=\"");
            escape_label(route, out);
            let _ = writeln!(out, "\",status=\"{}xx\"}} {n}", class + 1);
        }
    }

    out.extend_from_slice(b"# HELP kiln_request_duration_seconds Time from routing to the handler's answer.\n");
    out.extend_from_slice(b"# TYPE kiln_request_duration_seconds histogram\n");
    let mut cumulative = 0u64;
    for (i, bound) in BUCKETS_US.iter().enumerate() {
        cumulative += sum(&|w| w.latency[i].load(Relaxed));
        let _ = writeln!(out, "kiln_request_duration_seconds_bucket{{le=\"{}\"}} {cumulative}", seconds(*bound));
    }
    cumulative += sum(&|w| w.latency[BUCKETS_US.len()].load(Relaxed));
    let _ = writeln!(out, "kiln_request_duration_seconds_bucket{{le=\"+Inf\"}} {cumulative}");
    let _ = writeln!(out, "kiln_request_duration_seconds_sum {}", seconds(sum(&|w| w.latency_sum_us.load(Relaxed))));
    let _ = writeln!(out, "kiln_request_duration_seconds_count {cumulative}");

    out.extend_from_slice(b"# HELP kiln_requests_in_flight Requests being answered now.\n");
    out.extend_from_slice(b"# TYPE kiln_requests_in_flight gauge\n");
    let _ = writeln!(out, "kiln_requests_in_flight {}", sum(&|w| w.in_flight.load(Relaxed)));
    out.extend_from_slice(b"# HELP kiln_workers Workers counting.\n");
    out.extend_from_slice(b"# TYPE kiln_workers gauge\n");
    let _ = writeln!(out, "kiln_workers {}", workers.len());

    out.extend_from_slice(b"# HELP kiln_open_connections Connections open now, over every worker.\n");
    out.extend_from_slice(b"# TYPE kiln_open_connections gauge\n");
    let open: usize = workers.iter().filter_map(|w| w.open.as_ref()).map(kiln_http::OpenConnections::get).sum();
    let _ = writeln!(out, "kiln_open_connections {open}");
    out.extend_from_slice(
        b"# HELP kiln_bus_lagged_messages_total Bus messages subscribers missed by falling behind.\n",
    );
    out.extend_from_slice(b"# TYPE kiln_bus_lagged_messages_total counter\n");
    let lagged = crate::realtime::LAGGED_MESSAGES.load(Relaxed);
    let _ = writeln!(out, "kiln_bus_lagged_messages_total {lagged}");
    if let Some(queued) = queued_calls {
        out.extend_from_slice(
            b"# HELP kiln_db_queued_calls Database calls waiting: queued for SQLite, in flight on PostgreSQL.\n",
        );
        out.extend_from_slice(b"# TYPE kiln_db_queued_calls gauge\n");
        let _ = writeln!(out, "kiln_db_queued_calls {queued}");
    }
}

/// Microseconds as seconds, exactly (`0.00005`, `2.5`).
fn seconds(us: u64) -> String {
    let (whole, frac) = (us / 1_000_000, us % 1_000_000);
    if frac == 0 {
        return whole.to_string();
    }
    let frac = format!("{frac:06}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

/// A label value: backslash, double quote and newline escaped.
fn escape_label(value: &str, out: &mut Vec<u8>) {
    for c in value.chars() {
        match c {
            '\\' => out.extend_from_slice(b"\\\\"),
            '"' => out.extend_from_slice(b"\\\""),
            '\n' => out.extend_from_slice(b"\\n"),
            c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::seconds;

    #[test]
    fn microseconds_print_as_exact_seconds() {
        assert_eq!(seconds(50), "0.00005");
        assert_eq!(seconds(2_500_000), "2.5");
        assert_eq!(seconds(10_000_000), "10");
        assert_eq!(seconds(1_234_567), "1.234567");
    }
}
