//! The `anvil-serving.benchmark/v1` artifact as strobe writes it, and its recomputation.
//!
//! This module owns [`ArtifactV1`] (the 41 top-level keys of the reference artifact plus
//! strobe's optional [`ClientBlock`], ARTIFACT.md §8, §12), [`build_artifact`] (from a plan, one
//! outcome per planned request and the caller's run timing to the artifact: §7 metrics, §8.1
//! fields, §8.2 `metric_population`, §8.3 `timing_methodology`), the byte-exact text of §8.4
//! ([`ArtifactV1::to_json_text`]), and [`recompute_from_rows`], which recomputes every field of
//! an artifact file that its rows determine and reports each difference bit for bit.
//!
//! Like the rest of the core it never reads a clock: the caller supplies [`RunTiming`].

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use thiserror::Error;

use crate::core::observe::{
    CompletedRequest, FailureRecord, OutputTokenSource, ReadStats, RequestError, RequestOutcome,
    RequestTiming, ResourceTimingEntry,
};
use crate::core::plan::{
    ControlledOutputPolicy, LiveView, MeasurementThread, PromptCacheMode, RunConfig, RunPlan,
    BROWSER_HTTP1_CONNECTIONS_PER_HOST,
};
use crate::core::pyjson::{dumps_artifact, python_float_repr, PyJsonError};
use crate::core::stats::{
    exact_mean, write_distribution_family, DISTRIBUTION_FAMILIES, DISTRIBUTION_STATS,
};
use crate::core::validate::{detect_generation, Generation, SCHEMA};

/// `timestamp_precision`: the ns fields are exact, the ISO labels whole seconds.
pub const TIMESTAMP_PRECISION: &str = "nanosecond-unix-fields; ISO labels are second precision";

/// What [`ArtifactV1::redact_base_url`] writes into `base_url`.
pub const REDACTED_BASE_URL: &str = "[operator identity redacted]";

/// `client.name`.
pub const CLIENT_NAME: &str = "strobe";

/// `timing_methodology.clock` of the reference producer, kept when no [`ClientBlock`] says how
/// the times were taken.
pub const REFERENCE_CLOCK: &str = "client time.perf_counter";

/// `metric_population.p99_minimum_recommended_samples`.
pub const P99_MINIMUM_RECOMMENDED_SAMPLES: u64 = 100;

/// `p99_interpretation` with at least [`P99_MINIMUM_RECOMMENDED_SAMPLES`] samples.
pub const P99_TAIL_ESTIMATE: &str = "tail-estimate";

/// `p99_interpretation` below [`P99_MINIMUM_RECOMMENDED_SAMPLES`] samples.
pub const P99_DESCRIPTIVE_ONLY: &str = "descriptive-nearest-rank-only";

/// `metric_population.failure_policy`.
pub const FAILURE_POLICY: &str = "failed or contract-invalid responses retain sanitized timing \
     and metadata but are excluded from performance distributions";

/// The metrics whose p99 `metric_population` interprets, by family prefix.
pub const P99_METRICS: [&str; 5] = [
    "ttft",
    "e2e",
    "effective_prefill_tok_s",
    "decode_tok_s",
    "tpot",
];

/// The row fields a reader can recompute from the row's own times and token counts (§5).
pub const DERIVED_ROW_FIELDS: [&str; 7] = [
    "generation_ms",
    "visible_generation_ms",
    "effective_prefill_tok_s",
    "decode_tok_s",
    "mean_inter_token_latency_ms",
    "mean_time_per_output_token_ms",
    "tpot_ms",
];

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// Why an artifact cannot be built, written or recomputed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ArtifactError {
    /// A time or statistic is NaN or infinite; JSON cannot hold it and readers reject it.
    #[error(
        "{field} is {value}, which JSON cannot hold; the caller's clock produced a non-finite \
         time, so check the timestamps the browser passed in"
    )]
    NonFiniteValue {
        /// Where the value sits, e.g. `request_timings[3].ttft_ms`.
        field: String,
        /// The offending value.
        value: f64,
    },
    /// A statistic overflowed to infinity although its inputs were finite.
    #[error(
        "metrics.{key} overflowed (the row values are too large to average); check the rows \
         for absurd values"
    )]
    NonFiniteStatistic {
        /// The metrics key.
        key: String,
    },
    /// The run's wall time is negative.
    #[error(
        "the run's wall time is {wall_seconds} s; it must be ≥ 0, so pass the monotonic time \
         elapsed between the run's start and its end"
    )]
    NegativeWallTime {
        /// The offending wall time.
        wall_seconds: f64,
    },
    /// `finished_at_unix_ns` lies before `started_at_unix_ns`.
    #[error(
        "the run finished ({finished_at_unix_ns} ns) before it started ({started_at_unix_ns} \
         ns); read the wall clock at the start and again at the end of the run"
    )]
    FinishedBeforeStarted {
        /// Start, epoch ns.
        started_at_unix_ns: i64,
        /// End, epoch ns.
        finished_at_unix_ns: i64,
    },
    /// The config passed in is not the one the plan was made from.
    #[error(
        "the run settings differ from the settings the plan was made from; pass \
         `plan.config()` (or the config given to `RunPlan::new`)"
    )]
    ConfigDoesNotMatchPlan,
    /// An outcome names a request the plan does not have.
    #[error(
        "an outcome is for request {request_index}, but the plan has only {requests} requests \
         (indexes 0..{requests}); the scheduler mixed up runs"
    )]
    OutcomeOutsidePlan {
        /// The outcome's index.
        request_index: u64,
        /// Planned requests.
        requests: u64,
    },
    /// Two outcomes name the same request.
    #[error(
        "request {request_index} has more than one outcome; record exactly one result or \
         failure per request"
    )]
    DuplicateOutcome {
        /// The repeated index.
        request_index: u64,
    },
    /// Some planned requests have no outcome.
    #[error(
        "{missing} planned request(s) have no outcome (first: {first:?}); a cancelled run must \
         record each request it never started as a failure (e.g. a request_error with \
         RequestError::cancelled()) before the artifact is built"
    )]
    MissingOutcomes {
        /// How many indexes lack an outcome.
        missing: usize,
        /// The first few of them.
        first: Vec<u64>,
    },
    /// A completed request's row carries another request's index.
    #[error(
        "the result of request {request_index} carries a timing row for request {row_index}; \
         build the row from the same request's facts"
    )]
    RowIndexMismatch {
        /// The outcome's index.
        request_index: u64,
        /// The row's index.
        row_index: u64,
    },
    /// An outcome records a planned context other than the plan's.
    #[error(
        "request {request_index} records planned_context_tokens {recorded}, but the plan says \
         {planned}; take it from the plan"
    )]
    PlannedContextMismatch {
        /// The request.
        request_index: u64,
        /// The plan's value.
        planned: u64,
        /// The outcome's value.
        recorded: u64,
    },
    /// A count overflowed 64 bits (only possible with absurd input files).
    #[error("{field} overflows a 64-bit count; the file's token counts are not plausible")]
    CountOverflow {
        /// The sum that overflowed.
        field: String,
    },
    /// The JSON writer refused a value.
    #[error(transparent)]
    Serialization(#[from] PyJsonError),
    /// The artifact could not be turned into a JSON value.
    #[error("the artifact could not be encoded as JSON: {reason}")]
    Encoding {
        /// serde_json's reason.
        reason: String,
    },
    /// The file is of a generation whose metrics cannot be recomputed.
    #[error("cannot recompute a {generation} artifact: {reason}")]
    NotRecomputable {
        /// The generation read (§10).
        generation: Generation,
        /// Why, and what to do instead.
        reason: String,
    },
    /// A field the recomputation needs is missing or of the wrong type.
    #[error(
        "cannot recompute: {path} {reason}; run `strobe-artifact validate` on the file to see \
         every problem"
    )]
    MalformedField {
        /// JSON path, e.g. `$.request_timings[2]`.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
}

// ---------------------------------------------------------------------------------------------
// Inputs the caller supplies
// ---------------------------------------------------------------------------------------------

/// When the run happened, as the caller measured it; the core never reads a clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunTiming {
    /// Wall-clock epoch ns read just before the first request (browser:
    /// `performance.timeOrigin + performance.now()`, in ns).
    pub started_at_unix_ns: i64,
    /// Wall-clock epoch ns read after the last request ended.
    pub finished_at_unix_ns: i64,
    /// Monotonic seconds from the run's start to its end (browser: the difference of two
    /// `performance.now()` readings, divided by 1000).
    pub wall_seconds: f64,
}

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
/// [`WARMUP_CHECK_ROUNDS`](crate::core::plan::WARMUP_CHECK_ROUNDS)). They are in no row, no
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
    /// The verdict on one check round. `endpoints` holds, per endpoint, the Resource Timing
    /// entry of each of its check requests (`None`: the browser kept none). One new connection
    /// anywhere decides it; then missing timing; then, on HTTP/1.x, whether each endpoint's
    /// requests overlapped: one still waiting to be sent while another's response was still
    /// arriving (`max requestStart < min responseEnd`). Over HTTP/1.x a connection carries one
    /// request at a time, so overlapping requests on reused connections prove that many
    /// connections were open.
    pub fn of_round(endpoints: &[Vec<Option<&ResourceTimingEntry>>]) -> Self {
        let entries = || endpoints.iter().flatten();
        let opened = entries()
            .flatten()
            .any(|entry| !entry.timing_withheld() && entry.connect_end_ms > entry.fetch_start_ms);
        if opened {
            return Self::StillOpening;
        }
        if entries().any(|entry| entry.is_none_or(ResourceTimingEntry::timing_withheld)) {
            return Self::Unknown;
        }
        let overlapped = |requests: &Vec<Option<&ResourceTimingEntry>>| {
            let requests: Vec<&ResourceTimingEntry> = requests.iter().flatten().copied().collect();
            let multiplexed = requests
                .iter()
                .all(|entry| matches!(entry.next_hop_protocol.trim(), "h2" | "h3"));
            let last_sent = requests
                .iter()
                .map(|e| e.request_start_ms)
                .fold(f64::MIN, f64::max);
            let first_ended = requests
                .iter()
                .map(|e| e.response_end_ms)
                .fold(f64::MAX, f64::min);
            multiplexed || requests.len() < 2 || last_sent < first_ended
        };
        if endpoints.iter().all(overlapped) {
            Self::Ready
        } else {
            Self::NotShown
        }
    }

    /// Whether another check round could change the verdict: while connections are still
    /// being opened, or while the requests did not overlap.
    pub fn worth_another_round(self) -> bool {
        matches!(self, Self::StillOpening | Self::NotShown)
    }
}

