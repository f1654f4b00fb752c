//! The `client` block strobe adds to an artifact (ARTIFACT.md §12): what the browser allowed
//! and did — timer, isolation, protocols, endpoints, warm-up, SSE counts, the measuring thread.
//! Plain types: what builds them from a run's observations is [`crate::core::artifact::client`].

use serde::{Deserialize, Serialize};

use crate::core::config::choices::{LiveView, MeasurementThread};
use crate::core::config::settings::BROWSER_HTTP1_CONNECTIONS_PER_HOST;
use crate::core::schema::calibration::ContextCalibration;
use crate::core::schema::distributed::DistributedBlock;
use crate::core::schema::from_wire::FromWireBlock;

/// `client.name`.
pub const CLIENT_NAME: &str = "strobe";

/// strobe's `client` block (§12): how the measurement was taken, so a reader can judge it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClientBlock {
    /// Always [`CLIENT_NAME`] (`"strobe"`).
    pub name: String,
    /// strobe's version (`CARGO_PKG_VERSION`).
    pub version: String,
    /// `navigator.userAgent` of the browser that ran the benchmark.
    pub user_agent: String,
    /// `self.crossOriginIsolated`: isolated pages get a finer `performance.now()`.
    pub cross_origin_isolated: bool,
    /// The smallest nonzero step of `performance.now()` the page measured, in ms.
    pub timer_resolution_ms: f64,
    /// What the transport showed.
    pub transport: ClientTransport,
    /// How stream events arrived.
    pub sse: ClientSseCounts,
    /// The unmeasured warm-up that ran before the first measured request; omitted when the run
    /// had none (the user turned it off, or an older strobe wrote the file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<ClientWarmup>,
    /// Which thread took the measurements (`worker` or `main`); omitted by strobe versions
    /// that had only the page's thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measurement_thread: Option<MeasurementThread>,
    /// Whether the page showed progress while the run went on (`during`) or drew nothing new
    /// until it ended (`end`); omitted by strobe versions that always showed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_view: Option<LiveView>,
    /// Requests of the plan run dry before the warm-up: through the measuring code, answered by
    /// synthetic streams in the browser, nothing sent (so that the browser had optimized that
    /// code before the first timestamp). Omitted by strobe versions without a dry run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run_requests: Option<u64>,
    /// `true` when a service worker controlled the page: strobe's own, which adds COOP/COEP on
    /// a host that sends none (docs/operate/hosting.md). Chromium's static routing keeps the page's
    /// requests away from it, but a dedicated worker's requests pass its fetch event before
    /// they leave. Omitted when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolation_service_worker: Option<bool>,
    /// What the context calibration measured, when the run sized its prompts in the server's
    /// tokens (`context_calibration=on`); omitted when prompts were sized at strobe's estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_calibration: Option<ContextCalibration>,
    /// The run's TTFO, TTFT and E2E counted from each request leaving the browser
    /// (docs/develop/accuracy.md, *From the wire*); the artifact's standard fields stay as
    /// measured. Omitted by strobe versions without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_wire: Option<FromWireBlock>,
    /// The engine, workers, hosts and clocks of a run another load engine's workers carried out
    /// from strobe's plan (docs/operate/locust.md; `name` is then the engine's, e.g. `locust`).
    /// Omitted in the page's runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distributed: Option<DistributedBlock>,
    /// Set when this artifact is a checkpoint of a run that did not end on its page: the page
    /// saves one every few seconds while a run measures (docs/guide/results.md, *Checkpoints*), and
    /// the run's own artifact replaces it when the run ends. Omitted in every finished run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<CheckpointBlock>,
}

/// `client.checkpoint`: what a checkpoint of a run in progress holds, so that a reader never
/// takes it for a finished run. Every request that had not ended when it was saved is a
/// failure of type `AbortError` saying so, as in a cancelled run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointBlock {
    /// Requests that had ended (as rows or as failures) when the checkpoint was saved.
    pub finished_requests: u64,
    /// Why the run stopped without an artifact of its own, when the page saw it stop (the
    /// measurement failed); `None` when the run was still measuring as the checkpoint was
    /// saved, so that the tab was closed, reloaded or crashed before it ended.
    pub run_failed: Option<String>,
}

impl ClientBlock {
    /// This build of strobe's block: [`CLIENT_NAME`] and the crate version, without a warm-up
    /// (see [`with_warmup`](Self::with_warmup)).
    pub fn strobe(
        user_agent: impl Into<String>,
        cross_origin_isolated: bool,
        timer_resolution_ms: f64,
        transport: ClientTransport,
        sse: ClientSseCounts,
    ) -> Self {
        Self {
            name: CLIENT_NAME.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            user_agent: user_agent.into(),
            cross_origin_isolated,
            timer_resolution_ms,
            transport,
            sse,
            warmup: None,
            measurement_thread: None,
            live_view: None,
            dry_run_requests: None,
            isolation_service_worker: None,
            context_calibration: None,
            from_wire: None,
            distributed: None,
            checkpoint: None,
        }
    }

    /// This block with the context calibration the prompts were sized by (`None`: none).
    pub fn with_context_calibration(self, calibration: Option<ContextCalibration>) -> Self {
        Self {
            context_calibration: calibration,
            ..self
        }
    }

    /// This block saying how many requests ran dry before the warm-up.
    pub fn with_dry_run(self, requests: u64) -> Self {
        Self {
            dry_run_requests: Some(requests),
            ..self
        }
    }

    /// This block saying which thread measured.
    pub fn with_measurement_thread(self, thread: MeasurementThread) -> Self {
        Self {
            measurement_thread: Some(thread),
            ..self
        }
    }

