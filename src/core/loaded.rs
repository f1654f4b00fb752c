//! A dropped artifact file as the results pages see it: validated, then read as far as it can be.
//!
//! This module owns [`LoadedArtifact`]: the validator's [`Report`] for the file plus everything
//! the charts, the comparison and the exports need, extracted tolerantly from every generation
//! (G1 without rows and with p50/p95 only, G2, G3 rows with 15 keys, modern). Building one never
//! fails: a file that is too large, not UTF-8, not JSON or hostile still yields a value that says
//! so. Every string from the file is kept verbatim as data (the UI renders it as text, never as
//! HTML) and capped in length ([`CappedText`]) so a 10 MB model name cannot blow up a page.
//!
//! It also owns [`MetricKind`], the six request-level metrics strobe shows, with their labels,
//! units, row accessors and the `metrics` keys (and legacy fallbacks) they are read from.

use std::fmt;

use serde_json::{Map, Value};
use thiserror::Error;

use crate::core::artifact::ClientBlock;
use crate::core::observe::{FailureRecord, RequestTiming, CHUNK_ARRIVALS_KEPT};
use crate::core::plan::BROWSER_HTTP1_CONNECTIONS_PER_HOST;

use crate::core::validate::{
    validate_artifact, validate_artifact_text, Generation, Report, Verdict,
};

/// Largest artifact text strobe reads (64 MiB). Real artifacts are at most a few MB even with
/// 10,000 rows; beyond this the browser tab would spend seconds and hundreds of MB on one file.
pub const MAX_ARTIFACT_TEXT_BYTES: usize = 64 * 1024 * 1024;

/// Longest text kept for display from any string field, in characters.
pub const DISPLAY_TEXT_MAX_CHARS: usize = 512;

/// At most this many markup-like strings are reported per file; one is enough to warn.
pub const MARKUP_NOTICES_MAX: usize = 20;

/// A string from a file, kept verbatim up to [`DISPLAY_TEXT_MAX_CHARS`] characters.
///
/// The text is data: it must be rendered as a text node (or canvas text), never parsed as
/// HTML or Markdown. [`fmt::Display`] appends `…` when the original was longer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CappedText {
    /// The first [`DISPLAY_TEXT_MAX_CHARS`] characters of the original, unchanged.
    pub text: String,
    /// The original was longer than the cap.
    pub truncated: bool,
    /// Length of the original in characters.
    pub original_chars: usize,
}

impl CappedText {
    /// Keeps the first [`DISPLAY_TEXT_MAX_CHARS`] characters of `original`.
    pub fn new(original: &str) -> Self {
        Self::with_limit(original, DISPLAY_TEXT_MAX_CHARS)
    }

    /// Keeps the first `max_chars` characters of `original`.
    pub fn with_limit(original: &str, max_chars: usize) -> Self {
        let original_chars = original.chars().count();
        match original.char_indices().nth(max_chars) {
            Some((cut, _)) => Self {
                text: original[..cut].to_owned(),
                truncated: true,
                original_chars,
            },
            None => Self {
                text: original.to_owned(),
                truncated: false,
                original_chars,
            },
        }
    }

    /// The kept text, without the ellipsis.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for CappedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)?;
        if self.truncated {
            f.write_str("…")?;
        }
        Ok(())
    }
}

/// Why a file was not read at all (before any JSON rule could apply).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LoadRefusal {
    /// The text is larger than [`MAX_ARTIFACT_TEXT_BYTES`].
    #[error(
        "the file is {bytes} bytes, more than the {limit}-byte limit strobe reads; an artifact \
         is a few MB even with 10,000 requests, so check that this is the artifact JSON and \
         not a trace or a log"
    )]
    TooLarge {
        /// Size of the refused text.
        bytes: usize,
        /// [`MAX_ARTIFACT_TEXT_BYTES`].
        limit: usize,
    },
    /// The bytes are not UTF-8, so they cannot be JSON.
    #[error(
        "the file is not UTF-8 text (invalid byte at offset {offset}); artifacts are UTF-8 \
         JSON, so re-save it as UTF-8 or pick the .json artifact itself"
    )]
    NotUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// The file could not be read at all (the browser's reason).
    #[error("the file could not be read: {reason}; try picking it again")]
    Unreadable {
        /// What the browser or the network said.
        reason: String,
    },
}

/// Something worth telling the user about a file that does not make it invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadNotice {
    /// A string (or key) looks like HTML or script markup. strobe shows it as plain text only.
    MarkupLikeText {
        /// JSON path of the string, e.g. `$.model` or `$.failures[2].error_message`.
        path: String,
        /// The start of the string, capped at 80 characters, as data.
        excerpt: CappedText,
    },
    /// `request_timings` entries that are not objects were skipped.
    RowsSkipped {
        /// How many entries were skipped.
        count: usize,
    },
}

impl fmt::Display for LoadNotice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadNotice::MarkupLikeText { path, .. } => write!(
                f,
                "{path} contains text that looks like HTML or script; strobe shows it as plain \
                 text and never runs it"
            ),
            LoadNotice::RowsSkipped { count } => write!(
                f,
                "{count} request_timings entries are not objects and were skipped"
            ),
        }
    }
}

/// Who and what was measured. Every field is absent when the file lacks it or it is not a string.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunIdentity {
    /// `run_id`, e.g. `benchmark-20261005T114224Z`.
    pub run_id: Option<CappedText>,
    /// `model`.
    pub model: Option<CappedText>,
    /// `engine` (G2 and later).
    pub engine: Option<CappedText>,
    /// `gpu` (G2 and later).
    pub gpu: Option<CappedText>,
    /// `base_url` (possibly `[operator identity redacted]`).
    pub base_url: Option<CappedText>,
    /// `measurement_protocol` (`capacity-v2`, `capacity-v3`, `capacity-v4-reasoning`).
    pub measurement_protocol: Option<CappedText>,
    /// `started_at`, an ISO-8601 label.
    pub started_at: Option<CappedText>,
}

/// The requested sampling parameters (`sampling.*.requested`); absent before the modern
/// generation, `None` inside when the user did not request a value.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SamplingView {
    /// `sampling.temperature.requested`.
    pub temperature: Option<f64>,
    /// `sampling.top_p.requested`.
    pub top_p: Option<f64>,
}