/// Why the warm-up stopped a run before its first measured request (then no artifact is
/// written: a run whose warm-up failed would only have recorded the same error on every row).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum WarmupError {
    /// Some warm-up requests failed; `first` is the first failure's error.
    #[error(
        "the warm-up failed, so no request was measured: {failed} of {requests} warm-up \
         requests failed, the first with {first}. The warm-up sends what the measured requests \
         send (same URL, headers and model, max_tokens 1): fix what the error names and run \
         again. Turning Warm-up off would not help; every measured request would fail the same \
         way."
    )]
    Failed {
        /// Warm-up requests that failed.
        failed: u64,
        /// Warm-up requests sent.
        requests: u64,
        /// The first failure, with its type and sanitized reason.
        first: RequestError,
    },
    /// The user cancelled during the warm-up.
    #[error("the run was cancelled during the warm-up, before any request was measured")]
    Cancelled,
}

impl WarmupError {
    /// The outcome of a warm-up of `requests` requests, given each one's error (if it failed).
    /// `duration_ms` goes into the [`ClientWarmup`] record when none failed.
    pub fn check(
        requests: u64,
        duration_ms: f64,
        errors: impl IntoIterator<Item = RequestError>,
    ) -> Result<ClientWarmup, Self> {
        let mut errors = errors.into_iter();
        match errors.next() {
            None => Ok(ClientWarmup {
                requests,
                duration_ms,
                failures: 0,
                check_rounds: None,
                connections: None,
            }),
            Some(first) => Err(Self::Failed {
                failed: 1 + errors.count() as u64,
                requests,
                first,
            }),
        }
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

/// `client.sse`: totals of [`ReadStats`] over the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientSseCounts {
    /// Network reads.
    pub reads: u64,
    /// Stream events consumed.
    pub events: u64,
    /// Events that arrived in a read with other events and so share its timestamp.
    pub events_sharing_a_read: u64,
}

impl ClientSseCounts {
    /// Sums per-request read statistics.
    pub fn total<'a>(stats: impl IntoIterator<Item = &'a ReadStats>) -> Self {
        stats
            .into_iter()
            .fold(Self::default(), |total, stats| Self {
                reads: total.reads.saturating_add(stats.reads),
                events: total.events.saturating_add(stats.events),
                events_sharing_a_read: total
                    .events_sharing_a_read
                    .saturating_add(stats.events_sharing_a_read),
            })
    }

    /// Sums the read statistics of the completed requests among `outcomes` (failure records
    /// keep no read statistics).
    pub fn of_outcomes(outcomes: &[RequestOutcome]) -> Self {
        Self::total(outcomes.iter().filter_map(|outcome| match outcome {
            RequestOutcome::Completed(completed) => Some(&completed.read_stats),
            RequestOutcome::Failed(_) => None,
        }))
    }
}

// ---------------------------------------------------------------------------------------------
// The artifact
// ---------------------------------------------------------------------------------------------

/// `measurement_protocol`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MeasurementProtocol {
    /// No successful result streamed reasoning.
    #[serde(rename = "capacity-v3")]
    CapacityV3,
    /// Some successful result streamed reasoning.
    #[serde(rename = "capacity-v4-reasoning")]
    CapacityV4Reasoning,
}

impl MeasurementProtocol {
    /// `capacity-v4-reasoning` when successful results streamed reasoning, else `capacity-v3`
    /// (an all-failed run that reasoned is still v3, §11.7).
    pub fn for_reasoning_chunks(reasoning_chunks: u64) -> Self {
        if reasoning_chunks > 0 {
            Self::CapacityV4Reasoning
        } else {
            Self::CapacityV3
        }
    }

    /// The artifact spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CapacityV3 => "capacity-v3",
            Self::CapacityV4Reasoning => "capacity-v4-reasoning",
        }
    }
}

impl fmt::Display for MeasurementProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `metric_population` (§8.2): who the metrics describe and how far to trust p99.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetricPopulation {
    /// `requests` (n).
    pub attempted_requests: u64,
    /// `completed`.
    pub successful_requests: u64,
    /// `completed` again (every success is performance-eligible).
    pub performance_eligible_requests: u64,
    /// `failed`.
    pub excluded_requests: u64,
    /// `metrics.throughput_performance_eligible`.
    pub aggregate_throughput_eligible: bool,
    /// Always [`P99_MINIMUM_RECOMMENDED_SAMPLES`].
    pub p99_minimum_recommended_samples: u64,
    /// [`P99_TAIL_ESTIMATE`] when completed ≥ 100, else [`P99_DESCRIPTIVE_ONLY`].
    pub p99_interpretation: String,
    /// `{name}_samples` of each of [`P99_METRICS`].
    pub p99_samples_by_metric: BTreeMap<String, u64>,
    /// The interpretation per metric, by its own sample count.
    pub p99_interpretation_by_metric: BTreeMap<String, String>,
    /// Always [`FAILURE_POLICY`].
    pub failure_policy: String,
}

impl MetricPopulation {
    /// Builds the block from the counts and the finished `metrics`.
    pub fn from_metrics(
        attempted_requests: u64,
        successful_requests: u64,
        excluded_requests: u64,
        metrics: &Map<String, Value>,
    ) -> Self {
        let samples_by_metric: BTreeMap<String, u64> = P99_METRICS
            .iter()
            .map(|name| {
                let samples = metrics
                    .get(&format!("{name}_samples"))
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                ((*name).to_owned(), samples)
            })
            .collect();
        let interpretation_by_metric = samples_by_metric
            .iter()
            .map(|(name, samples)| (name.clone(), p99_interpretation(*samples).to_owned()))
            .collect();
        Self {
            attempted_requests,
            successful_requests,
            performance_eligible_requests: successful_requests,
            excluded_requests,
            aggregate_throughput_eligible: metrics
                .get("throughput_performance_eligible")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            p99_minimum_recommended_samples: P99_MINIMUM_RECOMMENDED_SAMPLES,
            p99_interpretation: p99_interpretation(successful_requests).to_owned(),
            p99_samples_by_metric: samples_by_metric,
            p99_interpretation_by_metric: interpretation_by_metric,
            failure_policy: FAILURE_POLICY.to_owned(),
        }
    }
}

/// How far a p99 over `samples` values can be trusted.
pub fn p99_interpretation(samples: u64) -> &'static str {
    if samples >= P99_MINIMUM_RECOMMENDED_SAMPLES {
        P99_TAIL_ESTIMATE
    } else {
        P99_DESCRIPTIVE_ONLY
    }
}

/// `timing_methodology` (§8.3): what each timing means. Every string but `clock` is the
/// reference producer's, byte for byte, because readers compare them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimingMethodology {
    /// The clock the request times come from ([`REFERENCE_CLOCK`] or [`browser_clock`]).
    pub clock: String,
    /// What the ns fields are.
    pub artifact_timestamps: String,
    /// What TTFT measures.
    pub ttft: String,
    /// What TTFO measures.
    pub time_to_first_output: String,
    /// What the prefill rate measures.
    pub effective_prefill: String,
    /// What generation time is.
    pub generation: String,
    /// What the decode rate is.
    pub decode: String,
    /// What the legacy ITL key is.
    pub mean_inter_token_latency: String,
    /// What TPOT is.
    pub tpot: String,
    /// How the distributions are summarized.
    pub distributions: String,
    /// How to read p99.
    pub p99: String,
    /// What the canaries check.
    pub request_canaries: String,
    /// What controlled output records.
    pub controlled_output: String,
}

impl TimingMethodology {
    /// The reference producer's strings with `clock` replaced.
    pub fn with_clock(clock: impl Into<String>) -> Self {
        Self {
            clock: clock.into(),
            artifact_timestamps: "time.time_ns Unix timestamps; independent artifacts may align \
                                  them only when the operator supplied the same explicit \
                                  clock_domain_id"
                .to_owned(),
            ttft: "request start through the first non-empty streamed content delta".to_owned(),
            time_to_first_output: "request start through the first non-empty streamed \
                                   reasoning or content delta"
                .to_owned(),
            effective_prefill: "usage.prompt_tokens divided by client-observed time to first \
                                output; includes queueing, scheduling, prefill, and \
                                first-token work"
                .to_owned(),
            generation: "client-observed E2E minus time to first output".to_owned(),
            decode: "usage completion tokens after the first token divided by client-observed \
                     generation time; completion tokens may include reasoning tokens"
                .to_owned(),
            mean_inter_token_latency: "legacy key for a TPOT proxy: client-observed generation \
                                       time divided by completion tokens after the first \
                                       token; not raw per-token ITL"
                .to_owned(),
            tpot: "client-observed mean time per output token after the first output; \
                   identical to the legacy mean_inter_token_latency key"
                .to_owned(),
            distributions: "request-level mean, sample standard deviation, normal-approximation \
                            95% confidence interval for the mean, min, p25, p50, p75, p90, p95, \
                            p99, and max using the nearest-rank percentile method"
                .to_owned(),
            p99: "numeric nearest-rank p99 is always retained for compatibility; it is \
                  descriptive only below 100 eligible samples"
                .to_owned(),
            request_canaries: "when enabled, each response must begin with its own synthetic \
                               marker and contain no other ANVIL_REQ marker; bounded/truncated \
                               captures fail closed and are excluded from performance metrics"
                .to_owned(),
            controlled_output: "--response-words adherence is recorded; observe preserves \
                                historical behavior while strict rejects non-exact or \
                                truncated completions; visible response capture is capped at \
                                8192 characters"
                .to_owned(),
        }
    }
}

/// `timing_methodology.clock` for a browser run:
/// `browser performance.now(); resolution <ms> ms; cross-origin isolated: <bool>`, the
/// resolution in Python's float repr.
pub fn browser_clock(
    timer_resolution_ms: f64,
    cross_origin_isolated: bool,
) -> Result<String, ArtifactError> {
    let resolution =
        python_float_repr(timer_resolution_ms).map_err(|_| ArtifactError::NonFiniteValue {
            field: "client.timer_resolution_ms".to_owned(),
            value: timer_resolution_ms,
        })?;
    Ok(format!(
        "browser performance.now(); resolution {resolution} ms; cross-origin isolated: \
         {cross_origin_isolated}"
    ))
}

