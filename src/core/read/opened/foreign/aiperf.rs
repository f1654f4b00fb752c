//! NVIDIA AIPerf's exports: `profile_export.jsonl` (one JSON record per request: `metadata` with
//! its nanosecond timestamps and phase, `metrics` of `{value, unit}`, an `error` when it failed)
//! and `profile_export_aiperf.json` (the run's statistics per metric and its `input_config`).

use serde_json::{Map, Value};

use super::fields::{count, must_be, non_negative, Fields};
use super::unavailable::{Headline, OwnFigure};
use super::{
    failure_view, metrics_of_rows, CappedText, Definition, ForeignError, ForeignRun, ForeignSource,
    KeyMetrics, LoadView, MetricSummary, Quantity, RunIdentity, Tool, ToolAggregate, ToolRow,
    WorkloadView,
};
use crate::core::read::opened::metrics::{MetricKind, MetricStat};

/// Whether `object` is a `profile_export_aiperf.json`.
pub(crate) fn looks_like_summary(object: &Map<String, Value>) -> bool {
    object.contains_key("aiperf_version")
        || (object.contains_key("input_config")
            && object
                .get("time_to_first_token")
                .is_some_and(|metric| metric.get("unit").is_some()))
}

/// Whether `record` is one record of a `profile_export.jsonl`: `metadata` and `metrics` objects.
pub(crate) fn is_record(record: &Value) -> bool {
    record.get("metadata").is_some_and(Value::is_object)
        && record.get("metrics").is_some_and(Value::is_object)
}

/// Whether `text` is a `profile_export.jsonl`: its first line one record ([`is_record`]). The
/// first line is parsed only when it names both keys, so a one-line artifact (all of it on its
/// first line) is not parsed a second time to find out.
pub(crate) fn looks_like_records(text: &str) -> bool {
    let Some(first) = text.lines().find(|line| !line.trim().is_empty()) else {
        return false;
    };
    first.contains("\"metadata\"")
        && first.contains("\"metrics\"")
        && serde_json::from_str::<Value>(first).is_ok_and(|record| is_record(&record))
}

pub(crate) fn definitions() -> Vec<Definition> {
    vec![
        Definition {
            quantity: Quantity::Ttfo,
            tool_term: "AIPerf's TTFT (`time_to_first_token`)",
            meaning: "request start to the first reasoning or content token: strobe's TTFO",
            same_as_strobe: true,
        },
        Definition {
            quantity: Quantity::Ttft,
            tool_term: "AIPerf's TTFO (`time_to_first_output_token`)",
            meaning: "request start to the first non-reasoning token: strobe's TTFT",
            same_as_strobe: true,
        },
        Definition {
            quantity: Quantity::E2e,
            tool_term: "AIPerf's request latency (`request_latency`)",
            meaning: "request start to the last content chunk, not to the end of the stream",
            same_as_strobe: false,
        },
        Definition {
            quantity: Quantity::Tpot,
            tool_term: "computed by strobe",
            meaning: "(latency − TTFT) / (output tokens − 1) from AIPerf's latency, which ends at \
                      the last content chunk; its `inter_token_latency` is kept under its name",
            same_as_strobe: false,
        },
        Definition {
            quantity: Quantity::PromptTokens,
            tool_term: "AIPerf's `usage_prompt_tokens`",
            meaning: "the server's usage.prompt_tokens (`input_sequence_length` is its \
                      tokenizer's count)",
            same_as_strobe: true,
        },
        Definition {
            quantity: Quantity::OutputTokens,
            tool_term: "AIPerf's `usage_completion_tokens`",
            meaning: "the server's usage.completion_tokens (`output_sequence_length` is its \
                      tokenizer's count)",
            same_as_strobe: true,
        },
    ]
}

