//! The `slo` block strobe adds to an artifact when the run was held to a service-level
//! objective (docs/guide/metrics.md, *Service-level objectives*): the SLO as written, its target,
//! and what it said about the run. Readers that do not know it ignore it; strobe restores the SLO
//! from it when the file is dropped in.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The SLO a run was held to and its result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SloBlock {
    /// The SLO in its canonical text, e.g. `ttft:500,tpot:50` (the `slo` link value).
    pub spec: String,
    /// Each bound's limit, ms, by metric (`ttft`, `tpot`, …).
    pub bounds_ms: BTreeMap<String, f64>,
    /// The attainment target, 0–1 (`slo_target` / 100).
    pub target: f64,
    /// Requests sent: succeeded plus failed.
    pub sent: u64,
    /// Succeeded requests that met every bound.
    pub met: u64,
    /// `met / sent`; null when nothing was sent.
    pub attainment: Option<f64>,
    /// Met requests per second of wall time.
    pub goodput_req_s: Option<f64>,
    /// Output tokens of the met requests per second of wall time.
    pub goodput_output_tok_s: Option<f64>,
    /// Succeeded requests each bound rejected (above the limit, or without the value), by
    /// metric.
    pub rejected_by: BTreeMap<String, u64>,
}
