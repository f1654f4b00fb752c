//! GuideLLM's JSON report (`guidellm benchmark|run`, output `json`): `metadata`, `config` and
//! `benchmarks[]`, each benchmark with its strategy, `metrics` and per-request records in
//! `requests.successful`, `requests.errored` and `requests.incomplete`. A report of several
//! benchmarks (a sweep, or a list of rates) gives one run per benchmark.

use serde_json::{Map, Value};

use super::fields::Fields;
use super::unavailable::{Headline, OwnFigure};
use super::{
    failure_view, metrics_of_rows, CappedText, Definition, ForeignError, ForeignRun, ForeignSource,
    LoadView, Quantity, RunIdentity, SweepView, Tool, ToolAggregate, ToolRow, WorkloadView,
};
use crate::core::read::opened::metrics::{MetricKind, MetricStat};

/// Whether `object` is a GuideLLM report.
pub(crate) fn looks_like(object: &Map<String, Value>) -> bool {
    let has_benchmarks = object.get("benchmarks").is_some_and(Value::is_array);
    let tagged = object
        .get("metadata")
        .and_then(|metadata| metadata.get("guidellm_version"))
        .is_some()
        || object
            .get("benchmarks")
            .and_then(|benchmarks| benchmarks.get(0))
            .and_then(|benchmark| benchmark.get("type_"))
            .and_then(Value::as_str)
            .is_some_and(|kind| kind == "generative_benchmark");
    has_benchmarks && tagged
}

pub(crate) fn definitions() -> Vec<Definition> {
    vec![
        Definition {
            quantity: Quantity::Ttfo,
            tool_term: "GuideLLM's TTFT (`time_to_first_token_ms`)",
            meaning: "request start to the first reasoning or content chunk, under either field \
                      name: strobe's TTFO",
            same_as_strobe: true,
        },
        Definition {
            quantity: Quantity::Ttft,
            tool_term: "GuideLLM's TTFOT (`time_to_first_output_token_ms`)",
            meaning: "request start to the first content chunk: strobe's TTFT",
            same_as_strobe: true,
        },
        Definition {
            quantity: Quantity::E2e,
            tool_term: "GuideLLM's request latency (`request_latency`)",
            meaning: "request start to the end of the response",
            same_as_strobe: true,
        },
        Definition {
            quantity: Quantity::Tpot,
            tool_term: "computed by strobe",
            meaning: "(E2E − TTFO) / (output tokens − 1); GuideLLM's own `inter_token_latency_ms` \
                      ends at the last token and is kept under its name",
            same_as_strobe: true,
        },
        Definition {
            quantity: Quantity::PromptTokens,
            tool_term: "GuideLLM's `prompt_tokens`",
            meaning: "the server's usage when it reported one (`prefer_response_metrics`), else \
                      GuideLLM's client-side tokenizer",
            same_as_strobe: false,
        },
        Definition {
            quantity: Quantity::OutputTokens,
            tool_term: "GuideLLM's `output_tokens`",
            meaning: "the server's usage when it reported one (`prefer_response_metrics`), else \
                      GuideLLM's client-side tokenizer",
            same_as_strobe: false,
        },
    ]
}

/// The summary statistics kept per metric, under GuideLLM's names.
const KEPT_STATISTICS: [&str; 4] = ["median", "mean", "p95", "p99"];

/// GuideLLM's own aggregates for the numbers a conversion cannot give: its time per output
/// token and the mean of its output tokens per second over the benchmark.
pub(crate) const OWN_FIGURES: &[OwnFigure] = &[
    OwnFigure {
        headline: Headline::Metric(MetricKind::Tpot),
        stat: Some(MetricStat::P50),
        name: "time_per_output_token_ms.median",
    },
    OwnFigure {
        headline: Headline::Metric(MetricKind::Tpot),
        stat: Some(MetricStat::P95),
        name: "time_per_output_token_ms.p95",
    },
    OwnFigure {
        headline: Headline::Metric(MetricKind::Tpot),
        stat: Some(MetricStat::P99),
        name: "time_per_output_token_ms.p99",
    },
    OwnFigure {
        headline: Headline::Metric(MetricKind::Tpot),
        stat: Some(MetricStat::Mean),
        name: "time_per_output_token_ms.mean",
    },
    OwnFigure {
        headline: Headline::Throughput,
        stat: None,
        name: "output_tokens_per_second.mean",
    },
];

/// How GuideLLM computes its percentiles.
pub(crate) const PERCENTILE_METHOD: &str =
    "GuideLLM: the sorted value at index ⌊p·n⌋, so its median of an \
                                even count is the upper middle value";