/// AIPerf's own aggregates for the numbers a conversion cannot give (its rows usually carry the
/// server's usage, so nothing is lost): its inter-token latency, which is its TPOT, and its
/// output token throughput (by its tokenizer).
pub(crate) const OWN_FIGURES: &[OwnFigure] = &[
    OwnFigure {
        headline: Headline::Metric(MetricKind::Tpot),
        stat: Some(MetricStat::P50),
        name: "inter_token_latency.p50",
    },
    OwnFigure {
        headline: Headline::Metric(MetricKind::Tpot),
        stat: Some(MetricStat::P95),
        name: "inter_token_latency.p95",
    },
    OwnFigure {
        headline: Headline::Metric(MetricKind::Tpot),
        stat: Some(MetricStat::P99),
        name: "inter_token_latency.p99",
    },
    OwnFigure {
        headline: Headline::Metric(MetricKind::Tpot),
        stat: Some(MetricStat::Mean),
        name: "inter_token_latency.avg",
    },
    OwnFigure {
        headline: Headline::Throughput,
        stat: None,
        name: "output_token_throughput.avg",
    },
];

/// How AIPerf computes its percentiles.
pub(crate) const PERCENTILE_METHOD: &str = "AIPerf: numpy's linear interpolation";

/// A `{value, unit}` time of a record's `metrics`, in ms.
fn time_ms(metrics: &Fields, key: &str) -> Result<Option<f64>, ForeignError> {
    let Some(metric) = metrics.optional_object(key)? else {
        return Ok(None);
    };
    let value = metric.non_negative("value")?;
    Ok(Some(value * time_scale(&metric)?))
}

/// The factor from a `{value, unit}` time's unit to ms (ms when it names none).
fn time_scale(metric: &Fields) -> Result<f64, ForeignError> {
    Ok(match metric.optional_str("unit")? {
        None | Some("ms") => 1.0,
        Some("ns") => 1e-6,
        Some("us") => 1e-3,
        Some("s" | "sec") => 1000.0,
        Some(other) => {
            return Err(metric.error(
                "unit",
                format!("is {other:?}; a time's unit must be ns, us, ms or s"),
            ))
        }
    })
}

fn count_of(metrics: &Fields, key: &str) -> Result<Option<u64>, ForeignError> {
    match metrics.optional_object(key)? {
        Some(metric) => metric.optional_count("value"),
        None => Ok(None),
    }
}