/// What the run asked the server to do. Absent fields are `None`; so are fields of the wrong
/// type (the validator reports those).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkloadView {
    /// `requests`: planned requests.
    pub requests: Option<u64>,
    /// `completed`: successful requests.
    pub completed: Option<u64>,
    /// `failed`: failed requests (G2 and later).
    pub failed: Option<u64>,
    /// `concurrency`: requests in flight at once.
    pub concurrency: Option<u64>,
    /// `context_tokens`: the planned prompt size.
    pub context_tokens: Option<u64>,
    /// `context_seed`.
    pub context_seed: Option<i64>,
    /// `context_distribution` as compact JSON text (`{"65536":6}`), for display and comparison.
    pub context_distribution: Option<CappedText>,
    /// `max_context_tokens`: the server's context limit, when it was probed.
    pub max_context_tokens: Option<u64>,
    /// `max_tokens`: the output cap per request.
    pub max_tokens: Option<u64>,
    /// `response_words`: the controlled-output word count (0 = off).
    pub response_words: Option<u64>,
    /// `prompt_cache_mode`: `unique` or `shared`.
    pub prompt_cache_mode: Option<CappedText>,
    /// `shared_prefix_tokens`.
    pub shared_prefix_tokens: Option<u64>,
    /// `request_canaries`.
    pub request_canaries: Option<bool>,
    /// `controlled_output_policy`: `observe`, `strict`, or `None` (also when null).
    pub controlled_output_policy: Option<CappedText>,
    /// Requested sampling; `None` when the file has no `sampling` object.
    pub sampling: Option<SamplingView>,
    /// `serve_flags.thinking_mode`, e.g. `default` or `disabled`.
    pub thinking_mode: Option<CappedText>,
    /// `serve_flags.reasoning_effort`.
    pub reasoning_effort: Option<CappedText>,
    /// `performance_eligible`.
    pub performance_eligible: Option<bool>,
    /// `wall_clock_ms`: the run's duration.
    pub wall_clock_ms: Option<f64>,
}

/// One of the six request-level metrics strobe charts and compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetricKind {
    /// Time to first output (reasoning or content), ms.
    Ttfo,
    /// Time to first content token, ms.
    Ttft,
    /// End-to-end request latency, ms.
    E2e,
    /// Mean time per output token after the first, ms.
    Tpot,
    /// Decode rate after the first token, tokens per second.
    Decode,
    /// Prompt tokens divided by TTFO, tokens per second.
    Prefill,
}

impl MetricKind {
    /// Every metric, in display order.
    pub const ALL: [MetricKind; 6] = [
        MetricKind::Ttfo,
        MetricKind::Ttft,
        MetricKind::E2e,
        MetricKind::Tpot,
        MetricKind::Decode,
        MetricKind::Prefill,
    ];

    /// Stable id for file names and element ids: `ttfo`, `ttft`, `e2e`, `tpot`, `decode`,
    /// `prefill`.
    pub fn id(self) -> &'static str {
        match self {
            MetricKind::Ttfo => "ttfo",
            MetricKind::Ttft => "ttft",
            MetricKind::E2e => "e2e",
            MetricKind::Tpot => "tpot",
            MetricKind::Decode => "decode",
            MetricKind::Prefill => "prefill",
        }
    }

    /// Short label for axes and tables, e.g. `TTFT`.
    pub fn short_label(self) -> &'static str {
        match self {
            MetricKind::Ttfo => "TTFO",
            MetricKind::Ttft => "TTFT",
            MetricKind::E2e => "E2E",
            MetricKind::Tpot => "TPOT",
            MetricKind::Decode => "Decode",
            MetricKind::Prefill => "Effective prefill",
        }
    }

    /// Full label for titles, e.g. `Time to first token (TTFT)`.
    pub fn label(self) -> &'static str {
        match self {
            MetricKind::Ttfo => "Time to first output (TTFO)",
            MetricKind::Ttft => "Time to first token (TTFT)",
            MetricKind::E2e => "End-to-end latency (E2E)",
            MetricKind::Tpot => "Time per output token (TPOT)",
            MetricKind::Decode => "Decode rate",
            MetricKind::Prefill => "Effective prefill rate",
        }
    }

    /// The unit of the values: `ms` or `tok/s`.
    pub fn unit(self) -> &'static str {
        match self {
            MetricKind::Ttfo | MetricKind::Ttft | MetricKind::E2e | MetricKind::Tpot => "ms",
            MetricKind::Decode | MetricKind::Prefill => "tok/s",
        }
    }

    /// True for rates (more is better), false for latencies (less is better).
    pub fn higher_is_better(self) -> bool {
        matches!(self, MetricKind::Decode | MetricKind::Prefill)
    }

    /// The value of this metric in one row, when the row has it and it is finite.
    pub fn of_row(self, row: &RowView) -> Option<f64> {
        let value = match self {
            MetricKind::Ttfo => row.ttfo_ms,
            MetricKind::Ttft => row.ttft_ms,
            MetricKind::E2e => row.e2e_ms,
            MetricKind::Tpot => row.tpot_ms,
            MetricKind::Decode => row.decode_tok_s,
            MetricKind::Prefill => row.prefill_tok_s,
        };
        value.filter(|value| value.is_finite())
    }

    /// The finite values of this metric over `rows`, in row order.
    pub fn values(self, rows: &[RowView]) -> Vec<f64> {
        rows.iter().filter_map(|row| self.of_row(row)).collect()
    }

    /// `(key prefix, unit suffix)` of the `metrics` families that hold this metric, preferred
    /// first. TPOT falls back to the legacy `mean_inter_token_latency_ms_*` keys of G3 files.
    pub fn metric_families(self) -> &'static [(&'static str, &'static str)] {
        match self {
            MetricKind::Ttfo => &[("time_to_first_output", "_ms")],
            MetricKind::Ttft => &[("ttft", "_ms")],
            MetricKind::E2e => &[("e2e", "_ms")],
            MetricKind::Tpot => &[
                ("tpot", "_ms"),
                ("mean_time_per_output_token", "_ms"),
                ("mean_inter_token_latency_ms", ""),
            ],
            MetricKind::Decode => &[("decode_tok_s", "")],
            MetricKind::Prefill => &[("effective_prefill_tok_s", "")],
        }
    }
}

impl fmt::Display for MetricKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// One summary statistic of a metric family in `metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetricStat {
    /// Arithmetic mean (modern only).
    Mean,
    /// Median (every generation).
    P50,
    /// 95th percentile (every generation).
    P95,
    /// 99th percentile (modern only; descriptive below 100 samples).
    P99,
}

impl MetricStat {
    /// Every statistic, in display order.
    pub const ALL: [MetricStat; 4] = [
        MetricStat::P50,
        MetricStat::P95,
        MetricStat::P99,
        MetricStat::Mean,
    ];

    /// The stat's name inside a `metrics` key (`p50`, `mean`, …) and in tables.
    pub fn id(self) -> &'static str {
        match self {
            MetricStat::Mean => "mean",
            MetricStat::P50 => "p50",
            MetricStat::P95 => "p95",
            MetricStat::P99 => "p99",
        }
    }
}

/// What `metrics` says about one [`MetricKind`]. G1/G2 files carry p50/p95 only.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MetricSummary {
    /// Median.
    pub p50: Option<f64>,
    /// 95th percentile.
    pub p95: Option<f64>,
    /// 99th percentile, when present.
    pub p99: Option<f64>,
    /// Mean, when present.
    pub mean: Option<f64>,
    /// `{prefix}_samples`, when present.
    pub samples: Option<u64>,
    /// The key prefix the values were read from (e.g. `mean_inter_token_latency_ms` for a G3
    /// TPOT), or `None` when the file has none of them.
    pub source_prefix: Option<&'static str>,
}