/// A v1 capacity artifact: the reference artifact's 41 keys (§8.1) plus strobe's `client`.
///
/// Field order here is irrelevant: the writer sorts keys (§8.4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArtifactV1 {
    /// Always `anvil-serving.benchmark/v1`.
    pub schema: String,
    /// v4-reasoning when successful results streamed reasoning, else v3.
    pub measurement_protocol: MeasurementProtocol,
    /// `benchmark-` + UTC `%Y%m%dT%H%M%SZ` of `started_at_unix_ns // 10⁹`.
    pub run_id: String,
    /// UTC `%Y-%m-%dT%H:%M:%SZ` of `started_at_unix_ns // 10⁹` (integer floor division, §11.6).
    pub started_at: String,
    /// UTC `%Y-%m-%dT%H:%M:%SZ` of `finished_at_unix_ns // 10⁹`.
    pub finished_at: String,
    /// Wall-clock epoch ns at the run's start, as the caller read it.
    pub started_at_unix_ns: i64,
    /// Wall-clock epoch ns at the run's end.
    pub finished_at_unix_ns: i64,
    /// Always [`TIMESTAMP_PRECISION`].
    pub timestamp_precision: String,
    /// The operator's clock domain, or null.
    pub clock_domain_id: Option<String>,
    /// The operator's `sha256:` configuration fingerprint, or null.
    pub configuration_fingerprint: Option<String>,
    /// `wall_seconds × 1000.0`.
    pub wall_clock_ms: f64,
    /// The endpoint as configured, or [`REDACTED_BASE_URL`] after redaction.
    pub base_url: String,
    /// The model id sent.
    pub model: String,
    /// Engine label, or null.
    pub engine: Option<String>,
    /// GPU label, or null.
    pub gpu: Option<String>,
    /// Tier label, or null.
    pub tier: Option<String>,
    /// Manifest path of the reference CLI's tier registry; strobe has none, so null.
    pub manifest: Option<String>,
    /// Recipe resolved from the reference CLI's tier registry; strobe has none, so null.
    pub source_recipe: Option<String>,
    /// n: planned requests.
    pub requests: u64,
    /// Successful results.
    pub completed: u64,
    /// Failure records.
    pub failed: u64,
    /// Failure records sorted by request_index (§6.3).
    pub failures: Vec<FailureRecord>,
    /// `completed` + failures whose response arrived.
    pub responses_received: u64,
    /// conc: requests in flight at once.
    pub concurrency: u64,
    /// The fixed context setting before clamping, or null when sampled.
    pub context_tokens: Option<u64>,
    /// The sampler seed (always recorded).
    pub context_seed: i64,
    /// Counts of the clamped planned contexts by decimal string.
    pub context_distribution: BTreeMap<String, u64>,
    /// The resolved `max_model_len`, or null when unknown.
    pub max_context_tokens: Option<u64>,
    /// `max_tokens` sent.
    pub max_tokens: u64,
    /// `--response-words`.
    pub response_words: u64,
    /// Shared or unique prompts.
    pub prompt_cache_mode: PromptCacheMode,
    /// The shared prefix setting in shared mode, 0 in unique mode.
    pub shared_prefix_tokens: u64,
    /// Canaries were on.
    pub request_canaries: bool,
    /// The policy (written even when `response_words` is 0, §11.8).
    pub controlled_output_policy: ControlledOutputPolicy,
    /// completed == n and no failures.
    pub performance_eligible: bool,
    /// §8.2.
    pub metric_population: MetricPopulation,
    /// `{no_thinking, reasoning_effort, shared_prefix_burst, thinking_mode}` (§3), as
    /// [`RunPlan::serve_flags`] gives it.
    pub serve_flags: Value,
    /// `{temperature, top_p}` × `{requested, effective_request, sent}` (§3), as
    /// [`RunPlan::sampling_block`] gives it.
    pub sampling: Value,
    /// §8.3.
    pub timing_methodology: TimingMethodology,
    /// Rows of the successful results, sorted by request_index (§5).
    pub request_timings: Vec<RequestTiming>,
    /// The 159 keys of §7: 11 distribution families × 13 keys and 16 scalars.
    pub metrics: Map<String, Value>,
    /// strobe's measurement context (§12); omitted when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientBlock>,
}

impl ArtifactV1 {
    /// The file's exact text (§8.4): sorted keys, 2-space indent, ASCII escaping, Python float
    /// reprs, one trailing newline. Refuses NaN and infinities.
    pub fn to_json_text(&self) -> Result<String, ArtifactError> {
        // serde_json turns a non-finite float into null silently, so look first.
        if let Some((field, value)) = self.first_non_finite() {
            return Err(ArtifactError::NonFiniteValue { field, value });
        }
        let value = serde_json::to_value(self).map_err(|error| ArtifactError::Encoding {
            reason: error.to_string(),
        })?;
        Ok(dumps_artifact(&value)?)
    }

    /// Replaces `base_url` with [`REDACTED_BASE_URL`] (the publication step of §11.14).
    pub fn redact_base_url(&mut self) {
        REDACTED_BASE_URL.clone_into(&mut self.base_url);
    }

    /// `<run_id>.json`, the run id made safe by [`file_stem`](crate::core::export::file_stem)
    /// (characters outside `[A-Za-z0-9._-]` replaced by `_`; `benchmark` first when it would
    /// be empty or start with a dot).
    pub fn file_name(&self) -> String {
        format!(
            "{}.json",
            crate::core::export::file_stem(&self.run_id, "benchmark")
        )
    }

    /// The first float that is NaN or infinite, with its place.
    fn first_non_finite(&self) -> Option<(String, f64)> {
        let mut floats: Vec<(String, f64)> = vec![("wall_clock_ms".to_owned(), self.wall_clock_ms)];
        if let Some(client) = &self.client {
            floats.push((
                "client.timer_resolution_ms".to_owned(),
                client.timer_resolution_ms,
            ));
        }
        for (position, row) in self.request_timings.iter().enumerate() {
            floats.extend(row_floats(&format!("request_timings[{position}]"), row));
        }
        for (position, failure) in self.failures.iter().enumerate() {
            floats.extend(failure_floats(&format!("failures[{position}]"), failure));
        }
        floats.into_iter().find(|(_, value)| !value.is_finite())
    }
}

/// Every float of a row, named `{place}.{field}`.
fn row_floats(place: &str, row: &RequestTiming) -> Vec<(String, f64)> {
    let fields = [
        ("time_to_first_output_ms", Some(row.time_to_first_output_ms)),
        ("ttft_ms", Some(row.ttft_ms)),
        ("generation_ms", Some(row.generation_ms)),
        ("visible_generation_ms", Some(row.visible_generation_ms)),
        ("e2e_ms", Some(row.e2e_ms)),
        ("effective_prefill_tok_s", row.effective_prefill_tok_s),
        ("decode_tok_s", row.decode_tok_s),
        (
            "mean_inter_token_latency_ms",
            row.mean_inter_token_latency_ms,
        ),
        (
            "mean_time_per_output_token_ms",
            row.mean_time_per_output_token_ms,
        ),
        ("tpot_ms", row.tpot_ms),
        ("started_at_ms", row.started_at_ms),
    ];
    fields
        .into_iter()
        .filter_map(|(field, value)| value.map(|value| (format!("{place}.{field}"), value)))
        .collect()
}

/// Every float of a failure record, its response row included.
fn failure_floats(place: &str, failure: &FailureRecord) -> Vec<(String, f64)> {
    let mut floats: Vec<(String, f64)> = failure
        .elapsed_ms
        .map(|elapsed| (format!("{place}.elapsed_ms"), elapsed))
        .into_iter()
        .collect();
    if let Some(Some(row)) = &failure.response_timing {
        floats.extend(row_floats(&format!("{place}.response_timing"), row));
    }
    floats
}