/// Reads the records of a `profile_export.jsonl`; warm-up records are left out.
pub(crate) fn read_records(text: &str) -> Result<ForeignRun, ForeignError> {
    struct Parsed {
        start_ns: Option<f64>,
        outcome: Result<ToolRow, (String, String)>,
    }
    let mut parsed = Vec::new();
    for (line_index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let line_name = format!("line {}", line_index + 1);
        let record: Value = serde_json::from_str(line).map_err(|error| ForeignError {
            tool: Tool::AiPerf,
            field: line_name.clone(),
            reason: format!("is not one JSON record ({error}); each line holds one request"),
        })?;
        let Some(record) = record.as_object() else {
            return Err(ForeignError {
                tool: Tool::AiPerf,
                field: line_name,
                reason: must_be("a JSON object", &record),
            });
        };
        let record = Fields::new(Tool::AiPerf, line_name, record);
        let metadata = record.object("metadata")?;
        let phase = metadata.optional_str("benchmark_phase")?;
        if phase.is_some_and(|phase| phase != "profiling") {
            continue;
        }
        let start_ns = metadata.optional_non_negative("request_start_ns")?;
        let metrics = record.object("metrics")?;
        let error = record.optional_object("error")?;
        let cancelled = metadata.get("was_cancelled").and_then(Value::as_bool) == Some(true);
        let outcome = if let Some(error) = error {
            let kind = error
                .optional_str("type")?
                .unwrap_or("AIPerf error")
                .to_owned();
            let message = error
                .optional_str("message")?
                .unwrap_or("no error message recorded")
                .to_owned();
            Err((kind, message))
        } else if cancelled {
            Err((
                "AIPerf cancelled request".to_owned(),
                "cancelled before it finished".to_owned(),
            ))
        } else {
            let e2e_ms = time_ms(&metrics, "request_latency")?.ok_or_else(|| {
                metrics.error("request_latency", "is missing from a successful record")
            })?;
            let mut read_gaps_ms = Vec::new();
            if let Some(gaps) = metrics.optional_object("inter_chunk_latency")? {
                let scale = time_scale(&gaps)?;
                let values = gaps.array("value")?;
                for (index, gap) in values.iter().enumerate() {
                    let gap = non_negative(gap).ok_or_else(|| {
                        gaps.error(
                            &format!("value[{index}]"),
                            must_be("a finite number ≥ 0", gap),
                        )
                    })?;
                    read_gaps_ms.push(gap * scale);
                }
            }
            let ttfo_ms = time_ms(&metrics, "time_to_first_token")?;
            let ttft_ms = time_ms(&metrics, "time_to_first_output_token")?;
            for (key, first) in [
                ("time_to_first_token", ttfo_ms),
                ("time_to_first_output_token", ttft_ms),
            ] {
                if first.is_some_and(|first| first > e2e_ms) {
                    return Err(metrics.error(
                        key,
                        format!("exceeds the request's latency ({e2e_ms} ms); the first token cannot come after the end"),
                    ));
                }
            }
            // Usage counts a completed request's tokens from 1; anything else is not usage.
            let output_tokens = count_of(&metrics, "usage_completion_tokens")?;
            let output_token_source = if output_tokens.is_some_and(|tokens| tokens >= 1) {
                "usage"
            } else {
                "unknown"
            };
            Ok(ToolRow {
                request_index: 0,
                started_at_ms: None,
                prompt_tokens: count_of(&metrics, "usage_prompt_tokens")?,
                cached_tokens: count_of(&metrics, "usage_prompt_cache_read_tokens")?,
                output_tokens,
                output_token_source,
                ttfo_ms,
                ttft_ms,
                e2e_ms,
                read_gaps_ms,
            })
        };
        parsed.push(Parsed { start_ns, outcome });
    }
    if parsed.is_empty() {
        return Err(ForeignError {
            tool: Tool::AiPerf,
            field: "profile_export.jsonl".to_owned(),
            reason: "holds no profiling record".to_owned(),
        });
    }
    // Requests in the order they started.
    parsed.sort_by(|a, b| {
        a.start_ns
            .unwrap_or(f64::INFINITY)
            .total_cmp(&b.start_ns.unwrap_or(f64::INFINITY))
    });
    let first_ns = parsed
        .iter()
        .filter_map(|record| record.start_ns)
        .reduce(f64::min);
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    let mut last_end_ms: f64 = 0.0;
    for (index, record) in parsed.into_iter().enumerate() {
        let started_at_ms = match (record.start_ns, first_ns) {
            (Some(start), Some(first)) => Some((start - first) / 1e6),
            _ => None,
        };
        match record.outcome {
            Ok(mut row) => {
                row.request_index = index as u64;
                row.started_at_ms = started_at_ms;
                last_end_ms = last_end_ms.max(started_at_ms.unwrap_or(0.0) + row.e2e_ms);
                rows.push(row.into_view(rows.len()));
            }
            Err((kind, message)) => failures.push(failure_view(
                failures.len(),
                index as u64,
                "request_error",
                &kind,
                &message,
                started_at_ms,
            )),
        }
    }
    // The records span from the first start to the last end: the run's wall time as far as
    // they tell (the summary file has AIPerf's own `benchmark_duration`).
    let wall_seconds = (last_end_ms > 0.0).then_some(last_end_ms / 1000.0);
    let metrics = metrics_of_rows(&rows, failures.len() as u64, wall_seconds);
    let workload = WorkloadView {
        requests: Some((rows.len() + failures.len()) as u64),
        completed: Some(rows.len() as u64),
        failed: Some(failures.len() as u64),
        wall_clock_ms: wall_seconds.map(|seconds| seconds * 1000.0),
        ..WorkloadView::default()
    };
    Ok(ForeignRun {
        source: ForeignSource {
            tool: Tool::AiPerf,
            version: None,
            file_kind: "`profile_export.jsonl`, one record per request",
            percentile_method: PERCENTILE_METHOD,
            definitions: definitions(),
            aggregates: Vec::new(),
            unavailable: Vec::new(),
        },
        identity: RunIdentity::default(),
        workload,
        load: None,
        rows,
        failures,
        metrics,
        part: None,
        sweep: None,
    })
}

