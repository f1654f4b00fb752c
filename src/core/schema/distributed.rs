//! `client.distributed`: how a run was carried out by another load engine's workers from
//! strobe's plan (a strobe addition, docs/operate/locust.md): which engine and workers sent it, on
//! which hosts, and how far the workers' clocks can be trusted against each other.

use serde::{Deserialize, Serialize};

/// `distributed.engine` of a run carried out by Locust.
pub const LOCUST_ENGINE: &str = "locust";

/// `distributed.clock_domain` when every worker ran on one host: their monotonic clocks are one
/// clock, and request starts across workers compare exactly.
pub const ONE_HOST_CLOCK: &str = "one host's monotonic clock (time.perf_counter_ns)";

/// `distributed.clock_domain` when the workers ran on several hosts: each worker's times are
/// placed on the master's wall clock by the offset it measured against it.
pub const MASTER_WALL_CLOCK: &str =
    "each worker's monotonic clock, placed on the master's wall clock by its measured offset";

/// How a run was carried out by another engine's workers, so a reader can judge the times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DistributedBlock {
    /// The load engine ([`LOCUST_ENGINE`]).
    pub engine: String,
    /// The engine's version, as its workers reported it.
    pub engine_version: Option<String>,
    /// The workers' Python version.
    pub python_version: Option<String>,
    /// The strobe version that wrote the plan the workers ran.
    pub plan_strobe_version: Option<String>,
    /// The strobe version that turned the records into this artifact.
    pub imported_by: String,
    /// Worker processes that sent the plan's requests.
    pub workers: u64,
    /// The distinct host names the workers ran on, sorted.
    pub hosts: Vec<String>,
    /// Which clock the rows' `started_at_ms` and the run's wall time are on
    /// ([`ONE_HOST_CLOCK`] or [`MASTER_WALL_CLOCK`]). Each request's TTFO, TTFT, TPOT and E2E
    /// are differences on one worker's monotonic clock either way.
    pub clock_domain: String,
    /// The largest difference between two workers' clocks after alignment, in ms, as far as it
    /// can be estimated (on one host: how far their wall and monotonic clocks disagreed at their
    /// starts; on several: the largest offset to the master); `None` when no worker measured one.
    pub clock_offset_estimate_ms: Option<f64>,
    /// How uncertain the offsets to the master are: half the best ping's round trip of the
    /// worker with the worst one, in ms; `None` when no worker measured one.
    pub clock_offset_uncertainty_ms: Option<f64>,
    /// One entry per worker process, by worker index.
    pub processes: Vec<WorkerProcess>,
    /// Requests sent again on a fresh connection because the server had closed the kept-alive
    /// one while it sat idle (as a browser does); their times count from the first attempt.
    pub retried_requests: u64,
    /// What a reader should know before comparing this run's timeline with others.
    pub warnings: Vec<String>,
}

/// One worker process of a distributed run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerProcess {
    /// The engine's worker index.
    pub worker: u64,
    /// The host it ran on.
    pub host: String,
    /// Its process id on that host.
    pub pid: u64,
    /// Requests it sent.
    pub requests: u64,
    /// When it started its share, in ms after the run's start.
    pub started_ms: f64,
    /// The master's wall clock minus the worker's, in ms, from its best ping; `None` when it
    /// measured none (a single process without a master).
    pub offset_to_master_ms: Option<f64>,
    /// That best ping's round trip, in ms.
    pub sync_round_trip_ms: Option<f64>,
}