fn check_finite(floats: Vec<(String, f64)>) -> Result<(), ArtifactError> {
    match floats.into_iter().find(|(_, value)| !value.is_finite()) {
        Some((field, value)) => Err(ArtifactError::NonFiniteValue { field, value }),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// Time labels (§8.1, §11.6)
// ---------------------------------------------------------------------------------------------

/// A UTC calendar time to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UtcSecond {
    /// Proleptic Gregorian year.
    pub year: i64,
    /// 1..=12.
    pub month: u32,
    /// 1..=31.
    pub day: u32,
    /// 0..=23.
    pub hour: u32,
    /// 0..=59.
    pub minute: u32,
    /// 0..=59.
    pub second: u32,
}

impl UtcSecond {
    /// The second containing `unix_ns`, by integer floor division (so a time 0.1 µs before a
    /// second boundary stays in the earlier second, which is what readers check, §11.6).
    pub fn from_unix_ns(unix_ns: i64) -> Self {
        let seconds = unix_ns.div_euclid(1_000_000_000);
        let days = seconds.div_euclid(86_400);
        // 0..86_400, so the narrowing below cannot lose anything.
        let second_of_day = seconds.rem_euclid(86_400) as u32;
        let (year, month, day) = civil_from_days(days);
        Self {
            year,
            month,
            day,
            hour: second_of_day / 3_600,
            minute: second_of_day / 60 % 60,
            second: second_of_day % 60,
        }
    }

    /// `%Y-%m-%dT%H:%M:%SZ`, the `started_at` / `finished_at` label.
    pub fn iso_label(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// `benchmark-%Y%m%dT%H%M%SZ`, the `run_id`.
    pub fn run_id(&self) -> String {
        format!(
            "benchmark-{:04}{:02}{:02}T{:02}{:02}{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// The proleptic Gregorian (year, month, day) of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`; shifting the year to start in March puts the leap day last).
pub fn civil_from_days(days_since_epoch: i64) -> (i64, u32, u32) {
    let shifted = days_since_epoch + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    // Both are small and positive by construction (1..=31, 1..=12).
    (year, month as u32, day as u32)
}

// ---------------------------------------------------------------------------------------------
// Metrics (§7)
// ---------------------------------------------------------------------------------------------

/// The per-result totals `metrics` needs beyond the rows. The builder takes them from the
/// results; a recomputation from a file can only take them from the rows.
#[derive(Clone, Debug, PartialEq)]
struct ResultTotals {
    output_tokens: Option<u64>,
    content_chunks: u64,
    reasoning_chunks: u64,
    output_token_sources: BTreeMap<String, u64>,
    /// `None` when not recomputable at all; `Some(None)` when nothing qualified.
    prefix_cache_hit_avg: Option<Option<f64>>,
}

impl ResultTotals {
    /// From the successful results (§7.2).
    fn of_results(results: &[CompletedRequest]) -> Result<Self, ArtifactError> {
        let all_exact = results
            .iter()
            .all(|result| result.output_token_source == OutputTokenSource::Usage);
        let output_tokens = if all_exact {
            Some(checked_sum(
                "metrics.output_tokens",
                results.iter().map(|result| result.out_toks),
            )?)
        } else {
            None
        };
        let mut output_token_sources = BTreeMap::new();
        for result in results {
            *output_token_sources
                .entry(result.output_token_source.as_str().to_owned())
                .or_insert(0) += 1;
        }
        let fractions: Vec<f64> = results
            .iter()
            .filter_map(|result| result.cached_fraction)
            .collect();
        Ok(Self {
            output_tokens,
            content_chunks: checked_sum(
                "metrics.content_chunks",
                results.iter().map(|result| result.content_chunks),
            )?,
            reasoning_chunks: checked_sum(
                "metrics.reasoning_chunks",
                results.iter().map(|result| result.reasoning_chunks),
            )?,
            output_token_sources,
            prefix_cache_hit_avg: Some(exact_mean(&fractions)),
        })
    }

    /// From timing rows read back from a file: every result is assumed to have its row.
    /// The cache average is recomputable only when every row carries `cached_tokens`.
    fn of_rows(rows: &[RequestTiming]) -> Result<Self, ArtifactError> {
        let all_exact = rows.iter().all(|row| {
            matches!(row.output_token_source.as_str(), "usage" | "unknown")
                && row.output_tokens.is_some()
        });
        let output_tokens = if all_exact {
            Some(checked_sum(
                "metrics.output_tokens",
                rows.iter().filter_map(|row| row.output_tokens),
            )?)
        } else {
            None
        };
        let mut output_token_sources = BTreeMap::new();
        for row in rows {
            *output_token_sources
                .entry(row.output_token_source.clone())
                .or_insert(0) += 1;
        }
        let prefix_cache_hit_avg = if rows.iter().all(|row| row.cached_tokens.is_some()) {
            let fractions: Vec<f64> = rows
                .iter()
                .filter_map(|row| {
                    let cached = row.cached_tokens.flatten()?;
                    let prompt = row.prompt_tokens.filter(|&prompt| prompt != 0)?;
                    Some(cached as f64 / prompt as f64)
                })
                .collect();
            Some(exact_mean(&fractions))
        } else {
            None
        };
        Ok(Self {
            output_tokens,
            content_chunks: checked_sum(
                "metrics.content_chunks",
                rows.iter().map(|row| row.content_chunks),
            )?,
            reasoning_chunks: checked_sum(
                "metrics.reasoning_chunks",
                rows.iter().map(|row| row.reasoning_chunks),
            )?,
            output_token_sources,
            prefix_cache_hit_avg,
        })
    }
}

fn checked_sum(field: &str, mut values: impl Iterator<Item = u64>) -> Result<u64, ArtifactError> {
    values
        .try_fold(0_u64, u64::checked_add)
        .ok_or_else(|| ArtifactError::CountOverflow {
            field: field.to_owned(),
        })
}

/// The value a distribution family reads from a row, by the row field name of
/// [`DISTRIBUTION_FAMILIES`]; `None` for a null (skipped) value.
fn row_field_value(row: &RequestTiming, field: &str) -> Option<f64> {
    match field {
        "time_to_first_output_ms" => Some(row.time_to_first_output_ms),
        "ttft_ms" => Some(row.ttft_ms),
        "generation_ms" => Some(row.generation_ms),
        "e2e_ms" => Some(row.e2e_ms),
        "effective_prefill_tok_s" => row.effective_prefill_tok_s,
        "decode_tok_s" => row.decode_tok_s,
        "mean_inter_token_latency_ms" => row.mean_inter_token_latency_ms,
        "mean_time_per_output_token_ms" => row.mean_time_per_output_token_ms,
        "prompt_tokens" => row.prompt_tokens.map(|tokens| tokens as f64),
        "output_tokens" => row.output_tokens.map(|tokens| tokens as f64),
        _ => None,
    }
}

/// The 159 `metrics` keys (§7.1, §7.2). `prefix_cache_hit_avg` is left out when
/// `totals` cannot say it.
fn compute_metrics(
    rows: &[RequestTiming],
    totals: &ResultTotals,
    performance_eligible: bool,
    wall_seconds: f64,
) -> Result<Map<String, Value>, ArtifactError> {
    let mut metrics = Map::new();
    for family in DISTRIBUTION_FAMILIES {
        let values: Vec<f64> = rows
            .iter()
            .filter_map(|row| row_field_value(row, family.row_field))
            .collect();
        write_distribution_family(&mut metrics, family.prefix, family.unit_suffix, &values);
        // The writer stores a non-finite statistic as null; with samples that is an overflow.
        if !values.is_empty() {
            let prefix = format!("{}_", family.prefix);
            if let Some(key) = metrics
                .iter()
                .find(|(key, value)| key.starts_with(&prefix) && value.is_null())
                .map(|(key, _)| key.clone())
            {
                return Err(ArtifactError::NonFiniteStatistic { key });
            }
        }
    }

    let prompt_tokens: Vec<u64> = rows.iter().filter_map(|row| row.prompt_tokens).collect();
    metrics.insert(
        "prompt_tokens".to_owned(),
        if prompt_tokens.is_empty() {
            Value::Null
        } else {
            Value::from(checked_sum(
                "metrics.prompt_tokens",
                prompt_tokens.iter().copied(),
            )?)
        },
    );
    metrics.insert(
        "prompt_token_samples".to_owned(),
        Value::from(prompt_tokens.len()),
    );
    metrics.insert(
        "output_tokens".to_owned(),
        totals.output_tokens.map_or(Value::Null, Value::from),
    );
    metrics.insert(
        "content_chunks".to_owned(),
        Value::from(totals.content_chunks),
    );
    metrics.insert(
        "reasoning_chunks".to_owned(),
        Value::from(totals.reasoning_chunks),
    );

    let canaries = rows.iter().filter_map(|row| row.request_canary.as_ref());
    metrics.insert(
        "request_canary_samples".to_owned(),
        Value::from(canaries.clone().count()),
    );
    metrics.insert(
        "request_canary_passed".to_owned(),
        Value::from(canaries.filter(|canary| canary.passed).count()),
    );
    let controlled: Vec<_> = rows
        .iter()
        .filter_map(|row| row.controlled_output.as_ref())
        .collect();
    let exact = controlled
        .iter()
        .filter(|output| output.exact_adherence == Some(true))
        .count();
    let unobservable = controlled
        .iter()
        .filter(|output| output.exact_adherence.is_none())
        .count();
    let observable = controlled.len() - unobservable;
    metrics.insert(
        "controlled_output_samples".to_owned(),
        Value::from(controlled.len()),
    );
    metrics.insert(
        "controlled_output_exact_adherence".to_owned(),
        Value::from(exact),
    );
    metrics.insert(
        "controlled_output_unobservable".to_owned(),
        Value::from(unobservable),
    );
    metrics.insert(
        "controlled_output_exact_adherence_rate".to_owned(),
        if observable == 0 {
            Value::Null
        } else {
            Value::from(exact as f64 / observable as f64)
        },
    );

    let throughput_eligible =
        performance_eligible && totals.output_tokens.is_some() && wall_seconds > 0.0;
    metrics.insert(
        "throughput_performance_eligible".to_owned(),
        Value::Bool(throughput_eligible),
    );
    metrics.insert(
        "throughput_tok_s".to_owned(),
        match totals.output_tokens {
            Some(tokens) if throughput_eligible => Value::from(tokens as f64 / wall_seconds),
            _ => Value::Null,
        },
    );
    metrics.insert(
        "content_chunks_s".to_owned(),
        if totals.output_tokens.is_none() && wall_seconds > 0.0 {
            Value::from(totals.content_chunks as f64 / wall_seconds)
        } else {
            Value::Null
        },
    );
    metrics.insert(
        "output_token_sources".to_owned(),
        Value::Object(
            totals
                .output_token_sources
                .iter()
                .map(|(source, count)| (source.clone(), Value::from(*count)))
                .collect(),
        ),
    );
    if let Some(average) = totals.prefix_cache_hit_avg {
        metrics.insert(
            "prefix_cache_hit_avg".to_owned(),
            average.map_or(Value::Null, Value::from),
        );
    }
    Ok(metrics)
}

// ---------------------------------------------------------------------------------------------
// Building (§1.3 step 5)
// ---------------------------------------------------------------------------------------------

/// Assembles the artifact of a finished run.
///
/// `config` must be the settings `plan` was made from. `outcomes` must hold **exactly one**
/// outcome per planned request index, in any order: a run that was cancelled or cut short must
/// first turn every request it never started (or abandoned) into a failure record, e.g.
/// [`FailureRecord::request_error`] with `RequestError::cancelled()`. `timing` is what the
/// caller measured; `client` (strobe's measurement context) also sets
/// `timing_methodology.clock` to [`browser_clock`], and without it the reference string
/// [`REFERENCE_CLOCK`] is written.
///
/// Rows and failures are sorted by request index; only successful results feed `metrics`. The
/// ns/wall consistency that readers check (§9) is the caller's to keep: it is not enforced here,
/// because refusing to write a finished run's results would lose them.
pub fn build_artifact(
    config: &RunConfig,
    plan: &RunPlan,
    outcomes: Vec<RequestOutcome>,
    timing: RunTiming,
    client: Option<ClientBlock>,
) -> Result<ArtifactV1, ArtifactError> {
    if plan.config() != config {
        return Err(ArtifactError::ConfigDoesNotMatchPlan);
    }
    check_run_timing(&timing)?;
    let (mut results, mut failures) = sort_outcomes(plan, outcomes)?;
    results.sort_by_key(|result| result.request_index);
    failures.sort_by_key(|failure| failure.request_index);

    let requests = plan.requests();
    let completed = results.len() as u64;
    let failed = failures.len() as u64;
    let performance_eligible = completed == requests && failures.is_empty();
    let rows: Vec<RequestTiming> = results
        .iter()
        .filter_map(|result| result.row.clone())
        .collect();
    let totals = ResultTotals::of_results(&results)?;
    let metrics = compute_metrics(&rows, &totals, performance_eligible, timing.wall_seconds)?;
    let metric_population = MetricPopulation::from_metrics(requests, completed, failed, &metrics);
    let clock = match &client {
        Some(client) => browser_clock(client.timer_resolution_ms, client.cross_origin_isolated)?,
        None => REFERENCE_CLOCK.to_owned(),
    };
    let responses_received = completed
        + failures
            .iter()
            .filter(|failure| failure.response_received)
            .count() as u64;
    let started = UtcSecond::from_unix_ns(timing.started_at_unix_ns);

    Ok(ArtifactV1 {
        schema: SCHEMA.to_owned(),
        measurement_protocol: MeasurementProtocol::for_reasoning_chunks(totals.reasoning_chunks),
        run_id: started.run_id(),
        started_at: started.iso_label(),
        finished_at: UtcSecond::from_unix_ns(timing.finished_at_unix_ns).iso_label(),
        started_at_unix_ns: timing.started_at_unix_ns,
        finished_at_unix_ns: timing.finished_at_unix_ns,
        timestamp_precision: TIMESTAMP_PRECISION.to_owned(),
        clock_domain_id: config.clock_domain_id.clone(),
        configuration_fingerprint: config.configuration_fingerprint.clone(),
        wall_clock_ms: timing.wall_seconds * 1000.0,
        base_url: config.base_url.clone(),
        model: config.model.clone(),
        engine: config.engine.clone(),
        gpu: config.gpu.clone(),
        tier: config.tier.clone(),
        manifest: None,
        source_recipe: None,
        requests,
        completed,
        failed,
        failures,
        responses_received,
        concurrency: plan.concurrency(),
        context_tokens: plan.context_tokens_field(),
        context_seed: plan.context_seed(),
        context_distribution: plan.context_distribution(),
        max_context_tokens: plan.max_context_tokens(),
        max_tokens: config.max_tokens,
        response_words: config.response_words,
        prompt_cache_mode: plan.prompt_cache_mode(),
        shared_prefix_tokens: plan.shared_prefix_tokens(),
        request_canaries: config.request_canaries,
        controlled_output_policy: config.controlled_output_policy,
        performance_eligible,
        metric_population,
        serve_flags: plan.serve_flags(),
        sampling: plan.sampling_block(),
        timing_methodology: TimingMethodology::with_clock(clock),
        request_timings: rows,
        metrics,
        client,
    })
}

fn check_run_timing(timing: &RunTiming) -> Result<(), ArtifactError> {
    check_finite(vec![("wall_seconds".to_owned(), timing.wall_seconds)])?;
    if timing.wall_seconds < 0.0 {
        return Err(ArtifactError::NegativeWallTime {
            wall_seconds: timing.wall_seconds,
        });
    }
    if timing.finished_at_unix_ns < timing.started_at_unix_ns {
        return Err(ArtifactError::FinishedBeforeStarted {
            started_at_unix_ns: timing.started_at_unix_ns,
            finished_at_unix_ns: timing.finished_at_unix_ns,
        });
    }
    Ok(())
}

/// Splits outcomes into results and failures, checking that they cover the plan exactly once
/// and agree with it.
fn sort_outcomes(
    plan: &RunPlan,
    outcomes: Vec<RequestOutcome>,
) -> Result<(Vec<CompletedRequest>, Vec<FailureRecord>), ArtifactError> {
    let planned = plan.planned_context_tokens();
    let mut seen = vec![false; planned.len()];
    let mut results = Vec::new();
    let mut failures = Vec::new();
    for outcome in outcomes {
        let request_index = match &outcome {
            RequestOutcome::Completed(result) => result.request_index,
            RequestOutcome::Failed(failure) => failure.request_index,
        };
        let slot = usize::try_from(request_index)
            .ok()
            .filter(|&slot| slot < planned.len())
            .ok_or(ArtifactError::OutcomeOutsidePlan {
                request_index,
                requests: plan.requests(),
            })?;
        if std::mem::replace(&mut seen[slot], true) {
            return Err(ArtifactError::DuplicateOutcome { request_index });
        }
        let planned_context = planned[slot];
        let check_planned = |recorded: u64| {
            if recorded == planned_context {
                Ok(())
            } else {
                Err(ArtifactError::PlannedContextMismatch {
                    request_index,
                    planned: planned_context,
                    recorded,
                })
            }
        };
        match outcome {
            RequestOutcome::Completed(result) => {
                if let Some(row) = &result.row {
                    if row.request_index != request_index {
                        return Err(ArtifactError::RowIndexMismatch {
                            request_index,
                            row_index: row.request_index,
                        });
                    }
                    check_planned(row.planned_context_tokens)?;
                    check_finite(row_floats(&format!("request {request_index}"), row))?;
                }
                results.push(result);
            }
            RequestOutcome::Failed(failure) => {
                if let Some(recorded) = failure.planned_context_tokens {
                    check_planned(recorded)?;
                }
                check_finite(failure_floats(
                    &format!("failure of request {request_index}"),
                    &failure,
                ))?;
                failures.push(failure);
            }
        }
    }
    let missing: Vec<u64> = seen
        .iter()
        .enumerate()
        .filter(|(_, seen)| !**seen)
        .map(|(slot, _)| slot as u64)
        .collect();
    if !missing.is_empty() {
        return Err(ArtifactError::MissingOutcomes {
            missing: missing.len(),
            first: missing.into_iter().take(5).collect(),
        });
    }
    Ok((results, failures))
}

// ---------------------------------------------------------------------------------------------
// Recomputation from a file (§7.3)
// ---------------------------------------------------------------------------------------------

/// One field whose stored value differs from its recomputation.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldDiff {
    /// JSON path, e.g. `$.metrics.ttft_p50_ms` or `$.request_timings[2].decode_tok_s`.
    pub path: String,
    /// The value in the file.
    pub stored: Value,
    /// The value the rules give.
    pub recomputed: Value,
}

/// One field the file holds but that could not be recomputed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedField {
    /// JSON path.
    pub path: String,
    /// Why it was not recomputed.
    pub reason: String,
}

/// What [`recompute_from_rows`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Recomputation {
    /// The generation read (G3 or modern).
    pub generation: Generation,
    /// Fields recomputed identically (same type, same bits).
    pub exact: usize,
    /// Fields that differ.
    pub diffs: Vec<FieldDiff>,
    /// Fields present in the file that were not recomputed.
    pub skipped: Vec<SkippedField>,
}

impl Recomputation {
    /// How many fields differ.
    pub fn mismatch_count(&self) -> usize {
        self.diffs.len()
    }

    /// How many fields were not recomputed.
    pub fn skipped_count(&self) -> usize {
        self.skipped.len()
    }

    /// Every recomputed field matched.
    pub fn is_exact(&self) -> bool {
        self.diffs.is_empty()
    }

    /// `{generation, exact, mismatch, skipped, diffs: [{path, stored, recomputed}],
    /// skipped_fields: [{path, reason}]}`.
    pub fn to_json(&self) -> Value {
        let diffs: Vec<Value> = self
            .diffs
            .iter()
            .map(|diff| {
                serde_json::json!({
                    "path": diff.path,
                    "stored": diff.stored,
                    "recomputed": diff.recomputed,
                })
            })
            .collect();
        let skipped: Vec<Value> = self
            .skipped
            .iter()
            .map(|field| serde_json::json!({"path": field.path, "reason": field.reason}))
            .collect();
        serde_json::json!({
            "generation": self.generation.id(),
            "exact": self.exact,
            "mismatch": self.mismatch_count(),
            "skipped": self.skipped_count(),
            "diffs": diffs,
            "skipped_fields": skipped,
        })
    }

    fn compare(&mut self, path: String, stored: &Value, recomputed: Value) {
        if values_identical(stored, &recomputed) {
            self.exact += 1;
        } else {
            self.diffs.push(FieldDiff {
                path,
                stored: stored.clone(),
                recomputed,
            });
        }
    }

    fn skip(&mut self, path: String, reason: &str) {
        self.skipped.push(SkippedField {
            path,
            reason: reason.to_owned(),
        });
    }
}

/// JSON equality as the writer sees it: integers equal integers, floats equal floats with the
/// same bits (`0.0` ≠ `-0.0`, `1` ≠ `1.0`), containers element by element.
pub fn values_identical(first: &Value, second: &Value) -> bool {
    match (first, second) {
        (Value::Number(a), Value::Number(b)) => match (a.is_f64(), b.is_f64()) {
            (true, true) => a.as_f64().map(f64::to_bits) == b.as_f64().map(f64::to_bits),
            (false, false) => a == b,
            _ => false,
        },
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| values_identical(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, x)| b.get(key).is_some_and(|y| values_identical(x, y)))
        }
        _ => first == second,
    }
}

