//! `client.from_wire`: the run's TTFO, TTFT and E2E counted from the moment each request left
//! the browser instead of from the `fetch()` call, beside the measured `metrics` that keep the
//! reference tool's definition (docs/develop/accuracy.md, *From the wire*).
//!
//! The keys are the `metrics` keys of the same families (`ttft_p50_ms`, `e2e_samples`, …), so a
//! reader looks a statistic up the same way on either basis, plus the `client_queue` family
//! that was taken out. [`crate::core::artifact::from_wire`] builds it from a run's rows.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `client.from_wire`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FromWireBlock {
    /// Successful rows (those `metrics` summarizes).
    pub rows: u64,
    /// Of those, rows whose `client_queue_ms` the browser reported, which the statistics are
    /// taken over.
    pub rows_with_wire_time: u64,
    /// Why there is nothing from the wire, when no row has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// `{family}_samples` and `{family}_{stat}_ms` for `time_to_first_output`, `ttft`, `e2e` and
    /// `client_queue`, as in `metrics` (null statistics when no row has the value).
    #[serde(flatten)]
    pub statistics: Map<String, Value>,
}

impl FromWireBlock {
    /// One statistic by its `metrics` key (`ttft_p50_ms`), when known.
    pub fn statistic(&self, key: &str) -> Option<f64> {
        self.statistics.get(key).and_then(Value::as_f64)
    }
}
