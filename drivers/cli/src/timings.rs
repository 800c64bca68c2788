//! `--timings`: per-pass time, how many times each pass was recomputed,
//! and disk-cache hits.
//!
//! Every pass's query body opens a tracing span named after the pass
//! (`parse`, `lower`, `unroll`, `symbolic_state`, ...). The body only runs
//! when salsa recomputes the query — a memoised or backdated result opens
//! no span — so the number of spans per name is the number of
//! recomputations, and their durations are the time spent. A tracing layer
//! (installed only with `--timings`) sums them; self time excludes nested
//! pass spans on the same thread, so the column adds up.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ptxeq_cache::DiskCache;
use tracing::Subscriber;
use tracing::span::{Attributes, Id};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// Per span name: (spans closed, self time).
type Totals = BTreeMap<&'static str, (u64, Duration)>;

static TOTALS: Mutex<Totals> = Mutex::new(BTreeMap::new());

/// Start time and nested time of one open span.
struct Timing {
    start: Instant,
    nested: Duration,
}

/// The layer that sums span times into [`TOTALS`].
pub struct TimingLayer;

/// The `--timings` layer.
pub fn layer() -> TimingLayer {
    TimingLayer
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for TimingLayer {
    fn on_new_span(&self, _attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Timing {
                start: Instant::now(),
                nested: Duration::ZERO,
            });
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let Some((elapsed, nested)) = span
            .extensions()
            .get::<Timing>()
            .map(|t| (t.start.elapsed(), t.nested))
        else {
            return;
        };
        if let Some(parent) = span.parent()
            && let Some(t) = parent.extensions_mut().get_mut::<Timing>()
        {
            t.nested += elapsed;
        }
        record(span.metadata().name(), elapsed.saturating_sub(nested));
    }
}

fn record(name: &'static str, self_time: Duration) {
    let mut t = TOTALS.lock().unwrap_or_else(|e| e.into_inner());
    let e = t.entry(name).or_default();
    e.0 += 1;
    e.1 += self_time;
}

/// What the layer has summed since the last `take` (and clears it): one
/// round of `watch --timings`.
pub fn take() -> Totals {
    std::mem::take(&mut *TOTALS.lock().unwrap_or_else(|e| e.into_inner()))
}

/// What the layer has summed so far.
pub fn totals() -> Totals {
    TOTALS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The `--timings` report: one line per pass, then the disk cache.
pub fn report(totals: &Totals, wall: Duration, cache: Option<&DiskCache>) -> String {
    let mut out = String::from("timings:\n");
    out.push_str(&format!(
        "  {:<16} {:>11} {:>12}\n",
        "pass", "recomputed", "self time"
    ));
    let mut sum = Duration::ZERO;
    for (name, (n, t)) in totals {
        sum += *t;
        out.push_str(&format!("  {name:<16} {n:>11} {:>12}\n", ms(*t)));
    }
    if totals.is_empty() {
        out.push_str("  (no pass recomputed: everything was reused)\n");
    }
    out.push_str(&format!(
        "  {:<16} {:>11} {:>12}   (pass times sum threads; wall {})\n",
        "total",
        "",
        ms(sum),
        ms(wall)
    ));
    let (waited, waiting) = ptxeq_symex::replay_memory::waits();
    if waited > 0 {
        out.push_str(&format!(
            "  {waited} replay(s) waited {} for others to finish (--replay-memory-mib {})\n",
            ms(waiting),
            ptxeq_symex::replay_memory::replay_memory() >> 20
        ));
    }
    match cache {
        None => out.push_str("disk cache: off\n"),
        Some(c) => {
            let s = c.stats();
            // Failed writes (an unwritable directory, a full disk) were
            // warned about once; the count says how many results this run
            // could not store, i.e. the next run recomputes.
            let failed = if s.put_errors > 0 {
                format!(", {} write(s) failed", s.put_errors)
            } else {
                String::new()
            };
            out.push_str(&format!(
                "disk cache ({}): {} hits, {} misses, {} rejected, {} written ({} bytes){failed}, {} evicted\n",
                c.path().display(),
                s.hits,
                s.misses,
                s.rejects,
                s.puts,
                s.bytes_written,
                s.evictions
            ));
            for (q, n) in &s.by_query {
                out.push_str(&format!("  {q:<16} {} hits, {} misses\n", n.hits, n.misses));
            }
            if let Some(r) = c.remote() {
                let rs = s.remote;
                out.push_str(&format!(
                    "remote cache ({}{}): {} hits ({} bytes), {} misses, {} rejected, {} written ({} bytes)\n",
                    r.url(),
                    if r.is_down() { ", off after a failure" } else { "" },
                    rs.hits,
                    rs.bytes_read,
                    rs.misses,
                    rs.rejects,
                    rs.puts,
                    rs.bytes_written
                ));
            }
        }
    }
    out
}

/// The salsa side of `--timings`: per query, how often its body ran and
/// how often a memoised result was re-validated instead (after an input
/// changed, e.g. in `ptxeq watch`).
pub fn queries(counts: &BTreeMap<String, ptxeq_db::counts::QueryCount>) -> String {
    let mut out = String::from("queries:\n");
    out.push_str(&format!(
        "  {:<20} {:>11} {:>8}\n",
        "query", "recomputed", "reused"
    ));
    for (name, c) in counts {
        out.push_str(&format!(
            "  {name:<20} {:>11} {:>8}\n",
            c.executed, c.reused
        ));
    }
    out
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::prelude::*;

    #[test]
    fn spans_are_counted_with_self_time() {
        let sub = tracing_subscriber::registry().with(layer());
        tracing::subscriber::with_default(sub, || {
            for _ in 0..3 {
                let _outer = tracing::info_span!("test_outer_pass").entered();
                let _inner = tracing::info_span!("test_inner_pass").entered();
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        let t = totals();
        assert_eq!(t["test_outer_pass"].0, 3);
        assert_eq!(t["test_inner_pass"].0, 3);
        assert!(t["test_inner_pass"].1 >= Duration::from_millis(6));
        // The outer span's own time excludes the nested sleep.
        assert!(t["test_outer_pass"].1 < t["test_inner_pass"].1);
        let r = report(&t, Duration::from_millis(10), None);
        assert!(r.contains("test_inner_pass"), "{r}");
        assert!(r.contains("disk cache: off"), "{r}");
    }
}