/// The statistics kept per metric, under AIPerf's names.
const KEPT_STATISTICS: [&str; 5] = ["avg", "p50", "p90", "p95", "p99"];

/// Reads a `profile_export_aiperf.json`: AIPerf's statistics, no rows.
pub(crate) fn read_summary(object: &Map<String, Value>) -> Result<ForeignRun, ForeignError> {
    let summary = Fields::new(Tool::AiPerf, "", object);
    let stat = |metric: &str, statistic: &str| -> Result<Option<f64>, ForeignError> {
        match summary.optional_object(metric)? {
            Some(fields) => fields.optional_non_negative(statistic),
            None => Ok(None),
        }
    };
    let distribution = |metric: &str| -> Result<MetricSummary, ForeignError> {
        let scale = match summary.optional_object(metric)? {
            Some(fields) => time_scale(&fields)?,
            None => return Ok(MetricSummary::default()),
        };
        let scaled = |value: Option<f64>| value.map(|value| value * scale);
        Ok(MetricSummary {
            p50: scaled(stat(metric, "p50")?),
            p95: scaled(stat(metric, "p95")?),
            p99: scaled(stat(metric, "p99")?),
            mean: scaled(stat(metric, "avg")?),
            samples: stat(metric, "count")?.and_then(count_value),
            source_prefix: None,
        })
    };
    let usage_tokens = stat("total_usage_completion_tokens", "avg")?.and_then(count_value);
    let metrics = KeyMetrics {
        ttfo: distribution("time_to_first_token")?,
        ttft: distribution("time_to_first_output_token")?,
        e2e: distribution("request_latency")?,
        // The server's usage, as the records give it (`total_output_tokens` and
        // `output_token_throughput` count AIPerf's tokenizer's tokens).
        throughput_tok_s: match (usage_tokens, stat("benchmark_duration", "avg")?) {
            (Some(tokens), Some(seconds)) if seconds > 0.0 => Some(tokens as f64 / seconds),
            _ => None,
        },
        output_tokens: usage_tokens,
        ..KeyMetrics::default()
    };
    let input_config = summary.optional_object("input_config")?;
    let (model, base_url, concurrency, load) = match &input_config {
        Some(config) => read_input_config(config)?,
        None => (None, None, None, None),
    };
    let requests = stat("request_count", "avg")?.and_then(count_value);
    let completed = stat("completed_request_count", "avg")?
        .and_then(count_value)
        .or(requests);
    let failed = stat("error_request_count", "avg")?
        .and_then(count_value)
        .or(Some(0).filter(|_| completed.is_some()));
    let wall_seconds = stat("benchmark_duration", "avg")?;
    let mut aggregates = Vec::new();
    for (name, metric) in object {
        let Some(metric) = metric.as_object() else {
            continue;
        };
        if !metric.contains_key("unit") {
            continue;
        }
        for statistic in KEPT_STATISTICS {
            if let Some(value) = metric
                .get(statistic)
                .and_then(Value::as_f64)
                .filter(|value| value.is_finite())
            {
                aggregates.push(ToolAggregate {
                    name: format!("{name}.{statistic}"),
                    value,
                });
            }
        }
    }
    Ok(ForeignRun {
        source: ForeignSource {
            tool: Tool::AiPerf,
            version: summary.optional_str("aiperf_version")?.map(CappedText::new),
            file_kind: "`profile_export_aiperf.json`: its statistics only (drop \
                        `profile_export.jsonl` for per-request rows)",
            percentile_method: PERCENTILE_METHOD,
            definitions: definitions(),
            aggregates,
            unavailable: Vec::new(),
        },
        identity: RunIdentity {
            model,
            base_url,
            started_at: summary.optional_str("start_time")?.map(CappedText::new),
            run_id: summary.optional_str("benchmark_id")?.map(CappedText::new),
            ..RunIdentity::default()
        },
        workload: WorkloadView {
            requests,
            completed,
            failed,
            concurrency,
            wall_clock_ms: wall_seconds.map(|seconds| seconds * 1000.0),
            ..WorkloadView::default()
        },
        load,
        rows: Vec::new(),
        failures: Vec::new(),
        metrics,
        part: None,
        sweep: None,
    })
}

