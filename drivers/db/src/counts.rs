//! Per-query counts of salsa recomputations and reuses, for `--timings`.
//!
//! Salsa reports, through its event callback, every query body it runs
//! (`WillExecute`) and every memoised result it re-validates instead of
//! recomputing after an input changed (`DidValidateMemoizedValue`). The
//! counts are process-wide and off by default: [`enable`] makes every
//! `Database` built afterwards report into them.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

static ENABLED: AtomicBool = AtomicBool::new(false);
static COUNTS: Mutex<BTreeMap<String, QueryCount>> = Mutex::new(BTreeMap::new());

/// How often one query was recomputed and how often its memo was reused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryCount {
    pub executed: u64,
    pub reused: u64,
}

/// Count queries in every database built from now on.
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

pub(crate) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The counts so far, by query name.
pub fn query_counts() -> BTreeMap<String, QueryCount> {
    COUNTS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The query name of a salsa database key printed as `name(Id(..))`.
fn query_name(key: &str) -> &str {
    key.split('(').next().unwrap_or(key)
}

/// Records one salsa event.
pub(crate) fn on_event(event: &salsa::Event) {
    let (key, executed) = match &event.kind {
        salsa::EventKind::WillExecute { database_key } => (format!("{database_key:?}"), true),
        salsa::EventKind::DidValidateMemoizedValue { database_key } => {
            (format!("{database_key:?}"), false)
        }
        _ => return,
    };
    let mut counts = COUNTS.lock().unwrap_or_else(|e| e.into_inner());
    let c = counts.entry(query_name(&key).to_string()).or_default();
    if executed {
        c.executed += 1;
    } else {
        c.reused += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_drop_the_key() {
        assert_eq!(query_name("unrolled(Id(402))"), "unrolled");
        assert_eq!(query_name("parse"), "parse");
    }
}