impl MetricSummary {
    /// One statistic.
    pub fn stat(&self, stat: MetricStat) -> Option<f64> {
        match stat {
            MetricStat::Mean => self.mean,
            MetricStat::P50 => self.p50,
            MetricStat::P95 => self.p95,
            MetricStat::P99 => self.p99,
        }
    }

    /// True when no statistic is present.
    pub fn is_empty(&self) -> bool {
        self.p50.is_none() && self.p95.is_none() && self.p99.is_none() && self.mean.is_none()
    }
}

/// The headline numbers of a run as its `metrics` object states them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KeyMetrics {
    /// TTFO summary.
    pub ttfo: MetricSummary,
    /// TTFT summary.
    pub ttft: MetricSummary,
    /// E2E summary.
    pub e2e: MetricSummary,
    /// TPOT summary (with the legacy key fallback).
    pub tpot: MetricSummary,
    /// Decode rate summary.
    pub decode: MetricSummary,
    /// Effective prefill rate summary.
    pub prefill: MetricSummary,
    /// `throughput_tok_s`: output tokens per wall-clock second (null when any request failed).
    pub throughput_tok_s: Option<f64>,
    /// `prefix_cache_hit_avg`: mean cached fraction of the prompt.
    pub prefix_cache_hit_avg: Option<f64>,
    /// `output_tokens`: total output tokens of the successful requests.
    pub output_tokens: Option<u64>,
}

impl KeyMetrics {
    /// The summary of one metric.
    pub fn get(&self, kind: MetricKind) -> &MetricSummary {
        match kind {
            MetricKind::Ttfo => &self.ttfo,
            MetricKind::Ttft => &self.ttft,
            MetricKind::E2e => &self.e2e,
            MetricKind::Tpot => &self.tpot,
            MetricKind::Decode => &self.decode,
            MetricKind::Prefill => &self.prefill,
        }
    }

    fn get_mut(&mut self, kind: MetricKind) -> &mut MetricSummary {
        match kind {
            MetricKind::Ttfo => &mut self.ttfo,
            MetricKind::Ttft => &mut self.ttft,
            MetricKind::E2e => &mut self.e2e,
            MetricKind::Tpot => &mut self.tpot,
            MetricKind::Decode => &mut self.decode,
            MetricKind::Prefill => &mut self.prefill,
        }
    }

    /// Reads the summaries from a `metrics` object, taking each statistic from the first
    /// family (see [`MetricKind::metric_families`]) that holds a finite number for it.
    pub fn from_metrics(metrics: &Map<String, Value>) -> Self {
        let mut key_metrics = KeyMetrics {
            throughput_tok_s: finite_f64(metrics.get("throughput_tok_s")),
            prefix_cache_hit_avg: finite_f64(metrics.get("prefix_cache_hit_avg")),
            output_tokens: metrics.get("output_tokens").and_then(Value::as_u64),
            ..KeyMetrics::default()
        };
        for kind in MetricKind::ALL {
            let summary = key_metrics.get_mut(kind);
            for &(prefix, suffix) in kind.metric_families() {
                let stat_of = |stat: MetricStat| {
                    finite_f64(metrics.get(&format!("{prefix}_{}{suffix}", stat.id())))
                };
                let found = MetricSummary {
                    p50: stat_of(MetricStat::P50),
                    p95: stat_of(MetricStat::P95),
                    p99: stat_of(MetricStat::P99),
                    mean: stat_of(MetricStat::Mean),
                    samples: metrics
                        .get(&format!("{prefix}_samples"))
                        .and_then(Value::as_u64),
                    source_prefix: Some(prefix),
                };
                if !found.is_empty() {
                    *summary = found;
                    break;
                }
                if summary.samples.is_none() {
                    summary.samples = found.samples;
                }
            }
        }
        key_metrics
    }
}

/// One `request_timings[]` row, read tolerantly: a missing or mistyped field is `None`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RowView {
    /// Position of the row in `request_timings`.
    pub position: usize,
    /// `request_index`, when a non-negative integer.
    pub request_index: Option<u64>,
    /// `started_at_ms` (strobe addition): request start relative to the run start.
    pub started_at_ms: Option<f64>,
    /// `planned_context_tokens`.
    pub planned_context_tokens: Option<u64>,
    /// `prompt_tokens` as the server reported them.
    pub prompt_tokens: Option<u64>,
    /// `cached_tokens` (strobe addition): prompt tokens served from the prefix cache.
    pub cached_tokens: Option<u64>,
    /// `output_tokens` (null when not counted exactly).
    pub output_tokens: Option<u64>,
    /// `time_to_first_output_ms` (absent from some G3 rows).
    pub ttfo_ms: Option<f64>,
    /// `ttft_ms`.
    pub ttft_ms: Option<f64>,
    /// `e2e_ms`.
    pub e2e_ms: Option<f64>,
    /// `generation_ms`.
    pub generation_ms: Option<f64>,
    /// `tpot_ms`, else `mean_time_per_output_token_ms`, else `mean_inter_token_latency_ms`.
    pub tpot_ms: Option<f64>,
    /// `decode_tok_s`.
    pub decode_tok_s: Option<f64>,
    /// `effective_prefill_tok_s`.
    pub prefill_tok_s: Option<f64>,
    /// Gaps between consecutive stream reads that carried events, ms, from the optional
    /// per-chunk trace `chunk_arrivals_ms` (strobe's *Chunk traces*); empty without a trace.
    pub read_gaps_ms: Vec<f64>,
}

impl RowView {
    /// The view of a row strobe itself just measured (live charts during a run).
    pub fn from_timing(position: usize, row: &RequestTiming) -> Self {
        RowView {
            position,
            request_index: Some(row.request_index),
            started_at_ms: row.started_at_ms,
            planned_context_tokens: Some(row.planned_context_tokens),
            prompt_tokens: row.prompt_tokens,
            cached_tokens: row.cached_tokens.flatten(),
            output_tokens: row.output_tokens,
            ttfo_ms: Some(row.time_to_first_output_ms),
            ttft_ms: Some(row.ttft_ms),
            e2e_ms: Some(row.e2e_ms),
            generation_ms: Some(row.generation_ms),
            tpot_ms: row.tpot_ms,
            decode_tok_s: row.decode_tok_s,
            prefill_tok_s: row.effective_prefill_tok_s,
            read_gaps_ms: row
                .chunk_arrivals_ms
                .as_deref()
                .map(read_gaps)
                .unwrap_or_default(),
        }
    }

    /// The longest gap between two reads of this request's stream, ms (needs a trace).
    pub fn longest_stall_ms(&self) -> Option<f64> {
        self.read_gaps_ms.iter().copied().reduce(f64::max)
    }