/// Reads every benchmark of a report.
pub(crate) fn read(object: &Map<String, Value>) -> Result<Vec<ForeignRun>, ForeignError> {
    let report = Fields::new(Tool::GuideLlm, "", object);
    let version = report
        .optional_object("metadata")?
        .map(|metadata| metadata.optional_str("guidellm_version"))
        .transpose()?
        .flatten();
    let benchmarks = report.array("benchmarks")?;
    if benchmarks.is_empty() {
        return Err(report.error(
            "benchmarks",
            "is empty; the report holds no benchmark to show",
        ));
    }
    let several = benchmarks.len() > 1;
    let mut runs: Vec<ForeignRun> = benchmarks
        .iter()
        .enumerate()
        .map(|(index, benchmark)| {
            let benchmark = report.item("benchmarks", index, benchmark)?;
            read_benchmark(&benchmark, version, several.then_some(index))
        })
        .collect::<Result<_, _>>()?;
    if several {
        // One sweep, named after the report's first run id (or its tool when it has none).
        let id = runs
            .first()
            .and_then(|run| run.identity.run_id.as_ref())
            .map_or_else(
                || "guidellm report".to_owned(),
                |id| format!("guidellm {id}"),
            );
        let step_count = runs.len() as u64;
        for (index, run) in runs.iter_mut().enumerate() {
            let rate = run.load.as_ref().and_then(|load| load.rate);
            let (variable, value) = match (rate, run.workload.concurrency) {
                (Some(rate), _) => ("rate", Some(rate)),
                (None, Some(concurrency)) => ("concurrency", Some(concurrency as f64)),
                (None, None) => ("concurrency", None),
            };
            run.sweep = Some(SweepView {
                id: Some(CappedText::new(&id)),
                step_index: Some(index as u64),
                step_count: Some(step_count),
                variable: Some(CappedText::new(variable)),
                value,
                spec: None,
                stop_reason: None,
            });
        }
    }
    Ok(runs)
}

fn read_benchmark(
    benchmark: &Fields,
    version: Option<&str>,
    index: Option<usize>,
) -> Result<ForeignRun, ForeignError> {
    let config = benchmark.optional_object("config")?;
    let backend = match &config {
        Some(config) => config.optional_object("backend")?,
        None => None,
    };
    let strategy = match &config {
        Some(config) => config.optional_object("strategy")?,
        None => None,
    };
    let (concurrency, load, strategy_label) = match &strategy {
        Some(strategy) => read_strategy(strategy)?,
        None => (None, None, None),
    };
    let start_s = benchmark.optional_non_negative("start_time")?;
    let duration_s = benchmark.optional_non_negative("duration")?;
    let requests = benchmark.object("requests")?;
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    let mut request_index = 0u64;
    let first_start = start_s.or(first_request_start(&requests)?);
    for status in ["successful", "errored", "incomplete"] {
        let Some(records) = requests.optional_array(status)? else {
            continue;
        };
        for (position, record) in records.iter().enumerate() {
            let record = requests.item(status, position, record)?;
            let started_at_ms = match (
                record.optional_non_negative("request_start_time")?,
                first_start,
            ) {
                (Some(start), Some(first)) => Some(((start - first) * 1000.0).max(0.0)),
                _ => None,
            };
            if status == "successful" {
                rows.push(read_row(&record, request_index, started_at_ms)?.into_view(rows.len()));
            } else {
                let message = record
                    .optional_object("info")?
                    .map(|info| info.optional_str("error"))
                    .transpose()?
                    .flatten()
                    .unwrap_or(if status == "incomplete" {
                        "cancelled before it finished (the benchmark ended)"
                    } else {
                        "no error message recorded"
                    });
                let (class, error_type) = if status == "incomplete" {
                    ("incomplete", "GuideLLM incomplete request")
                } else {
                    ("request_error", "GuideLLM errored request")
                };
                failures.push(failure_view(
                    failures.len(),
                    request_index,
                    class,
                    error_type,
                    message,
                    started_at_ms,
                ));
            }
            request_index += 1;
        }
    }
    let metrics = metrics_of_rows(&rows, failures.len() as u64, duration_s);
    let aggregates = match benchmark.optional_object("metrics")? {
        Some(metrics) => aggregates_of(&metrics),
        None => Vec::new(),
    };
    let identity = RunIdentity {
        model: backend
            .as_ref()
            .map(|backend| backend.optional_str("model"))
            .transpose()?
            .flatten()
            .map(CappedText::new),
        base_url: backend
            .as_ref()
            .map(|backend| backend.optional_str("target"))
            .transpose()?
            .flatten()
            .map(CappedText::new),
        run_id: config
            .as_ref()
            .map(|config| config.optional_str("run_id"))
            .transpose()?
            .flatten()
            .map(CappedText::new),
        ..RunIdentity::default()
    };
    let workload = WorkloadView {
        requests: Some(request_index),
        completed: Some(rows.len() as u64),
        failed: Some(failures.len() as u64),
        concurrency,
        wall_clock_ms: duration_s.map(|seconds| seconds * 1000.0),
        ..WorkloadView::default()
    };
    let part = match (index, strategy_label) {
        (Some(index), Some(label)) => Some(format!("benchmark {} ({label})", index + 1)),
        (Some(index), None) => Some(format!("benchmark {}", index + 1)),
        (None, _) => None,
    };
    Ok(ForeignRun {
        source: ForeignSource {
            tool: Tool::GuideLlm,
            version: version.map(CappedText::new),
            file_kind: "JSON report with per-request records",
            percentile_method: PERCENTILE_METHOD,
            definitions: definitions(),
            aggregates,
            unavailable: Vec::new(),
        },
        identity,
        workload,
        load,
        rows,
        failures,
        metrics,
        part,
        sweep: None,
    })
}

