//! The `load` block strobe adds to the artifact of an open-loop run (docs/guide/load.md): the load
//! shape that was asked for, and whether the client kept it — offered against achieved rate,
//! how late requests went out, and whether the cap on requests in flight held any back.
//! Closed-loop runs have no `load` block, so their files are the reference producer's.

use serde::{Deserialize, Serialize};

use crate::core::config::choices::{Arrivals, LoadMode};

/// A request sent more than this many ms after it was due counts as late.
pub const LATE_SEND_MS: f64 = 5.0;

/// The `load` block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadBlock {
    /// `rate` (an open loop).
    pub mode: LoadMode,
    /// The rate asked for once any ramp is over, requests per second.
    pub rate: f64,
    /// How the gaps were drawn.
    pub arrivals: Arrivals,
    /// The gamma shape, for `gamma` arrivals; null otherwise.
    pub burstiness: Option<f64>,
    /// The seed the gaps were drawn from.
    pub seed: i64,
    /// The cap on requests in flight (the run's `concurrency`).
    pub cap: u64,
    /// The ramp's length in seconds (0: none).
    pub ramp_s: f64,
    /// The rate the ramp started from, or null without a ramp.
    pub ramp_start_rate: Option<f64>,
    /// The duration that bounded the schedule, seconds, or null.
    pub duration_s: Option<f64>,
    /// Requests on the schedule (the run's `requests`).
    pub scheduled_requests: u64,
    /// Requests that went out (all but those cancelled before their time).
    pub sent_requests: u64,
    /// The schedule's rate: its gaps over its span, requests per second (null below two).
    pub offered_rate: Option<f64>,
    /// The rate requests actually went out at: the sends' gaps over their span.
    pub achieved_rate: Option<f64>,
    /// Requests that completed per second of the run's wall time.
    pub completed_per_s: Option<f64>,
    /// The most requests that were in flight at once.
    pub max_in_flight: u64,
    /// How late the requests went out (send − due), over every sent request.
    pub dispatch_lag_ms: LagSummary,
    /// Sends more than [`LATE_SEND_MS`] late.
    pub late_sends: u64,
    /// Sends the cap held back (they waited for a free slot).
    pub capped_sends: u64,
    /// The client kept the schedule: the p95 dispatch lag is at most [`LATE_SEND_MS`].
    pub schedule_kept: bool,
    /// The cap held at least one request back, so the offered load was not all delivered on
    /// time: the latencies then describe a throttled load.
    pub throttled: bool,
}

/// p50 / p95 / max of the dispatch lag (nearest rank), ms; null without sends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LagSummary {
    /// Median.
    pub p50: Option<f64>,
    /// 95th percentile.
    pub p95: Option<f64>,
    /// Largest.
    pub max: Option<f64>,
}