    /// The request index, or the row's position when the index is missing or malformed.
    pub fn index_or_position(&self) -> u64 {
        self.request_index.unwrap_or(self.position as u64)
    }

    /// TTFO, falling back to TTFT as the producer does for rows without reasoning (§5).
    pub fn ttfo_or_ttft_ms(&self) -> Option<f64> {
        self.ttfo_ms.or(self.ttft_ms)
    }

    fn from_json(position: usize, row: &Map<String, Value>) -> Self {
        let float = |key: &str| finite_f64(row.get(key));
        let integer = |key: &str| row.get(key).and_then(Value::as_u64);
        RowView {
            position,
            request_index: integer("request_index"),
            started_at_ms: float("started_at_ms"),
            planned_context_tokens: integer("planned_context_tokens"),
            prompt_tokens: integer("prompt_tokens"),
            cached_tokens: integer("cached_tokens"),
            output_tokens: integer("output_tokens"),
            ttfo_ms: float("time_to_first_output_ms"),
            ttft_ms: float("ttft_ms"),
            e2e_ms: float("e2e_ms"),
            generation_ms: float("generation_ms"),
            tpot_ms: float("tpot_ms")
                .or_else(|| float("mean_time_per_output_token_ms"))
                .or_else(|| float("mean_inter_token_latency_ms")),
            decode_tok_s: float("decode_tok_s"),
            prefill_tok_s: float("effective_prefill_tok_s"),
            read_gaps_ms: traced_arrivals(row.get("chunk_arrivals_ms"))
                .map(|arrivals| read_gaps(&arrivals))
                .unwrap_or_default(),
        }
    }
}

/// A file's `chunk_arrivals_ms`, when it is what strobe writes: at most
/// [`CHUNK_ARRIVALS_KEPT`] finite numbers. Anything else is no trace at all, rather than part of
/// one.
fn traced_arrivals(value: Option<&Value>) -> Option<Vec<f64>> {
    let arrivals = value?.as_array()?;
    if arrivals.len() > CHUNK_ARRIVALS_KEPT {
        return None;
    }
    arrivals
        .iter()
        .map(|arrival| finite_f64(Some(arrival)))
        .collect()
}

/// The gaps between consecutive arrival times; a step backwards (not something strobe writes)
/// ends the trace there.
fn read_gaps(arrivals: &[f64]) -> Vec<f64> {
    arrivals
        .windows(2)
        .map(|pair| pair[1] - pair[0])
        .take_while(|gap| gap.is_finite() && *gap >= 0.0)
        .collect()
}

/// One `failures[]` entry, read tolerantly. Strings are data, capped for display.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FailureView {
    /// Position of the entry in `failures`.
    pub position: usize,
    /// `request_index`.
    pub request_index: Option<u64>,
    /// `failure_class` (modern), e.g. `request_error`.
    pub failure_class: Option<CappedText>,
    /// `error_type`, e.g. `TimeoutError`.
    pub error_type: Option<CappedText>,
    /// `error_message` (G3 and later).
    pub error_message: Option<CappedText>,
    /// `elapsed_ms`: request start to failure (modern).
    pub elapsed_ms: Option<f64>,
    /// Request start on the run clock: a `started_at_ms` key of the failure, else
    /// `response_timing.started_at_ms` when the failed response kept a timing row.
    pub started_at_ms: Option<f64>,
    /// `response_received`.
    pub response_received: Option<bool>,
}

impl FailureView {
    /// The view of a failure strobe itself just recorded (live charts during a run).
    pub fn from_record(position: usize, failure: &FailureRecord) -> Self {
        FailureView {
            position,
            request_index: Some(failure.request_index),
            failure_class: Some(CappedText::new(failure.failure_class.as_str())),
            error_type: Some(CappedText::new(&failure.error_type)),
            error_message: Some(CappedText::new(&failure.error_message)),
            elapsed_ms: failure.elapsed_ms,
            started_at_ms: None,
            response_received: Some(failure.response_received),
        }
    }

    /// The request index, or the entry's position when the index is missing or malformed.
    pub fn index_or_position(&self) -> u64 {
        self.request_index.unwrap_or(self.position as u64)
    }

    fn from_json(position: usize, failure: &Map<String, Value>) -> Self {
        FailureView {
            position,
            request_index: failure.get("request_index").and_then(Value::as_u64),
            failure_class: capped_string(failure.get("failure_class")),
            error_type: capped_string(failure.get("error_type")),
            error_message: capped_string(failure.get("error_message")),
            elapsed_ms: finite_f64(failure.get("elapsed_ms")),
            started_at_ms: finite_f64(failure.get("started_at_ms")).or_else(|| {
                finite_f64(
                    failure
                        .get("response_timing")
                        .and_then(|timing| timing.get("started_at_ms")),
                )
            }),
            response_received: failure.get("response_received").and_then(Value::as_bool),
        }
    }
}

/// strobe's `client` block (§12): how far the browser measurement itself can be trusted.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClientView {
    /// `client.name`, e.g. `strobe`.
    pub name: Option<CappedText>,
    /// `client.version`.
    pub version: Option<CappedText>,
    /// `client.user_agent`.
    pub user_agent: Option<CappedText>,
    /// `client.timer_resolution_ms`: measured `performance.now()` granularity.
    pub timer_resolution_ms: Option<f64>,
    /// `client.cross_origin_isolated`: finer timers were available.
    pub cross_origin_isolated: Option<bool>,
    /// `client.transport.connection_limit_suspected`: the browser may have queued requests.
    pub connection_limit_suspected: Option<bool>,
    /// `client.measurement_thread`: `worker` or `main`.
    pub measurement_thread: Option<CappedText>,
    /// `client.live_view`: `during` (the page showed progress meanwhile) or `end`.
    pub live_view: Option<CappedText>,
    /// `client.transport.endpoints`: base URLs the run used.
    pub endpoints: Option<u64>,
    /// `client.transport.max_in_flight_per_origin`.
    pub max_in_flight_per_origin: Option<u64>,
    /// `client.warmup.requests`: unmeasured warm-up requests before the run (absent: none, or
    /// a client that does not say).
    pub warmup_requests: Option<u64>,
    /// `client.warmup.connections`: the last warm-up check round's verdict, as written.
    pub warmup_connections: Option<CappedText>,
}

impl ClientView {
    fn from_json(client: &Map<String, Value>) -> Self {
        let transport = |key: &str| {
            client
                .get("transport")
                .and_then(|transport| transport.get(key))
        };
        let warmup = |key: &str| client.get("warmup").and_then(|warmup| warmup.get(key));
        ClientView {
            name: capped_string(client.get("name")),
            version: capped_string(client.get("version")),
            user_agent: capped_string(client.get("user_agent")),
            timer_resolution_ms: finite_f64(client.get("timer_resolution_ms")),
            cross_origin_isolated: client.get("cross_origin_isolated").and_then(Value::as_bool),
            connection_limit_suspected: transport("connection_limit_suspected")
                .and_then(Value::as_bool),
            measurement_thread: capped_string(client.get("measurement_thread")),
            live_view: capped_string(client.get("live_view")),
            endpoints: transport("endpoints").and_then(Value::as_u64),
            max_in_flight_per_origin: transport("max_in_flight_per_origin").and_then(Value::as_u64),
            warmup_requests: warmup("requests").and_then(Value::as_u64),
            warmup_connections: capped_string(warmup("connections")),
        }
    }