/// The run of an AIPerf folder: the rows of its `profile_export.jsonl` with what only its
/// `profile_export_aiperf.json` knows (version, model, endpoint, concurrency, rate, AIPerf's
/// own statistics and its benchmark duration, from which the throughput is recomputed).
pub fn with_summary(records: ForeignRun, summary: &ForeignRun) -> ForeignRun {
    let mut run = records;
    run.source.version = summary.source.version.clone();
    run.source.aggregates = summary.source.aggregates.clone();
    run.source.file_kind = "`profile_export.jsonl` with its `profile_export_aiperf.json`";
    run.identity = summary.identity.clone();
    run.load = summary.load.clone();
    run.workload.concurrency = summary.workload.concurrency;
    if let Some(wall_ms) = summary.workload.wall_clock_ms {
        run.workload.wall_clock_ms = Some(wall_ms);
        run.metrics = metrics_of_rows(&run.rows, run.failures.len() as u64, Some(wall_ms / 1000.0));
    }
    run
}

/// Whether a summary can be of these records: it counts as many requests as they hold.
pub fn belong_together(records: &ForeignRun, summary: &ForeignRun) -> bool {
    let held = (records.rows.len() + records.failures.len()) as u64;
    summary
        .workload
        .requests
        .is_none_or(|requests| requests == held)
}

fn count_value(value: f64) -> Option<u64> {
    count(&Value::from(value))
}

type InputConfig = (
    Option<CappedText>,
    Option<CappedText>,
    Option<u64>,
    Option<LoadView>,
);

/// Model, endpoint, concurrency and rate from `input_config` (its profiling phase).
fn read_input_config(config: &Fields) -> Result<InputConfig, ForeignError> {
    let model = match config.optional_object("models")? {
        Some(models) => match models
            .optional_array("items")?
            .and_then(|items| items.first())
        {
            Some(item) => item
                .get("name")
                .and_then(Value::as_str)
                .map(CappedText::new),
            None => None,
        },
        None => None,
    };
    let base_url = match config.optional_object("endpoint")? {
        Some(endpoint) => endpoint
            .optional_array("urls")?
            .and_then(|urls| urls.first())
            .and_then(Value::as_str)
            .map(CappedText::new),
        None => None,
    };
    let mut concurrency = None;
    let mut load = None;
    for (index, phase) in config
        .optional_array("phases")?
        .unwrap_or(&[])
        .iter()
        .enumerate()
    {
        let phase = config.item("phases", index, phase)?;
        if phase
            .optional_str("kind")?
            .is_some_and(|kind| kind != "profiling")
        {
            continue;
        }
        concurrency = phase.optional_count("concurrency")?;
        if let Some(rate) = phase.optional_non_negative("request_rate")? {
            load = Some(LoadView {
                mode: Some(CappedText::new("rate")),
                rate: Some(rate),
                cap: concurrency,
                ..LoadView::default()
            });
        }
    }
    Ok((model, base_url, concurrency, load))
}