    /// This block saying whether the page showed progress during the run.
    pub fn with_live_view(self, live_view: LiveView) -> Self {
        Self {
            live_view: Some(live_view),
            ..self
        }
    }

    /// This block with the warm-up that ran before the measurement (`None`: there was none).
    pub fn with_warmup(self, warmup: Option<ClientWarmup>) -> Self {
        Self { warmup, ..self }
    }
}

/// `client.warmup`: the tiny unmeasured requests strobe sends before the run (`max_tokens: 1`,
/// no canary marker) so that the first measured requests find open connections and a cached
/// CORS preflight instead of paying for them inside their TTFO: a priming round of
/// [`RunPlan::warmup_requests_per_endpoint`](crate::core::plan::RunPlan::warmup_requests_per_endpoint)
/// all at once, then check rounds of one request per connection the slots need, also all at
/// once, until one of them opens no new connection (at most
/// [`WARMUP_CHECK_ROUNDS`](crate::core::config::settings::WARMUP_CHECK_ROUNDS)). They are in no row, no
/// failure and no metric; the run's start (`started_at_unix_ns`, and the origin of every row's
/// `started_at_ms`) is read after they end.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClientWarmup {
    /// Warm-up requests sent, the priming and the check rounds together.
    pub requests: u64,
    /// From just before the first warm-up `fetch()` to the end of the last warm-up stream, in
    /// ms of the page's monotonic clock.
    pub duration_ms: f64,
    /// Warm-up requests that failed. A failure stops the run before any measured request and
    /// no artifact is written, so a written artifact says 0; the field is there so that a
    /// reader never has to assume it.
    pub failures: u64,
    /// Check rounds sent after the priming round. Omitted by strobe versions without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_rounds: Option<u64>,
    /// What the last check round found. Omitted by strobe versions without check rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<WarmupConnections>,
}

impl ClientWarmup {
    /// This record with the check rounds that followed the priming round and their verdict.
    pub fn with_check(self, rounds: u64, connections: WarmupConnections) -> Self {
        Self {
            check_rounds: Some(rounds),
            connections: Some(connections),
            ..self
        }
    }
}

/// `client.warmup.connections`: whether the connections the measured requests need were open
/// when the run started, as the last warm-up check round saw it. In a check round every
/// connection the slots need carries one request, all sent at the same moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarmupConnections {
    /// At every endpoint, the round's requests were on the wire together, each on a
    /// connection that was already open (or the endpoint multiplexes them over HTTP/2 or 3):
    /// the first wave finds its connections open.
    Ready,
    /// A request of the round opened a connection: a first-wave row may still pay for one
    /// (its `new_connection` says so).
    StillOpening,
    /// Every request reused a connection, but they were not all on the wire at once (answers
    /// so quick that one ended before another was sent), so the round cannot show that every
    /// slot has its own connection.
    NotShown,
    /// The browser kept no timing for some request (the endpoint sent no
    /// `Timing-Allow-Origin`, or no entry came) and none showed a new connection.
    Unknown,
}

impl WarmupConnections {
    /// Whether another check round could change the verdict: while connections are still
    /// being opened, or while the requests did not overlap.
    pub fn worth_another_round(self) -> bool {
        matches!(self, Self::StillOpening | Self::NotShown)
    }
}

/// `client.transport`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientTransport {
    /// Distinct `nextHopProtocol` values of the requests (`h2`, `http/1.1`, …), sorted.
    pub http_protocols_seen: Vec<String>,
    /// Requests waited for a free connection (the browser's per-host limit, ~6 on HTTP/1.1),
    /// so their TTFO includes queueing the server never saw.
    pub connection_limit_suspected: bool,
    /// Base URLs the run spread its concurrency slots over: 1, or more with an endpoint pool.
    /// Omitted by strobe versions without pools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoints: Option<u64>,
    /// The most measured requests the run had in flight to one origin at any moment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight_per_origin: Option<u64>,
}

impl ClientTransport {
    /// What a run saw: `protocols` (Resource Timing's `nextHopProtocol` values), the number of
    /// endpoints, and the most requests it had in flight to one origin at once. Queueing is
    /// suspected when more than [`BROWSER_HTTP1_CONNECTIONS_PER_HOST`] were in flight to one
    /// origin and no multiplexing protocol (HTTP/2 or 3) was seen to carry them.
    pub fn observed(
        mut protocols: Vec<String>,
        endpoints: u64,
        max_in_flight_per_origin: u64,
    ) -> Self {
        protocols.sort();
        protocols.dedup();
        let multiplexed = protocols
            .iter()
            .any(|protocol| protocol.starts_with("h2") || protocol.starts_with("h3"));
        Self {
            connection_limit_suspected: max_in_flight_per_origin
                > BROWSER_HTTP1_CONNECTIONS_PER_HOST
                && !multiplexed,
            http_protocols_seen: protocols,
            endpoints: Some(endpoints),
            max_in_flight_per_origin: Some(max_in_flight_per_origin),
        }
    }
}

/// `client.sse`: totals of the requests' read statistics over the run
/// ([`ClientSseCounts::total`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientSseCounts {
    /// Network reads.
    pub reads: u64,
    /// Stream events consumed.
    pub events: u64,
    /// Events that arrived in a read with other events and so share its timestamp.
    pub events_sharing_a_read: u64,
    /// Completed requests whose stream looks buffered on its way (many events in one or two
    /// reads, [`ReadStats::looks_buffered`](crate::core::observe::accumulate::ReadStats::looks_buffered)); omitted when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub buffered_streams: u64,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}