/// The earliest `request_start_time` of any record, for files without `start_time`.
fn first_request_start(requests: &Fields) -> Result<Option<f64>, ForeignError> {
    let mut first: Option<f64> = None;
    for status in ["successful", "errored", "incomplete"] {
        for (position, record) in requests
            .optional_array(status)?
            .unwrap_or(&[])
            .iter()
            .enumerate()
        {
            let record = requests.item(status, position, record)?;
            if let Some(start) = record.optional_non_negative("request_start_time")? {
                first = Some(first.map_or(start, |first: f64| first.min(start)));
            }
        }
    }
    Ok(first)
}

fn read_row(
    record: &Fields,
    request_index: u64,
    started_at_ms: Option<f64>,
) -> Result<ToolRow, ForeignError> {
    let e2e_ms = record.non_negative("request_latency")? * 1000.0;
    let ttfo_ms = record.optional_non_negative("time_to_first_token_ms")?;
    let ttft_ms = record.optional_non_negative("time_to_first_output_token_ms")?;
    for (key, value) in [
        ("time_to_first_token_ms", ttfo_ms),
        ("time_to_first_output_token_ms", ttft_ms),
    ] {
        if value.is_some_and(|value| value > e2e_ms + 1e-6) {
            return Err(record.error(
                key,
                format!("exceeds the request's latency ({e2e_ms} ms); the first token cannot come after the end"),
            ));
        }
    }
    Ok(ToolRow {
        request_index,
        started_at_ms,
        prompt_tokens: record.optional_count("prompt_tokens")?,
        cached_tokens: record.optional_count("cached_tokens")?,
        output_tokens: record.optional_count("output_tokens")?,
        output_token_source: "unknown",
        ttfo_ms,
        ttft_ms,
        e2e_ms,
        read_gaps_ms: Vec::new(),
    })
}

/// What a benchmark's strategy says: its concurrency, its rate load and a label.
type Strategy = (Option<u64>, Option<LoadView>, Option<String>);

/// Concurrency, rate load and a label from a benchmark's `config.strategy`.
fn read_strategy(strategy: &Fields) -> Result<Strategy, ForeignError> {
    let kind = strategy.optional_str("type_")?.unwrap_or_default();
    Ok(match kind {
        "synchronous" => (Some(1), None, Some("synchronous".to_owned())),
        "concurrent" => {
            let streams = strategy.optional_count("streams")?;
            let label = streams.map(|streams| format!("concurrent {streams}"));
            (streams, None, label)
        }
        "throughput" => {
            let cap = strategy.optional_count("max_concurrency")?;
            (cap, None, Some("throughput".to_owned()))
        }
        "constant" | "poisson" => {
            let rate = strategy.optional_non_negative("rate")?;
            let load = LoadView {
                mode: Some(CappedText::new("rate")),
                rate,
                arrivals: Some(CappedText::new(kind)),
                cap: strategy.optional_count("max_concurrency")?,
                ..LoadView::default()
            };
            let label = rate.map(|rate| format!("{kind} {rate} req/s"));
            (None, Some(load), label)
        }
        other => (None, None, (!other.is_empty()).then(|| other.to_owned())),
    })
}

/// GuideLLM's own statistics of every metric (`metrics.<name>.successful.<stat>`).
fn aggregates_of(metrics: &Fields) -> Vec<ToolAggregate> {
    let mut aggregates = Vec::new();
    for (name, metric) in metrics.object {
        let Some(successful) = metric.get("successful").and_then(Value::as_object) else {
            continue;
        };
        for statistic in KEPT_STATISTICS {
            let value = successful
                .get(statistic)
                .and_then(Value::as_f64)
                .or_else(|| {
                    successful
                        .get("percentiles")
                        .and_then(|percentiles| percentiles.get(statistic))
                        .and_then(Value::as_f64)
                });
            if let Some(value) = value.filter(|value| value.is_finite()) {
                aggregates.push(ToolAggregate {
                    name: format!("{name}.{statistic}"),
                    value,
                });
            }
        }
    }
    aggregates
}