const REASON_NOT_DERIVABLE: &str = "not derivable from the rows";
const REASON_NO_CACHED_TOKENS: &str = "needs per-row cached_tokens, which this artifact's rows \
     do not keep (ARTIFACT.md §7.3)";
const REASON_NULL: &str = "null in this artifact (its producer did not decide it)";
const REASON_NO_NS: &str = "needs started_at_unix_ns and finished_at_unix_ns, which this \
     artifact does not have";

/// Recomputes every field of a parsed artifact that its rows determine and compares each with
/// the stored value bit for bit.
///
/// Covered: the derived fields of every row ([`DERIVED_ROW_FIELDS`], via
/// [`RequestTiming::recompute_derived`]); every metric derivable from the rows (the 11
/// families, token and chunk sums, canary and controlled-output counts, `output_token_sources`,
/// throughput and `content_chunks_s` from `wall_clock_ms / 1000`, and `prefix_cache_hit_avg`
/// only when every row carries `cached_tokens`); `performance_eligible`, `responses_received`,
/// `measurement_protocol`, `metric_population`, and `run_id`/`started_at`/`finished_at` from
/// the ns fields. Fields the file lacks are not reported; fields it has but the rules cannot
/// give are listed as skipped. Metrics are computed from the **stored** rows, as §7.1 defines
/// them over `request_timings`, so they check what the producer aggregated; a wrong row value
/// shows at the row and again in the metrics it feeds.
///
/// G1 and G2 artifacts have no rows and give [`ArtifactError::NotRecomputable`]; so does a
/// non-object. G3 rows lack a few modern keys, which are treated as absent.
pub fn recompute_from_rows(value: &Value) -> Result<Recomputation, ArtifactError> {
    let generation = detect_generation(value);
    let artifact = value
        .as_object()
        .ok_or_else(|| ArtifactError::NotRecomputable {
            generation,
            reason: "the top level is not a JSON object, so it is not an artifact".to_owned(),
        })?;
    if !matches!(generation, Generation::G3 | Generation::Modern) {
        return Err(ArtifactError::NotRecomputable {
            generation,
            reason: "it has no request_timings rows (only G3 and modern artifacts keep the \
                     per-request measurements the metrics are computed from); \
                     `strobe-artifact validate` still checks it"
                .to_owned(),
        });
    }
    let stored_rows = artifact
        .get("request_timings")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("$.request_timings", "is not an array"))?;
    let mut filled = BTreeSet::new();
    let rows = stored_rows
        .iter()
        .enumerate()
        .map(|(position, row)| parse_row(position, row, &mut filled))
        .collect::<Result<Vec<_>, _>>()?;

    let mut report = Recomputation {
        generation,
        exact: 0,
        diffs: Vec::new(),
        skipped: Vec::new(),
    };
    for (position, (stored, row)) in stored_rows.iter().zip(&rows).enumerate() {
        let recomputed = serde_json::to_value(row.recompute_derived()).map_err(|error| {
            ArtifactError::Encoding {
                reason: error.to_string(),
            }
        })?;
        for field in DERIVED_ROW_FIELDS {
            if let Some(stored_value) = stored.get(field) {
                let recomputed_value = recomputed.get(field).cloned().unwrap_or(Value::Null);
                report.compare(
                    format!("$.request_timings[{position}].{field}"),
                    stored_value,
                    recomputed_value,
                );
            }
        }
    }

    let requests = count_field(artifact, "requests")?;
    let completed = count_field(artifact, "completed")?;
    let failures = match artifact.get("failures") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(failures)) => failures.clone(),
        Some(_) => return Err(malformed("$.failures", "is not an array")),
    };
    let failed = match artifact.get("failed") {
        None => failures.len() as u64,
        Some(_) => count_field(artifact, "failed")?,
    };
    let performance_eligible = completed == requests && failed == 0 && failures.is_empty();
    let wall_clock_ms = artifact
        .get("wall_clock_ms")
        .and_then(Value::as_f64)
        .ok_or_else(|| malformed("$.wall_clock_ms", "is missing or not a number"))?;
    let stored_metrics = artifact
        .get("metrics")
        .and_then(Value::as_object)
        .ok_or_else(|| malformed("$.metrics", "is missing or not an object"))?;

    // G3 producers had no eligibility gate: throughput was written whenever the token total
    // was exact, failures or not. Their metrics lack the gate's key.
    let throughput_gated = stored_metrics.contains_key("throughput_performance_eligible");
    let totals = ResultTotals::of_rows(&rows)?;
    let metrics = compute_metrics(
        &rows,
        &totals,
        performance_eligible || !throughput_gated,
        wall_clock_ms / 1000.0,
    )?;
    for (key, stored) in stored_metrics {
        let path = format!("$.metrics.{key}");
        if let Some(missing) = missing_row_input(key, &filled) {
            report.skip(path, &rows_lack(missing));
            continue;
        }
        let wall_candidates = wall_seconds_candidates(wall_clock_ms);
        match metrics.get(key) {
            // The rate's wall time is ambiguous in the last bit; any consistent one will do.
            Some(recomputed) if recomputed.is_f64() && key == "throughput_tok_s" => {
                let tokens = totals.output_tokens.unwrap_or(0);
                let rate = rate_over_wall(tokens, &wall_candidates, stored);
                report.compare(path, stored, rate);
            }
            Some(recomputed) if recomputed.is_f64() && key == "content_chunks_s" => {
                let rate = rate_over_wall(totals.content_chunks, &wall_candidates, stored);
                report.compare(path, stored, rate);
            }
            Some(recomputed) => report.compare(path, stored, recomputed.clone()),
            None if key == "prefix_cache_hit_avg" => report.skip(path, REASON_NO_CACHED_TOKENS),
            None => report.skip(path, REASON_NOT_DERIVABLE),
        }
    }

    let derived_top_level = [
        ("performance_eligible", Value::Bool(performance_eligible)),
        (
            "responses_received",
            Value::from(
                completed
                    + failures
                        .iter()
                        .filter(|failure| {
                            failure.get("response_received") == Some(&Value::Bool(true))
                        })
                        .count() as u64,
            ),
        ),
        (
            "measurement_protocol",
            Value::from(
                MeasurementProtocol::for_reasoning_chunks(totals.reasoning_chunks).as_str(),
            ),
        ),
    ];
    for (key, recomputed) in derived_top_level {
        let path = format!("$.{key}");
        match artifact.get(key) {
            None => {}
            Some(Value::Null) => report.skip(path, REASON_NULL),
            Some(_) if key == "measurement_protocol" && filled.contains("reasoning_chunks") => {
                report.skip(path, &rows_lack("reasoning_chunks"));
            }
            Some(stored) => report.compare(path, stored, recomputed),
        }
    }

    if let Some(stored_population) = artifact.get("metric_population") {
        let population = MetricPopulation::from_metrics(requests, completed, failed, &metrics);
        let recomputed =
            serde_json::to_value(population).map_err(|error| ArtifactError::Encoding {
                reason: error.to_string(),
            })?;
        match (stored_population.as_object(), recomputed.as_object()) {
            (Some(stored), Some(recomputed)) => {
                for (key, stored_value) in stored {
                    let path = format!("$.metric_population.{key}");
                    match recomputed.get(key) {
                        Some(value) => report.compare(path, stored_value, value.clone()),
                        None => report.skip(path, REASON_NOT_DERIVABLE),
                    }
                }
            }
            _ => report.compare(
                "$.metric_population".to_owned(),
                stored_population,
                recomputed,
            ),
        }
    }

    let started_ns = artifact.get("started_at_unix_ns").and_then(Value::as_i64);
    let finished_ns = artifact.get("finished_at_unix_ns").and_then(Value::as_i64);
    let labels = [
        (
            "run_id",
            started_ns.map(|ns| UtcSecond::from_unix_ns(ns).run_id()),
        ),
        (
            "started_at",
            started_ns.map(|ns| UtcSecond::from_unix_ns(ns).iso_label()),
        ),
        (
            "finished_at",
            finished_ns.map(|ns| UtcSecond::from_unix_ns(ns).iso_label()),
        ),
    ];
    for (key, recomputed) in labels {
        if let Some(stored) = artifact.get(key) {
            match recomputed {
                Some(label) => report.compare(format!("$.{key}"), stored, Value::from(label)),
                None => report.skip(format!("$.{key}"), REASON_NO_NS),
            }
        }
    }
    Ok(report)
}