    /// The view of a `client` block strobe itself just wrote.
    pub fn of_block(client: &ClientBlock) -> Self {
        match serde_json::to_value(client) {
            Ok(Value::Object(map)) => Self::from_json(&map),
            _ => Self::default(),
        }
    }

    /// What a reader should know about how the numbers were taken, one sentence each: who
    /// measured where with which timer, where the requests went, and whether the browser may
    /// have queued some of them.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let who = match (&self.name, &self.version) {
            (Some(name), Some(version)) => format!("{name} {version}"),
            (Some(name), None) => name.to_string(),
            _ => "an unnamed client".to_owned(),
        };
        let thread_name = self
            .measurement_thread
            .as_ref()
            .map(|thread| thread.as_str());
        let thread = match thread_name {
            Some("worker") => " in a dedicated worker",
            Some("main") => " on the page's main thread",
            _ => "",
        };
        let page = match (
            thread_name,
            self.live_view.as_ref().map(|view| view.as_str()),
        ) {
            (Some("main"), Some("during")) => {
                ", which also drew the live progress (reads arriving meanwhile could be \
                 stamped late)"
            }
            (_, Some("end")) => ", the page drawing nothing until the run ended",
            _ => "",
        };
        let timer = self
            .timer_resolution_ms
            .map(|ms| format!("; timer resolution {ms} ms"))
            .unwrap_or_default();
        let isolation = match self.cross_origin_isolated {
            Some(true) => "; cross-origin isolated",
            Some(false) => "; not cross-origin isolated (coarser timer)",
            None => "",
        };
        notes.push(format!(
            "Measured by {who}{thread}{page}{timer}{isolation}."
        ));
        if let (Some(endpoints), Some(most)) = (self.endpoints, self.max_in_flight_per_origin) {
            notes.push(format!(
                "{endpoints} endpoint(s); at most {most} request(s) in flight to one origin."
            ));
        }
        if let Some(note) = self.warmup_note() {
            notes.push(note);
        }
        if self.connection_limit_suspected == Some(true) {
            notes.push(format!(
                "More requests were in flight to one origin than the browser's {} connections \
                 per HTTP/1.1 origin: some TTFO values include time spent waiting inside the \
                 browser. Use an endpoint pool (more ports of the same server) or HTTP/2.",
                BROWSER_HTTP1_CONNECTIONS_PER_HOST
            ));
        }
        notes
    }

    /// What the warm-up did and whether the connections were shown open when the run started.
    fn warmup_note(&self) -> Option<String> {
        let requests = self.warmup_requests?;
        let sent = format!("Warm-up: {requests} unmeasured request(s) before the run");
        let verdict = self
            .warmup_connections
            .as_ref()
            .map(|verdict| verdict.as_str());
        Some(match verdict {
            Some("ready") => format!(
                "{sent}; every connection the first wave needs was shown open when it started."
            ),
            Some("still_opening") => format!(
                "{sent}, but its last check still opened a connection: a first-wave row may \
                 include connecting (its new_connection says so)."
            ),
            Some("not_shown") => format!(
                "{sent}; its check answers ended too quickly to show that every slot had an \
                 open connection of its own (see the rows' new_connection)."
            ),
            Some("unknown") => format!(
                "{sent}; the endpoint withholds timing (no Timing-Allow-Origin), so whether \
                 the connections were open could not be checked."
            ),
            _ => format!("{sent}."),
        })
    }
}

/// A dropped artifact: the validator's verdict plus everything that could be read from it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedArtifact {
    /// The file name the user dropped, as data.
    pub file_name: CappedText,
    /// Size of the text in bytes.
    pub text_bytes: usize,
    /// Set when the file was not read at all (too large, not UTF-8).
    pub refusal: Option<LoadRefusal>,
    /// The validator's verdict, generation and every violation.
    pub report: Report,
    /// Things worth a warning that do not make the file invalid.
    pub notices: Vec<LoadNotice>,
    /// Who and what was measured.
    pub identity: RunIdentity,
    /// What the run asked for.
    pub workload: WorkloadView,
    /// The `metrics` headline numbers.
    pub metrics: KeyMetrics,
    /// `request_timings`, in file order (empty for G1/G2).
    pub rows: Vec<RowView>,
    /// `failures`, in file order.
    pub failures: Vec<FailureView>,
    /// strobe's `client` block, when present.
    pub client: Option<ClientView>,
}

impl LoadedArtifact {
    /// Reads raw file bytes: refuses oversized or non-UTF-8 input, then [`Self::from_text`].
    pub fn from_bytes(file_name: &str, bytes: &[u8]) -> Self {
        if bytes.len() > MAX_ARTIFACT_TEXT_BYTES {
            return Self::refused(
                file_name,
                bytes.len(),
                LoadRefusal::TooLarge {
                    bytes: bytes.len(),
                    limit: MAX_ARTIFACT_TEXT_BYTES,
                },
            );
        }
        match std::str::from_utf8(bytes) {
            Ok(text) => Self::from_text(file_name, text),
            Err(error) => Self::refused(
                file_name,
                bytes.len(),
                LoadRefusal::NotUtf8 {
                    offset: error.valid_up_to(),
                },
            ),
        }
    }

    /// A file refused by its size alone, before reading it (the browser knows the size first,
    /// so a huge file never has to be loaded into memory).
    pub fn too_large(file_name: &str, bytes: usize) -> Self {
        Self::refused(
            file_name,
            bytes,
            LoadRefusal::TooLarge {
                bytes,
                limit: MAX_ARTIFACT_TEXT_BYTES,
            },
        )
    }

    /// A file whose bytes could not be obtained, with the reason.
    pub fn unreadable(file_name: &str, reason: &str) -> Self {
        Self::refused(
            file_name,
            0,
            LoadRefusal::Unreadable {
                reason: CappedText::new(reason).to_string(),
            },
        )
    }

