//! Every serde type of the artifact file, plain types at the bottom of the pipeline: [`ArtifactV1`]
//! (the 41 top-level keys of the reference artifact plus strobe's optional `client` block,
//! ARTIFACT.md §8, §12) with its byte-exact text (§8.4), `metric_population` (§8.2) and
//! `timing_methodology` (§8.3); the rows and failures ([`rows`]); the `client` block ([`client`],
//! [`from_wire`], [`calibration`], [`distributed`]); strobe's `load`, `sweep`, `repeat`, `slo`,
//! `server_metrics`, `prefix_cache_reset` and `workload` blocks ([`load`], [`sweep`], [`repeat`],
//! [`slo`], [`server_metrics`], [`cache_reset`], [`workload`]); the values fields take (the
//! constants below); what a file is before any rule ([`generation`]); and why an artifact cannot
//! be written ([`error`]).
//!
//! It imports only `config`'s choices, `python`'s JSON writer and `format`: the stages that fill
//! these types (`observe`, `load`, `telemetry`, `plan`) and [`crate::core::artifact`], which
//! builds the whole file from them, all stand above it.

pub mod cache_reset;
pub mod calibration;
pub mod client;
pub mod distributed;
pub mod error;
pub mod from_wire;
pub mod generation;
pub mod load;
pub mod repeat;
pub mod rows;
pub mod server_metrics;
pub mod slo;
pub mod sweep;
pub mod workload;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::core::config::choices::{ControlledOutputPolicy, PromptCacheMode};
use crate::core::python::json::{dumps_artifact, python_float_repr};
use crate::core::schema::cache_reset::PrefixCacheResetBlock;
use crate::core::schema::client::ClientBlock;
use crate::core::schema::error::ArtifactError;
use crate::core::schema::load::LoadBlock;
use crate::core::schema::repeat::RepeatBlock;
use crate::core::schema::rows::{FailureRecord, RequestTiming};
use crate::core::schema::server_metrics::ServerMetricsBlock;
use crate::core::schema::slo::SloBlock;
use crate::core::schema::sweep::SweepBlock;
use crate::core::schema::workload::WorkloadBlock;

/// `timestamp_precision`: the ns fields are exact, the ISO labels whole seconds.
pub const TIMESTAMP_PRECISION: &str = "nanosecond-unix-fields; ISO labels are second precision";

/// What [`ArtifactV1::redact_base_url`](crate::core::schema::ArtifactV1::redact_base_url) writes into `base_url`.
pub const REDACTED_BASE_URL: &str = "[operator identity redacted]";

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
    /// [`RunPlan::serve_flags`](crate::core::plan::RunPlan::serve_flags) gives it.
    pub serve_flags: Value,
    /// `{temperature, top_p}` × `{requested, effective_request, sent}` (§3), as
    /// [`RunPlan::sampling_block`](crate::core::plan::RunPlan::sampling_block) gives it.
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
    /// strobe addition (open-loop load, docs/guide/load.md): the load shape and whether the client
    /// kept it. Absent in closed-loop runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadBlock>,
    /// strobe addition (sweeps, docs/guide/load.md): the sweep and step this run was. Absent
    /// outside a sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepBlock>,
    /// strobe addition (repeats, docs/spec/converted.md): the group of repeated runs this run
    /// belongs to. Absent when the plan ran once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<RepeatBlock>,
    /// strobe addition (SLOs, docs/guide/metrics.md): the SLO the run was held to and its result.
    /// Absent when no SLO was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<SloBlock>,
    /// strobe addition (workloads, docs/guide/workloads.md): the workload file and how it was sent,
    /// or the completions API. Absent for synthetic prompts on the chat API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadBlock>,
    /// strobe addition (server metrics, docs/guide/telemetry.md): the server's own `/metrics`
    /// sampled through the run and summarized over its window. Absent when not scraped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_metrics: Option<ServerMetricsBlock>,
    /// strobe addition (docs/guide/telemetry.md, *A clean prefix cache*): the prefix-cache reset
    /// sent before the run and what the run says of it. Absent when no reset was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_cache_reset: Option<PrefixCacheResetBlock>,
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

    /// `<run_id>.json`, the run id made safe by [`file_stem`](crate::core::format::file_stem)
    /// (characters outside `[A-Za-z0-9._-]` replaced by `_`; `benchmark` first when it would
    /// be empty or start with a dot). A sweep's step adds its number, variable and value
    /// (`…-step02-concurrency-4.json`) and a repeat its number (`…-repeat03.json`): steps and
    /// repeats can start within the same second.
    pub fn file_name(&self) -> String {
        let mut stem = match &self.sweep {
            None => self.run_id.clone(),
            Some(sweep) => format!(
                "{}-step{:02}-{}-{}",
                self.run_id,
                sweep.step_index + 1,
                sweep.variable,
                sweep.value
            ),
        };
        if let Some(repeat) = &self.repeat {
            stem.push_str(&format!("-repeat{:02}", repeat.index + 1));
        }
        format!(
            "{}.json",
            crate::core::format::file_stem(&stem, "benchmark")
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
        if let Some(offender) = self
            .server_metrics
            .as_ref()
            .and_then(ServerMetricsBlock::first_non_finite)
        {
            floats.push(offender);
        }
        if let Some(offender) = self
            .prefix_cache_reset
            .as_ref()
            .and_then(PrefixCacheResetBlock::first_non_finite)
        {
            floats.push(offender);
        }
        floats.into_iter().find(|(_, value)| !value.is_finite())
    }
}

/// Every float of a row, named `{place}.{field}`.
pub(crate) fn row_floats(place: &str, row: &RequestTiming) -> Vec<(String, f64)> {
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
pub(crate) fn failure_floats(place: &str, failure: &FailureRecord) -> Vec<(String, f64)> {
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

pub(crate) fn check_finite(floats: Vec<(String, f64)>) -> Result<(), ArtifactError> {
    match floats.into_iter().find(|(_, value)| !value.is_finite()) {
        Some((field, value)) => Err(ArtifactError::NonFiniteValue { field, value }),
        None => Ok(()),
    }
}