/// The row key a metric needs that the file's rows lack (and were given a stand-in for).
fn missing_row_input(metric: &str, filled: &BTreeSet<&'static str>) -> Option<&'static str> {
    let family_field = DISTRIBUTION_FAMILIES
        .iter()
        .find(|family| {
            metric == family.samples_key()
                || DISTRIBUTION_STATS
                    .iter()
                    .any(|stat| metric == family.stat_key(stat))
        })
        .map(|family| family.row_field);
    let needs = match metric {
        "content_chunks" | "content_chunks_s" => "content_chunks",
        "reasoning_chunks" => "reasoning_chunks",
        _ => family_field?,
    };
    filled.get(needs).copied()
}

/// Every `seconds` with `seconds * 1000.0 == wall_clock_ms` near `wall_clock_ms / 1000.0`,
/// that one first. A producer that held wall seconds stored only their product with 1000, and
/// about 2% of products have more than one such inverse (§7.3); each is consistent with the file.
fn wall_seconds_candidates(wall_clock_ms: f64) -> Vec<f64> {
    let primary = wall_clock_ms / 1000.0;
    let mut candidates = vec![primary];
    for direction in [1.0_f64, -1.0] {
        let mut candidate = primary;
        for _ in 0..2 {
            candidate = next_toward(candidate, direction);
            if candidate * 1000.0 == wall_clock_ms && !candidates.contains(&candidate) {
                candidates.push(candidate);
            }
        }
    }
    candidates
}

/// The adjacent float above (`direction` > 0) or below a finite positive `value`.
fn next_toward(value: f64, direction: f64) -> f64 {
    if !(value.is_finite() && value > 0.0) {
        return value;
    }
    let bits = value.to_bits();
    f64::from_bits(if direction > 0.0 { bits + 1 } else { bits - 1 })
}

/// `count / wall` for the first candidate wall time that reproduces `stored`, else for the
/// primary one.
fn rate_over_wall(count: u64, wall_candidates: &[f64], stored: &Value) -> Value {
    let stored_bits = stored
        .as_f64()
        .filter(|_| stored.is_f64())
        .map(f64::to_bits);
    let rates = wall_candidates.iter().map(|wall| count as f64 / wall);
    let primary = rates.clone().next();
    rates
        .clone()
        .find(|rate| Some(rate.to_bits()) == stored_bits)
        .or(primary)
        .map_or(Value::Null, Value::from)
}

fn rows_lack(field: &str) -> String {
    format!("needs {field}, which the rows of this artifact's generation do not have")
}

fn malformed(path: &str, reason: &str) -> ArtifactError {
    ArtifactError::MalformedField {
        path: path.to_owned(),
        reason: reason.to_owned(),
    }
}

/// A non-negative integer top-level field.
fn count_field(artifact: &Map<String, Value>, key: &str) -> Result<u64, ArtifactError> {
    artifact.get(key).and_then(Value::as_u64).ok_or_else(|| {
        malformed(
            &format!("$.{key}"),
            "is missing or not a non-negative integer",
        )
    })
}

/// Reads a stored row. G3 rows lack keys that modern rows have; each missing one gets a stand-in
/// (TTFO = TTFT, zero chunks, not truncated) and is recorded in `filled`, so that the fields
/// depending on it are skipped instead of reported as differences.
fn parse_row(
    position: usize,
    row: &Value,
    filled: &mut BTreeSet<&'static str>,
) -> Result<RequestTiming, ArtifactError> {
    let mut fields = row.as_object().cloned().ok_or_else(|| {
        malformed(
            &format!("$.request_timings[{position}]"),
            "is not an object",
        )
    })?;
    // The earliest G3 rows predate TTFO; the producer then measured from TTFT (§5 fallback).
    let ttft = fields.get("ttft_ms").cloned();
    let stand_ins = [
        ("time_to_first_output_ms", ttft),
        ("reasoning_chunks", Some(Value::from(0))),
        ("content_chunks", Some(Value::from(0))),
        // Derived, so its recomputation never reads the stand-in.
        ("visible_generation_ms", Some(Value::from(0.0))),
        ("visible_content_truncated", Some(Value::Bool(false))),
    ];
    for (key, stand_in) in stand_ins {
        if let (false, Some(stand_in)) = (fields.contains_key(key), stand_in) {
            fields.insert(key.to_owned(), stand_in);
            filled.insert(key);
        }
    }
    serde_json::from_value(Value::Object(fields)).map_err(|error| {
        malformed(
            &format!("$.request_timings[{position}]"),
            &format!("is not a timing row ({error})"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::observe::{RequestError, RowInputs};
    use crate::core::validate::days_from_civil;
    use serde_json::json;

    fn small_config(requests: u64) -> RunConfig {
        RunConfig {
            base_url: "http://127.0.0.1:8000/v1".to_owned(),
            model: "test-model".to_owned(),
            requests,
            concurrency: 1,
            context_tokens: 1024,
            ..RunConfig::default()
        }
    }

    fn small_plan(requests: u64) -> (RunConfig, RunPlan) {
        let config = small_config(requests);
        let plan = RunPlan::new(&config, None).expect("a valid plan");
        (config, plan)
    }

    fn timing() -> RunTiming {
        RunTiming {
            started_at_unix_ns: 1_700_000_000_000_000_000,
            finished_at_unix_ns: 1_700_000_002_000_000_000,
            wall_seconds: 2.0,
        }
    }

    /// A usage-counted result of request `index` with the given times (seconds).
    fn completed(index: u64, ttft_s: f64, e2e_s: f64, out: u64) -> RequestOutcome {
        let row = RequestTiming::from_seconds(RowInputs {
            request_index: index,
            planned_context_tokens: 1024,
            ttfo_s: None,
            ttft_s: Some(ttft_s),
            e2e_s,
            prompt_tokens: Some(1000),
            out_toks: Some(out),
            output_token_source: Some(OutputTokenSource::Usage),
            reasoning_chunks: 0,
            content_chunks: out,
            request_canary: None,
            controlled_output: None,
            visible_content_truncated: false,
            cached_tokens: None,
            started_at_ms: None,
            chunk_arrivals_ms: None,
        });
        RequestOutcome::Completed(CompletedRequest {
            request_index: index,
            row,
            out_toks: out,
            output_token_source: OutputTokenSource::Usage,
            content_chunks: out,
            reasoning_chunks: 0,
            prompt_tokens: Some(1000),
            cached_tokens: None,
            cached_fraction: None,
            read_stats: ReadStats::default(),
        })
    }

    fn cancelled(index: u64) -> RequestOutcome {
        RequestOutcome::Failed(FailureRecord::request_error(
            index,
            1024,
            &RequestError::cancelled(),
            0.0,
        ))
    }

    #[test]
    fn civil_from_days_inverts_days_from_civil() {
        // Every day from 1600-01-01 to 2400-01-01, against the validator's own inverse.
        for days in -135_140..157_800 {
            let (year, month, day) = civil_from_days(days);
            assert_eq!(
                days_from_civil(year, month, day),
                days,
                "{year}-{month}-{day}"
            );
        }
    }

    #[test]
    fn labels_floor_to_the_second_and_know_leap_years() {
        // Expected labels from CPython 3.11: datetime(1970, 1, 1, tzinfo=utc)
        // + timedelta(seconds=ns // 10**9), formatted with strftime.
        let cases: [(i64, &str); 17] = [
            (0, "1970-01-01T00:00:00Z"),
            (999_999_999, "1970-01-01T00:00:00Z"),
            (1_000_000_000, "1970-01-01T00:00:01Z"),
            (-1, "1969-12-31T23:59:59Z"),
            (-1_000_000_000, "1969-12-31T23:59:59Z"),
            (-1_000_000_001, "1969-12-31T23:59:58Z"),
            (951_782_400_000_000_000, "2000-02-29T00:00:00Z"),
            (951_868_799_999_999_999, "2000-02-29T23:59:59Z"),
            (951_868_800_000_000_000, "2000-03-01T00:00:00Z"),
            (1_709_164_800_000_000_000, "2024-02-29T00:00:00Z"),
            (1_709_251_199_999_999_999, "2024-02-29T23:59:59Z"),
            (1_735_689_599_999_999_999, "2024-12-31T23:59:59Z"),
            (1_735_689_600_000_000_000, "2025-01-01T00:00:00Z"),
            (4_107_542_399_000_000_000, "2100-02-28T23:59:59Z"),
            (4_107_542_400_000_000_000, "2100-03-01T00:00:00Z"),
            (i64::MAX, "2262-04-11T23:47:16Z"),
            (i64::MIN, "1677-09-21T00:12:43Z"),
        ];
        for (unix_ns, label) in cases {
            assert_eq!(
                UtcSecond::from_unix_ns(unix_ns).iso_label(),
                label,
                "{unix_ns}"
            );
        }
        // Float seconds (ns / 1e9) would round this up to :25; readers check ns // 1e9.
        let near_boundary = UtcSecond::from_unix_ns(1_791_200_544_999_999_999);
        assert_eq!(near_boundary.run_id(), "benchmark-20261005T114224Z");
    }

    #[test]
    fn file_names_keep_only_safe_characters() {
        let (config, plan) = small_plan(1);
        let mut artifact = build_artifact(
            &config,
            &plan,
            vec![completed(0, 0.5, 1.0, 10)],
            timing(),
            None,
        )
        .expect("builds");
        assert_eq!(artifact.file_name(), "benchmark-20231114T221320Z.json");
        artifact.run_id = "run/../é id:1".to_owned();
        assert_eq!(artifact.file_name(), "run_..___id_1.json");
        artifact.run_id = "..".to_owned();
        assert_eq!(artifact.file_name(), "benchmark...json");
        artifact.run_id = String::new();
        assert_eq!(artifact.file_name(), "benchmark.json");
    }

    #[test]
    fn browser_clock_uses_python_float_repr() {
        assert_eq!(
            browser_clock(0.005, true).ok().as_deref(),
            Some("browser performance.now(); resolution 0.005 ms; cross-origin isolated: true")
        );
        assert_eq!(
            browser_clock(0.00001, false).ok().as_deref(),
            Some("browser performance.now(); resolution 1e-05 ms; cross-origin isolated: false")
        );
        assert_eq!(
            browser_clock(100.0, false).ok().as_deref(),
            Some("browser performance.now(); resolution 100.0 ms; cross-origin isolated: false")
        );
        assert!(matches!(
            browser_clock(f64::NAN, true),
            Err(ArtifactError::NonFiniteValue { .. })
        ));
    }

    #[test]
    fn p99_is_a_tail_estimate_from_100_samples() {
        assert_eq!(p99_interpretation(99), P99_DESCRIPTIVE_ONLY);
        assert_eq!(p99_interpretation(100), P99_TAIL_ESTIMATE);
        let mut metrics = Map::new();
        metrics.insert("ttft_samples".to_owned(), json!(100));
        metrics.insert("e2e_samples".to_owned(), json!(99));
        metrics.insert("throughput_performance_eligible".to_owned(), json!(true));
        let population = MetricPopulation::from_metrics(120, 100, 20, &metrics);
        assert_eq!(population.p99_interpretation, P99_TAIL_ESTIMATE);
        assert_eq!(
            population.p99_interpretation_by_metric["ttft"],
            P99_TAIL_ESTIMATE
        );
        assert_eq!(
            population.p99_interpretation_by_metric["e2e"],
            P99_DESCRIPTIVE_ONLY
        );
        assert_eq!(population.p99_samples_by_metric["tpot"], 0);
        assert_eq!(population.performance_eligible_requests, 100);
        assert!(population.aggregate_throughput_eligible);
    }

    #[test]
    fn identical_means_same_type_and_bits() {
        assert!(values_identical(&json!(1), &json!(1)));
        assert!(!values_identical(&json!(1), &json!(1.0)));
        assert!(!values_identical(&json!(0.0), &json!(-0.0)));
        assert!(values_identical(
            &json!({"a": [1.5, null]}),
            &json!({"a": [1.5, null]})
        ));
        assert!(!values_identical(
            &json!({"a": 1}),
            &json!({"a": 1, "b": 2})
        ));
        assert!(!values_identical(&json!([1.0]), &json!([1.0, 2.0])));
    }

    #[test]
    fn every_family_reads_a_row_field() {
        let RequestOutcome::Completed(result) = completed(0, 0.5, 1.0, 10) else {
            panic!("a completed outcome")
        };
        let row = result.row.expect("a row");
        for family in DISTRIBUTION_FAMILIES {
            assert!(
                row_field_value(&row, family.row_field).is_some(),
                "{}",
                family.row_field
            );
        }
    }

    #[test]
    fn every_planned_request_needs_exactly_one_outcome() {
        let (config, plan) = small_plan(3);
        let build = |outcomes| build_artifact(&config, &plan, outcomes, timing(), None);
        assert_eq!(
            build(vec![completed(0, 0.5, 1.0, 10), cancelled(2)]).err(),
            Some(ArtifactError::MissingOutcomes {
                missing: 1,
                first: vec![1]
            })
        );
        assert_eq!(
            build(vec![completed(0, 0.5, 1.0, 10), cancelled(0), cancelled(1)]).err(),
            Some(ArtifactError::DuplicateOutcome { request_index: 0 })
        );
        assert_eq!(
            build(vec![cancelled(0), cancelled(1), cancelled(2), cancelled(3)]).err(),
            Some(ArtifactError::OutcomeOutsidePlan {
                request_index: 3,
                requests: 3
            })
        );
        let all = build(vec![cancelled(2), completed(1, 0.5, 1.0, 10), cancelled(0)])
            .expect("one outcome each");
        let failed: Vec<u64> = all.failures.iter().map(|f| f.request_index).collect();
        assert_eq!(failed, vec![0, 2]);
        assert_eq!((all.completed, all.failed), (1, 2));
    }

    #[test]
    fn outcomes_must_agree_with_the_plan() {
        let (config, plan) = small_plan(1);
        let mut other = config.clone();
        other.model = "another-model".to_owned();
        assert_eq!(
            build_artifact(&other, &plan, vec![cancelled(0)], timing(), None).err(),
            Some(ArtifactError::ConfigDoesNotMatchPlan)
        );
        let RequestOutcome::Completed(mut result) = completed(0, 0.5, 1.0, 10) else {
            panic!("a completed outcome")
        };
        if let Some(row) = result.row.as_mut() {
            row.planned_context_tokens = 2048;
        }
        assert_eq!(
            build_artifact(
                &config,
                &plan,
                vec![RequestOutcome::Completed(result.clone())],
                timing(),
                None
            )
            .err(),
            Some(ArtifactError::PlannedContextMismatch {
                request_index: 0,
                planned: 1024,
                recorded: 2048
            })
        );
        if let Some(row) = result.row.as_mut() {
            row.planned_context_tokens = 1024;
            row.request_index = 7;
        }
        assert_eq!(
            build_artifact(
                &config,
                &plan,
                vec![RequestOutcome::Completed(result)],
                timing(),
                None
            )
            .err(),
            Some(ArtifactError::RowIndexMismatch {
                request_index: 0,
                row_index: 7
            })
        );
    }

    #[test]
    fn impossible_times_are_errors_not_nulls() {
        let (config, plan) = small_plan(1);
        let build = |outcome, timing| build_artifact(&config, &plan, vec![outcome], timing, None);
        let nan_wall = RunTiming {
            wall_seconds: f64::NAN,
            ..timing()
        };
        assert!(matches!(
            build(cancelled(0), nan_wall),
            Err(ArtifactError::NonFiniteValue { .. })
        ));
        let negative_wall = RunTiming {
            wall_seconds: -1.0,
            ..timing()
        };
        assert!(matches!(
            build(cancelled(0), negative_wall),
            Err(ArtifactError::NegativeWallTime { .. })
        ));
        let backwards = RunTiming {
            finished_at_unix_ns: timing().started_at_unix_ns - 1,
            ..timing()
        };
        assert!(matches!(
            build(cancelled(0), backwards),
            Err(ArtifactError::FinishedBeforeStarted { .. })
        ));
        let RequestOutcome::Completed(mut result) = completed(0, 0.5, 1.0, 10) else {
            panic!("a completed outcome")
        };
        if let Some(row) = result.row.as_mut() {
            row.started_at_ms = Some(f64::INFINITY);
        }
        let error = build(RequestOutcome::Completed(result), timing()).err();
        assert_eq!(
            error,
            Some(ArtifactError::NonFiniteValue {
                field: "request 0.started_at_ms".to_owned(),
                value: f64::INFINITY
            })
        );
    }

    #[test]
    fn writing_refuses_a_non_finite_field_set_after_building() {
        let (config, plan) = small_plan(1);
        let mut artifact = build_artifact(
            &config,
            &plan,
            vec![completed(0, 0.5, 1.0, 10)],
            timing(),
            None,
        )
        .expect("builds");
        assert!(artifact.to_json_text().is_ok());
        artifact.request_timings[0].e2e_ms = f64::NAN;
        assert!(matches!(
            artifact.to_json_text(),
            Err(ArtifactError::NonFiniteValue { field, .. }) if field == "request_timings[0].e2e_ms"
        ));
    }

    #[test]
    fn redaction_replaces_only_the_base_url() {
        let (config, plan) = small_plan(1);
        let mut artifact = build_artifact(
            &config,
            &plan,
            vec![completed(0, 0.5, 1.0, 10)],
            timing(),
            None,
        )
        .expect("builds");
        let before = artifact.clone();
        artifact.redact_base_url();
        assert_eq!(artifact.base_url, REDACTED_BASE_URL);
        artifact.base_url = before.base_url.clone();
        assert_eq!(artifact, before);
    }

    #[test]
    fn a_check_round_is_ready_only_when_its_requests_overlapped_on_open_connections() {
        use WarmupConnections::*;
        // Values shaped like Chromium 156 entries: a reused connection has every connection
        // time equal to fetchStart.
        let entry = |start: f64, sent: f64, end: f64, opened: bool| ResourceTimingEntry {
            start_time_ms: start,
            fetch_start_ms: start,
            connect_start_ms: start,
            connect_end_ms: if opened { start + 0.4 } else { start },
            request_start_ms: sent,
            next_hop_protocol: "http/1.1".to_owned(),
            response_end_ms: end,
        };
        let a = entry(100.0, 100.3, 160.0, false);
        let b = entry(100.5, 100.9, 161.0, false);
        let c = entry(100.9, 101.2, 162.0, false);
        assert_eq!(
            WarmupConnections::of_round(&[vec![Some(&a), Some(&b), Some(&c)]]),
            Ready
        );
        // Each endpoint is judged on its own requests.
        assert_eq!(
            WarmupConnections::of_round(&[vec![Some(&a), Some(&b)], vec![Some(&c)]]),
            Ready
        );
        // A request sent after another's answer had ended may have used that connection.
        let late = entry(101.0, 170.0, 230.0, false);
        assert_eq!(
            WarmupConnections::of_round(&[vec![Some(&a), Some(&late)]]),
            NotShown
        );
        // One opened connection decides it, whatever else the round saw.
        let opened = entry(101.0, 102.0, 170.0, true);
        let withheld = ResourceTimingEntry {
            start_time_ms: 101.0,
            fetch_start_ms: 101.0,
            response_end_ms: 150.0,
            ..ResourceTimingEntry::default()
        };
        assert_eq!(
            WarmupConnections::of_round(&[
                vec![Some(&a), None],
                vec![Some(&withheld), Some(&opened)]
            ]),
            StillOpening
        );
        assert_eq!(
            WarmupConnections::of_round(&[vec![Some(&a), None]]),
            Unknown
        );
        assert_eq!(
            WarmupConnections::of_round(&[vec![Some(&a), Some(&withheld)]]),
            Unknown
        );
        // HTTP/2 multiplexes every slot over one connection: nothing to overlap.
        let h2 = ResourceTimingEntry {
            next_hop_protocol: "h2".to_owned(),
            ..late.clone()
        };
        let h2_first = ResourceTimingEntry {
            next_hop_protocol: "h2".to_owned(),
            ..a.clone()
        };
        assert_eq!(
            WarmupConnections::of_round(&[vec![Some(&h2_first), Some(&h2)]]),
            Ready
        );
        // An endpoint with no slot sends nothing and has nothing to open.
        assert_eq!(
            WarmupConnections::of_round(&[vec![Some(&a)], vec![]]),
            Ready
        );
        assert!(StillOpening.worth_another_round());
        assert!(NotShown.worth_another_round());
        assert!(!Ready.worth_another_round());
        assert!(!Unknown.worth_another_round());
    }

    #[test]
    fn a_warmup_either_records_itself_or_says_what_failed() {
        assert_eq!(
            WarmupError::check(4, 38.5, []),
            Ok(ClientWarmup {
                requests: 4,
                duration_ms: 38.5,
                failures: 0,
                check_rounds: None,
                connections: None,
            })
        );
        let refused = RequestError::fetch_failed("Failed to fetch");
        let result = WarmupError::check(
            4,
            2.0,
            [refused.clone(), RequestError::http_status(500, "", "", &[])],
        );
        assert_eq!(
            result,
            Err(WarmupError::Failed {
                failed: 2,
                requests: 4,
                first: refused
            })
        );
        let message = result
            .err()
            .map(|error| error.to_string())
            .unwrap_or_default();
        assert!(
            message.starts_with(
                "the warm-up failed, so no request was measured: 2 of 4 warm-up requests \
                 failed, the first with TypeError: Failed to fetch (the server is unreachable"
            ),
            "{message}"
        );
        assert!(message.contains("fix what the error names"), "{message}");
        assert_eq!(
            WarmupError::Cancelled.to_string(),
            "the run was cancelled during the warm-up, before any request was measured"
        );
    }

    #[test]
    fn sse_counts_sum_completed_requests() {
        let RequestOutcome::Completed(mut first) = completed(0, 0.5, 1.0, 10) else {
            panic!("a completed outcome")
        };
        first.read_stats = ReadStats {
            reads: 3,
            events: 7,
            events_sharing_a_read: 5,
            ignored_payloads: 1,
        };
        let mut second = first.clone();
        second.request_index = 1;
        let outcomes = vec![
            RequestOutcome::Completed(first),
            cancelled(2),
            RequestOutcome::Completed(second),
        ];
        assert_eq!(
            ClientSseCounts::of_outcomes(&outcomes),
            ClientSseCounts {
                reads: 6,
                events: 14,
                events_sharing_a_read: 10
            }
        );
    }

    #[test]
    fn wall_time_candidates_are_every_consistent_inverse() {
        // A real G3 wall time whose producer held the float just below 612139.659200002 / 1000.
        let wall_ms = 612_139.659_200_002;
        let candidates = wall_seconds_candidates(wall_ms);
        assert_eq!(candidates.len(), 2);
        assert_eq!(candidates[0], wall_ms / 1000.0);
        assert!(candidates.iter().all(|seconds| seconds * 1000.0 == wall_ms));
        let stored = json!(7.59630572878913);
        assert_eq!(rate_over_wall(4650, &candidates, &stored), stored);
        // Without a match the primary inverse is reported.
        assert_eq!(
            rate_over_wall(4650, &candidates, &json!(1.0)),
            json!(4650.0 / (wall_ms / 1000.0))
        );
        assert_eq!(wall_seconds_candidates(0.0), vec![0.0]);
    }

    #[test]
    fn the_oldest_g3_rows_get_stand_ins_and_their_metrics_are_skipped() {
        let row = json!({"request_index": 0, "planned_context_tokens": 32000,
            "prompt_tokens": 30000, "output_tokens": 101, "output_token_source": "usage",
            "ttft_ms": 2000.0, "e2e_ms": 3000.0, "generation_ms": 1000.0,
            "effective_prefill_tok_s": 15000.0, "decode_tok_s": 100.0,
            "mean_inter_token_latency_ms": 10.0});
        let mut filled = BTreeSet::new();
        let parsed = parse_row(0, &row, &mut filled).expect("parses");
        assert_eq!(parsed.time_to_first_output_ms, 2000.0);
        let expected: BTreeSet<&str> = [
            "time_to_first_output_ms",
            "reasoning_chunks",
            "content_chunks",
            "visible_generation_ms",
            "visible_content_truncated",
        ]
        .into_iter()
        .collect();
        assert_eq!(filled, expected);
        assert_eq!(
            missing_row_input("content_chunks_s", &filled),
            Some("content_chunks")
        );
        assert_eq!(
            missing_row_input("time_to_first_output_p50_ms", &filled),
            Some("time_to_first_output_ms")
        );
        assert_eq!(missing_row_input("ttft_p50_ms", &filled), None);
        assert_eq!(missing_row_input("prompt_tokens", &filled), None);
        let artifact = json!({"schema": SCHEMA, "measurement_protocol": "capacity-v3",
            "requests": 1, "completed": 1, "failed": 0, "failures": [],
            "wall_clock_ms": 3100.0, "request_timings": [row],
            "metrics": {"content_chunks": 7, "ttft_p50_ms": 2000.0, "output_tokens": 101,
                        "throughput_tok_s": 101.0 / 3.1}});
        let report = recompute_from_rows(&artifact).expect("recomputable");
        assert!(report.diffs.is_empty(), "{:#?}", report.diffs);
        let skipped: Vec<&str> = report.skipped.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            skipped,
            vec!["$.metrics.content_chunks", "$.measurement_protocol"]
        );
        // generation_ms, prefill, decode, ITL of the row; ttft p50, tokens, throughput.
        assert_eq!(report.exact, 4 + 3);
    }

    #[test]
    fn legacy_generations_without_rows_are_not_recomputable() {
        let g1 = json!({"schema": SCHEMA, "metrics": {}, "requests": 1, "completed": 1});
        assert!(matches!(
            recompute_from_rows(&g1),
            Err(ArtifactError::NotRecomputable {
                generation: Generation::G1LegacyMinimal,
                ..
            })
        ));
        let g2 = json!({"schema": SCHEMA, "measurement_protocol": "capacity-v2"});
        let error = recompute_from_rows(&g2)
            .err()
            .map(|error| error.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|text| text.contains("G2") && text.contains("no request_timings")),
            "{error:?}"
        );
        assert!(matches!(
            recompute_from_rows(&json!([1, 2])),
            Err(ArtifactError::NotRecomputable {
                generation: Generation::Unknown,
                ..
            })
        ));
        let bad_row = json!({"schema": SCHEMA, "request_canaries": true, "request_timings": [{"ttft_ms": "fast"}]});
        assert!(matches!(
            recompute_from_rows(&bad_row),
            Err(ArtifactError::MalformedField { path, .. }) if path == "$.request_timings[0]"
        ));
    }
}