    /// Validates `text` and reads what it can. Never fails: an unreadable file gives an
    /// invalid report and empty data.
    pub fn from_text(file_name: &str, text: &str) -> Self {
        if text.len() > MAX_ARTIFACT_TEXT_BYTES {
            return Self::refused(
                file_name,
                text.len(),
                LoadRefusal::TooLarge {
                    bytes: text.len(),
                    limit: MAX_ARTIFACT_TEXT_BYTES,
                },
            );
        }
        // Parse once. serde_json rejects exactly what the text-level rules look for (a BOM,
        // NaN/Infinity tokens, numbers out of range, nesting beyond its recursion limit), so
        // when the parse succeeds `validate_artifact` on the value gives the same report as
        // `validate_artifact_text`, without a second parse of a possibly large file.
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(_) => return Self::empty(file_name, text.len(), validate_artifact_text(text)),
        };
        let report = validate_artifact(&value);
        let mut loaded = Self::empty(file_name, text.len(), report);
        loaded.read_value(&value);
        loaded
    }

    /// The verdict: valid, valid legacy (with its generation) or invalid.
    pub fn verdict(&self) -> Verdict {
        self.report.verdict
    }

    /// The generation the validator detected.
    pub fn generation(&self) -> Generation {
        self.report.generation
    }

    /// True when the file has request rows to chart distributions from.
    pub fn has_rows(&self) -> bool {
        !self.rows.is_empty()
    }

    /// A name for legends and table headers: the file name, else the run id.
    pub fn label(&self) -> String {
        if !self.file_name.text.trim().is_empty() {
            return self.file_name.to_string();
        }
        match &self.identity.run_id {
            Some(run_id) => run_id.to_string(),
            None => "(unnamed run)".to_owned(),
        }
    }

    /// One sentence for the file's card: the verdict and what can be shown.
    pub fn status_line(&self) -> String {
        if let Some(refusal) = &self.refusal {
            return format!("Not read: {refusal}.");
        }
        match self.report.verdict {
            Verdict::Valid if self.rows.is_empty() => {
                "Valid artifact with no successful request rows; showing its summary metrics."
                    .to_owned()
            }
            Verdict::Valid => format!("Valid artifact with {} request rows.", self.rows.len()),
            Verdict::ValidLegacy(generation) if self.rows.is_empty() => format!(
                "Valid legacy artifact ({generation}): it has no request rows, so only its \
                 p50/p95 summary metrics are shown."
            ),
            Verdict::ValidLegacy(generation) => format!(
                "Valid legacy artifact ({generation}) with {} request rows; newer fields are \
                 absent.",
                self.rows.len()
            ),
            Verdict::Invalid => {
                let count = self.report.violations.len();
                match self.report.violations.first() {
                    Some(first) => format!(
                        "Invalid artifact: {count} violation{} (first: {first}).",
                        if count == 1 { "" } else { "s" }
                    ),
                    None => "Invalid artifact.".to_owned(),
                }
            }
        }
    }

    /// Every message the user should see: the refusal, each violation, then each notice.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if let Some(refusal) = &self.refusal {
            problems.push(refusal.to_string());
        }
        problems.extend(self.report.violations.iter().map(ToString::to_string));
        problems.extend(self.notices.iter().map(ToString::to_string));
        problems
    }

    fn refused(file_name: &str, text_bytes: usize, refusal: LoadRefusal) -> Self {
        let mut loaded = Self::empty(
            file_name,
            text_bytes,
            Report {
                verdict: Verdict::Invalid,
                generation: Generation::Unknown,
                violations: Vec::new(),
            },
        );
        loaded.refusal = Some(refusal);
        loaded
    }

    fn empty(file_name: &str, text_bytes: usize, report: Report) -> Self {
        LoadedArtifact {
            file_name: CappedText::new(file_name),
            text_bytes,
            refusal: None,
            report,
            notices: Vec::new(),
            identity: RunIdentity::default(),
            workload: WorkloadView::default(),
            metrics: KeyMetrics::default(),
            rows: Vec::new(),
            failures: Vec::new(),
            client: None,
        }
    }

    fn read_value(&mut self, value: &Value) {
        self.notices = markup_notices(value);
        let Some(artifact) = value.as_object() else {
            return;
        };
        let text = |key: &str| capped_string(artifact.get(key));
        let integer = |key: &str| artifact.get(key).and_then(Value::as_u64);
        self.identity = RunIdentity {
            run_id: text("run_id"),
            model: text("model"),
            engine: text("engine"),
            gpu: text("gpu"),
            base_url: text("base_url"),
            measurement_protocol: text("measurement_protocol"),
            started_at: text("started_at"),
        };
        let serve_flags = artifact.get("serve_flags");
        self.workload = WorkloadView {
            requests: integer("requests"),
            completed: integer("completed"),
            failed: integer("failed"),
            concurrency: integer("concurrency"),
            context_tokens: integer("context_tokens"),
            context_seed: artifact.get("context_seed").and_then(Value::as_i64),
            context_distribution: artifact
                .get("context_distribution")
                .filter(|distribution| distribution.is_object())
                .map(|distribution| CappedText::new(&distribution.to_string())),
            max_context_tokens: integer("max_context_tokens"),
            max_tokens: integer("max_tokens"),
            response_words: integer("response_words"),
            prompt_cache_mode: text("prompt_cache_mode"),
            shared_prefix_tokens: integer("shared_prefix_tokens"),
            request_canaries: artifact.get("request_canaries").and_then(Value::as_bool),
            controlled_output_policy: text("controlled_output_policy"),
            sampling: artifact
                .get("sampling")
                .and_then(Value::as_object)
                .map(|sampling| SamplingView {
                    temperature: finite_f64(
                        sampling
                            .get("temperature")
                            .and_then(|parameter| parameter.get("requested")),
                    ),
                    top_p: finite_f64(
                        sampling
                            .get("top_p")
                            .and_then(|parameter| parameter.get("requested")),
                    ),
                }),
            thinking_mode: capped_string(serve_flags.and_then(|flags| flags.get("thinking_mode"))),
            reasoning_effort: capped_string(
                serve_flags.and_then(|flags| flags.get("reasoning_effort")),
            ),
            performance_eligible: artifact
                .get("performance_eligible")
                .and_then(Value::as_bool),
            wall_clock_ms: finite_f64(artifact.get("wall_clock_ms")),
        };
        if let Some(metrics) = artifact.get("metrics").and_then(Value::as_object) {
            self.metrics = KeyMetrics::from_metrics(metrics);
        }
        if let Some(rows) = artifact.get("request_timings").and_then(Value::as_array) {
            let mut skipped = 0;
            self.rows = rows
                .iter()
                .enumerate()
                .filter_map(|(position, row)| match row.as_object() {
                    Some(row) => Some(RowView::from_json(position, row)),
                    None => {
                        skipped += 1;
                        None
                    }
                })
                .collect();
            if skipped > 0 {
                self.notices
                    .push(LoadNotice::RowsSkipped { count: skipped });
            }
        }
        if let Some(failures) = artifact.get("failures").and_then(Value::as_array) {
            self.failures = failures
                .iter()
                .enumerate()
                .filter_map(|(position, failure)| {
                    failure
                        .as_object()
                        .map(|failure| FailureView::from_json(position, failure))
                })
                .collect();
        }
        self.client = artifact
            .get("client")
            .and_then(Value::as_object)
            .map(ClientView::from_json);
    }
}

/// A finite number (JSON numbers parsed by serde_json always are; this also rejects bools).
fn finite_f64(value: Option<&Value>) -> Option<f64> {
    value
        .and_then(Value::as_f64)
        .filter(|number| number.is_finite())
}

/// A string field, capped for display; other types are `None`.
fn capped_string(value: Option<&Value>) -> Option<CappedText> {
    value.and_then(Value::as_str).map(CappedText::new)
}

const JAVASCRIPT_SCHEME: &[u8] = b"javascript:";

/// True when `text` looks like HTML or script markup: a `<` opening a tag, comment or
/// declaration, or a `javascript:` URL. It only drives a warning; rendering never trusts text.
pub fn looks_like_markup(text: &str) -> bool {
    let bytes = text.as_bytes();
    let tag_open = bytes.windows(2).any(|pair| {
        pair[0] == b'<' && (pair[1].is_ascii_alphabetic() || matches!(pair[1], b'/' | b'!' | b'?'))
    });
    tag_open
        || bytes
            .windows(JAVASCRIPT_SCHEME.len())
            .any(|window| window.eq_ignore_ascii_case(JAVASCRIPT_SCHEME))
}

/// Paths of up to [`MARKUP_NOTICES_MAX`] strings or keys that look like markup. Iterative, so
/// the depth of the input does not matter.
fn markup_notices(value: &Value) -> Vec<LoadNotice> {
    let mut notices = Vec::new();
    let mut pending: Vec<(String, &Value)> = vec![("$".to_owned(), value)];
    while let Some((path, value)) = pending.pop() {
        if notices.len() >= MARKUP_NOTICES_MAX {
            break;
        }
        match value {
            Value::String(text) if looks_like_markup(text) => {
                notices.push(LoadNotice::MarkupLikeText {
                    excerpt: CappedText::with_limit(text, 80),
                    path,
                });
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate().rev() {
                    if matches!(item, Value::String(_) | Value::Array(_) | Value::Object(_)) {
                        pending.push((format!("{path}[{index}]"), item));
                    }
                }
            }
            Value::Object(object) => {
                let mut children = Vec::new();
                for (key, item) in object {
                    let child_path = format!("{path}.{key}");
                    if looks_like_markup(key) {
                        notices.push(LoadNotice::MarkupLikeText {
                            excerpt: CappedText::with_limit(key, 80),
                            path: child_path.clone(),
                        });
                    }
                    if matches!(item, Value::String(_) | Value::Array(_) | Value::Object(_)) {
                        children.push((child_path, item));
                    }
                }
                pending.extend(children.into_iter().rev());
            }
            _ => {}
        }
    }
    notices.truncate(MARKUP_NOTICES_MAX);
    notices
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn capped_text_cuts_on_character_boundaries() {
        let long = "é".repeat(DISPLAY_TEXT_MAX_CHARS + 88);
        let capped = CappedText::new(&long);
        assert!(capped.truncated);
        assert_eq!(capped.original_chars, DISPLAY_TEXT_MAX_CHARS + 88);
        assert_eq!(capped.text.chars().count(), DISPLAY_TEXT_MAX_CHARS);
        assert_eq!(capped.to_string(), format!("{}…", capped.text));

        let exact = "x".repeat(DISPLAY_TEXT_MAX_CHARS);
        let kept = CappedText::new(&exact);
        assert!(!kept.truncated);
        assert_eq!(kept.to_string(), exact);
        assert_eq!(CappedText::new("").to_string(), "");
    }

    #[test]
    fn markup_detection_flags_tags_and_script_urls_only() {
        for markup in [
            "<script>alert(1)</script>",
            "</b>",
            "<!-- x -->",
            "<?xml?>",
            "JavaScript:alert(1)",
            "model <img src=x>",
        ] {
            assert!(looks_like_markup(markup), "{markup}");
        }
        for plain in ["", "1<2", "ttft <= 5 ms", "a < b", "qwen3-8b", "x>y"] {
            assert!(!looks_like_markup(plain), "{plain}");
        }
    }

    #[test]
    fn key_metrics_prefer_the_modern_tpot_keys_and_fall_back_to_the_legacy_ones() {
        let modern = json!({
            "tpot_p50_ms": 4.5,
            "tpot_samples": 6,
            "mean_inter_token_latency_ms_p50": 9.0,
        });
        let metrics = KeyMetrics::from_metrics(modern.as_object().expect("object"));
        assert_eq!(metrics.tpot.p50, Some(4.5));
        assert_eq!(metrics.tpot.samples, Some(6));
        assert_eq!(metrics.tpot.source_prefix, Some("tpot"));

        let legacy = json!({
            "mean_inter_token_latency_ms_p50": 9.0,
            "mean_inter_token_latency_ms_p95": 12.0,
            "ttft_p50_ms": null,
            "throughput_tok_s": true,
        });
        let metrics = KeyMetrics::from_metrics(legacy.as_object().expect("object"));
        assert_eq!(metrics.tpot.p95, Some(12.0));
        assert_eq!(
            metrics.tpot.source_prefix,
            Some("mean_inter_token_latency_ms")
        );
        assert!(metrics.ttft.is_empty());
        assert_eq!(metrics.ttft.source_prefix, None);
        assert_eq!(metrics.throughput_tok_s, None, "a bool is not a number");
    }

    #[test]
    fn a_non_object_is_invalid_with_nothing_read() {
        let loaded = LoadedArtifact::from_text("list.json", "[1, 2]");
        assert_eq!(loaded.verdict(), Verdict::Invalid);
        assert!(loaded.rows.is_empty());
        assert_eq!(loaded.identity, RunIdentity::default());
        assert!(loaded.status_line().starts_with("Invalid artifact: "));
    }

    #[test]
    fn malformed_rows_and_fields_are_skipped_not_fatal() {
        let text = json!({
            "schema": "anvil-serving.benchmark/v1",
            "run_id": 42,
            "model": "m",
            "concurrency": true,
            "request_timings": [
                "not a row",
                {"request_index": -1, "ttft_ms": "fast", "e2e_ms": 12.5, "cached_tokens": 7},
            ],
            "failures": [{"error_type": ["TypeError"], "request_index": 3}],
        })
        .to_string();
        let loaded = LoadedArtifact::from_text("odd.json", &text);
        assert_eq!(loaded.verdict(), Verdict::Invalid);
        assert_eq!(loaded.identity.run_id, None, "a number is not a run id");
        assert_eq!(loaded.workload.concurrency, None, "a bool is not a count");
        assert_eq!(loaded.rows.len(), 1);
        let row = &loaded.rows[0];
        assert_eq!((row.position, row.request_index), (1, None));
        assert_eq!(row.index_or_position(), 1);
        assert_eq!((row.ttft_ms, row.e2e_ms), (None, Some(12.5)));
        assert_eq!(row.cached_tokens, Some(7));
        assert_eq!(loaded.failures[0].error_type, None);
        assert_eq!(loaded.failures[0].index_or_position(), 3);
        assert!(loaded
            .notices
            .contains(&LoadNotice::RowsSkipped { count: 1 }));
    }

    #[test]
    fn the_label_is_the_file_name_else_the_run_id() {
        let text = json!({"run_id": "benchmark-20260101T000000Z"}).to_string();
        assert_eq!(
            LoadedArtifact::from_text("run.json", &text).label(),
            "run.json"
        );
        assert_eq!(
            LoadedArtifact::from_text("  ", &text).label(),
            "benchmark-20260101T000000Z"
        );
        assert_eq!(LoadedArtifact::from_text("", "{}").label(), "(unnamed run)");
    }

    #[test]
    fn the_client_block_says_how_the_numbers_were_taken() {
        let text = json!({"client": {
            "name": "strobe", "version": "0.1.0", "timer_resolution_ms": 0.005,
            "cross_origin_isolated": true, "measurement_thread": "worker",
            "transport": {"http_protocols_seen": ["http/1.1"], "connection_limit_suspected": true,
                          "endpoints": 1, "max_in_flight_per_origin": 8},
            "warmup": {"requests": 16, "duration_ms": 80.5, "failures": 0, "check_rounds": 2,
                       "connections": "ready"}
        }})
        .to_string();
        let loaded = LoadedArtifact::from_text("run.json", &text);
        let notes = loaded
            .client
            .map(|client| client.notes())
            .unwrap_or_default();
        assert_eq!(
            notes[..2],
            [
                "Measured by strobe 0.1.0 in a dedicated worker; timer resolution 0.005 ms; \
                 cross-origin isolated."
                    .to_owned(),
                "1 endpoint(s); at most 8 request(s) in flight to one origin.".to_owned(),
            ]
        );
        assert_eq!(
            notes[2],
            "Warm-up: 16 unmeasured request(s) before the run; every connection the first \
             wave needs was shown open when it started."
        );
        assert!(notes[3].contains("waiting inside the browser"), "{notes:?}");
        // Each verdict says what it means; an unheard-of one only counts the requests.
        let warmup_note = |connections: Value| {
            let text = json!({"client": {"warmup": {"requests": 8, "connections": connections}}});
            LoadedArtifact::from_text("w.json", &text.to_string())
                .client
                .and_then(|client| client.warmup_note())
                .unwrap_or_default()
        };
        assert!(warmup_note(json!("still_opening")).contains("still opened a connection"));
        assert!(warmup_note(json!("not_shown")).contains("ended too quickly"));
        assert!(warmup_note(json!("unknown")).contains("Timing-Allow-Origin"));
        assert_eq!(
            warmup_note(json!("<b>maybe</b>")),
            "Warm-up: 8 unmeasured request(s) before the run."
        );
        // Where the page drew while it measured.
        let measured_by = |thread: &str, live_view: &str| {
            let text = json!({"client": {"name": "strobe", "measurement_thread": thread,
                                         "live_view": live_view}});
            LoadedArtifact::from_text("t.json", &text.to_string())
                .client
                .map(|client| client.notes()[0].clone())
                .unwrap_or_default()
        };
        assert_eq!(
            measured_by("main", "end"),
            "Measured by strobe on the page's main thread, the page drawing nothing until the \
             run ended."
        );
        assert_eq!(
            measured_by("main", "during"),
            "Measured by strobe on the page's main thread, which also drew the live progress \
             (reads arriving meanwhile could be stamped late)."
        );
        assert_eq!(
            measured_by("worker", "during"),
            "Measured by strobe in a dedicated worker."
        );
        assert_eq!(
            measured_by("worker", "<i>x</i>"),
            "Measured by strobe in a dedicated worker."
        );
        // An older strobe file: no thread, no pool, nothing suspected.
        let old = json!({"client": {"name": "strobe", "version": "0.0.9", "cross_origin_isolated": false}});
        let loaded = LoadedArtifact::from_text("old.json", &old.to_string());
        assert_eq!(
            loaded.client.map(|client| client.notes()),
            Some(vec![
                "Measured by strobe 0.0.9; not cross-origin isolated (coarser timer).".to_owned()
            ])
        );
    }

    #[test]
    fn chunk_traces_become_read_gaps_and_anything_odd_is_no_trace() {
        let gaps_of = |trace: Value| {
            let row = json!({"request_index": 0, "chunk_arrivals_ms": trace});
            let row = row.as_object().cloned().unwrap_or_default();
            RowView::from_json(0, &row).read_gaps_ms
        };
        assert_eq!(
            gaps_of(json!([100.0, 110.5, 130.5, 131.0])),
            vec![10.5, 20.0, 0.5]
        );
        assert_eq!(gaps_of(json!([100.0])), Vec::<f64>::new());
        assert_eq!(
            gaps_of(json!([100.0, "<img src=x>", 120.0])),
            Vec::<f64>::new()
        );
        assert_eq!(gaps_of(json!({"0": 1.0})), Vec::<f64>::new());
        // A step backwards ends the trace; a trace longer than strobe writes is refused.
        assert_eq!(gaps_of(json!([100.0, 110.0, 90.0, 120.0])), vec![10.0]);
        let too_long: Vec<f64> = (0..=CHUNK_ARRIVALS_KEPT).map(|i| i as f64).collect();
        assert_eq!(gaps_of(json!(too_long)), Vec::<f64>::new());

        let traced = RowView {
            read_gaps_ms: vec![3.0, 41.5, 2.0],
            ..RowView::default()
        };
        assert_eq!(traced.longest_stall_ms(), Some(41.5));
        assert_eq!(RowView::default().longest_stall_ms(), None);
    }

    #[test]
    fn metric_kinds_read_their_row_field() {
        let row = RowView {
            ttfo_ms: Some(1.0),
            ttft_ms: Some(2.0),
            e2e_ms: Some(3.0),
            tpot_ms: Some(4.0),
            decode_tok_s: Some(5.0),
            prefill_tok_s: Some(6.0),
            ..RowView::default()
        };
        let values: Vec<Option<f64>> = MetricKind::ALL
            .iter()
            .map(|kind| kind.of_row(&row))
            .collect();
        assert_eq!(
            values,
            [
                Some(1.0),
                Some(2.0),
                Some(3.0),
                Some(4.0),
                Some(5.0),
                Some(6.0)
            ]
        );
        let units: Vec<&str> = MetricKind::ALL.iter().map(|kind| kind.unit()).collect();
        assert_eq!(units, ["ms", "ms", "ms", "ms", "tok/s", "tok/s"]);
        assert_eq!(RowView::default().ttfo_or_ttft_ms(), None);
        let without_ttfo = RowView {
            ttft_ms: Some(2.0),
            ..RowView::default()
        };
        assert_eq!(without_ttfo.ttfo_or_ttft_ms(), Some(2.0));
    }
}
