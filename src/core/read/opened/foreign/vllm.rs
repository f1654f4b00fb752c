//! `vllm bench serve --save-result` JSON: the run's aggregates at the top level and, with
//! `--save-detailed`, parallel per-request arrays (`ttfts`, `latencies`, `itls`, `start_times`,
//! `input_lens`, `output_lens`, `errors`), times in seconds.

use serde_json::{Map, Value};

use super::fields::{count, must_be, non_negative, Fields};
use super::unavailable::{Headline, OwnFigure};
use super::{
    failure_view, metrics_of_rows, CappedText, Definition, FailureView, ForeignError, ForeignRun,
    ForeignSource, KeyMetrics, LoadView, MetricSummary, Quantity, RowView, RunIdentity, Tool,
    ToolAggregate, ToolRow, WorkloadView,
};
use crate::core::read::opened::metrics::{MetricKind, MetricStat};

/// The per-request arrays `--save-detailed` writes, which must all be as long as `ttfts`.
const PARALLEL_ARRAYS: [&str; 6] = [
    "ttfts",
    "latencies",
    "itls",
    "input_lens",
    "output_lens",
    "errors",
];

/// Whether `object` is a `bench serve` result: its TTFT summary beside its run counts.
pub(crate) fn looks_like(object: &Map<String, Value>) -> bool {
    object.contains_key("median_ttft_ms")
        && (object.contains_key("num_prompts") || object.contains_key("completed"))
        && ["backend", "model_id", "endpoint_type"]
            .iter()
            .any(|key| object.contains_key(*key))
}

/// How vLLM's numbers relate to strobe's (measured on a stream with reasoning chunks; the
/// fixtures' README says how).
pub(crate) fn definitions() -> Vec<Definition> {
    vec![
        Definition {
            quantity: Quantity::Ttfo,
            tool_term: "vLLM's TTFT (`ttfts`)",
            meaning: "request start to the first chunk with content or `reasoning`; a \
                      `reasoning_content` chunk is not seen, so behind a server that names its \
                      reasoning so, this is strobe's TTFT",
            same_as_strobe: false,
        },
        Definition {
            quantity: Quantity::Ttft,
            tool_term: "",
            meaning: "not recorded: vLLM times no first content apart from a first `reasoning` \
                      chunk",
            same_as_strobe: false,
        },
        Definition {
            quantity: Quantity::E2e,
            tool_term: "vLLM's latency (`latencies`)",
            meaning: "request start to the last content chunk, not to the end of the stream",
            same_as_strobe: false,
        },
        Definition {
            quantity: Quantity::Tpot,
            tool_term: "vLLM's TPOT",
            meaning: "(latency − TTFT) / (output tokens − 1), from vLLM's latency, which ends at \
                      the last content chunk",
            same_as_strobe: false,
        },
        Definition {
            quantity: Quantity::PromptTokens,
            tool_term: "vLLM's `input_lens`",
            meaning: "the prompt's length by vLLM's client-side tokenizer, not the server's count",
            same_as_strobe: false,
        },
        Definition {
            quantity: Quantity::OutputTokens,
            tool_term: "vLLM's `output_lens`",
            meaning: "the server's usage.completion_tokens when it streamed usage, else vLLM's \
                      tokenizer's count of the text",
            same_as_strobe: false,
        },
    ]
}

/// vLLM's own aggregates for the numbers a conversion cannot give: its TPOT statistics and its
/// output throughput (by its tokenizer's counts when the server streamed no usage).
pub(crate) const OWN_FIGURES: &[OwnFigure] = &[
    OwnFigure {
        headline: Headline::Metric(MetricKind::Tpot),
        stat: Some(MetricStat::P50),
        name: "median_tpot_ms",
    },
    OwnFigure {
        headline: Headline::Metric(MetricKind::Tpot),
        stat: Some(MetricStat::P95),
        name: "p95_tpot_ms",
    },
    OwnFigure {
        headline: Headline::Metric(MetricKind::Tpot),
        stat: Some(MetricStat::P99),
        name: "p99_tpot_ms",
    },
    OwnFigure {
        headline: Headline::Metric(MetricKind::Tpot),
        stat: Some(MetricStat::Mean),
        name: "mean_tpot_ms",
    },
    OwnFigure {
        headline: Headline::Throughput,
        stat: None,
        name: "output_throughput",
    },
];

/// How vLLM computes its percentiles.
pub(crate) const PERCENTILE_METHOD: &str =
    "vLLM: numpy's linear interpolation; its median averages the two \
                                middle values";

/// Reads a `bench serve` result.
pub(crate) fn read(object: &Map<String, Value>) -> Result<ForeignRun, ForeignError> {
    let fields = Fields::new(Tool::Vllm, "", object);
    let completed = fields.optional_count("completed")?;
    let failed = fields.optional_count("failed")?;
    let duration_s = fields.optional_non_negative("duration")?;
    let (rows, failures) = read_requests(&fields)?;
    let has_rows = !rows.is_empty() || !failures.is_empty();
    let requests = fields
        .optional_count("num_prompts")?
        .or_else(|| has_rows.then_some((rows.len() + failures.len()) as u64));
    let metrics = if has_rows {
        metrics_of_rows(&rows, failures.len() as u64, duration_s)
    } else {
        summary_metrics(&fields)?
    };
    let request_rate = match fields.get("request_rate") {
        None => None,
        Some(Value::String(text)) if text == "inf" => None,
        Some(value) => Some(non_negative(value).ok_or_else(|| {
            fields.error("request_rate", must_be("a rate ≥ 0 or \"inf\"", value))
        })?),
    };
    let burstiness = fields.optional_non_negative("burstiness")?;
    let load = request_rate.map(|rate| LoadView {
        mode: Some(CappedText::new("rate")),
        rate: Some(rate),
        arrivals: Some(CappedText::new(
            if burstiness == Some(1.0) || burstiness.is_none() {
                "poisson"
            } else {
                "gamma"
            },
        )),
        burstiness,
        ..LoadView::default()
    });
    let model = fields.optional_str("model_id")?;
    let identity = RunIdentity {
        model: model.map(CappedText::new),
        base_url: None,
        started_at: fields
            .optional_str("date")?
            .map(iso_of_vllm_date)
            .map(|date| CappedText::new(&date)),
        ..RunIdentity::default()
    };
    let workload = WorkloadView {
        requests,
        completed: completed.or(Some(rows.len() as u64).filter(|_| has_rows)),
        failed: failed.or(Some(failures.len() as u64).filter(|_| has_rows)),
        concurrency: fields.optional_count("max_concurrency")?,
        wall_clock_ms: duration_s.map(|seconds| seconds * 1000.0),
        ..WorkloadView::default()
    };
    let aggregates = object
        .iter()
        .filter_map(|(name, value)| {
            let value = value.as_f64().filter(|value| value.is_finite())?;
            Some(ToolAggregate {
                name: name.clone(),
                value,
            })
        })
        .collect();
    Ok(ForeignRun {
        source: ForeignSource {
            tool: Tool::Vllm,
            version: None,
            file_kind: if has_rows {
                "`bench serve` result with per-request arrays"
            } else {
                "`bench serve` result without `--save-detailed`: its summary only"
            },
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
        part: None,
        sweep: None,
    })
}

/// `20261201-083951` → `2026-12-01T08:39:51`; other text is kept as it is.
fn iso_of_vllm_date(date: &str) -> String {
    let digits: Vec<char> = date.chars().collect();
    let all_digits = |range: std::ops::Range<usize>| {
        range
            .clone()
            .all(|at| digits.get(at).is_some_and(char::is_ascii_digit))
    };
    if digits.len() == 15 && digits[8] == '-' && all_digits(0..8) && all_digits(9..15) {
        let part = |range: std::ops::Range<usize>| digits[range].iter().collect::<String>();
        format!(
            "{}-{}-{}T{}:{}:{}",
            part(0..4),
            part(4..6),
            part(6..8),
            part(9..11),
            part(11..13),
            part(13..15)
        )
    } else {
        date.to_owned()
    }
}

/// The rows and failures of the per-request arrays; none without `ttfts`.
fn read_requests(fields: &Fields) -> Result<(Vec<RowView>, Vec<FailureView>), ForeignError> {
    let Some(ttfts) = fields.optional_array("ttfts")? else {
        return Ok((Vec::new(), Vec::new()));
    };
    let length = ttfts.len();
    let mut arrays = Vec::new();
    for key in PARALLEL_ARRAYS {
        let array = fields.array(key)?;
        if array.len() != length {
            return Err(fields.error(
                key,
                format!(
                    "has {} entries where `ttfts` has {length}; vLLM writes one entry per request \
                     in each of {}",
                    array.len(),
                    PARALLEL_ARRAYS.join(", ")
                ),
            ));
        }
        arrays.push(array);
    }
    let [_, latencies, itls, input_lens, output_lens, errors] = arrays[..] else {
        unreachable!("one array per name");
    };
    let start_times = match fields.optional_array("start_times")? {
        Some(starts) if starts.len() == length => Some(starts),
        Some(starts) => {
            return Err(fields.error(
                "start_times",
                format!("has {} entries where `ttfts` has {length}", starts.len()),
            ))
        }
        None => None,
    };
    let number_at = |key: &str, array: &[Value], index: usize| -> Result<f64, ForeignError> {
        non_negative(&array[index]).ok_or_else(|| {
            fields.error(
                &format!("{key}[{index}]"),
                must_be("a finite number ≥ 0 (seconds)", &array[index]),
            )
        })
    };
    let count_at = |key: &str, array: &[Value], index: usize| -> Result<u64, ForeignError> {
        count(&array[index]).ok_or_else(|| {
            fields.error(
                &format!("{key}[{index}]"),
                must_be("a whole number ≥ 0", &array[index]),
            )
        })
    };
    let first_start = match start_times {
        Some(starts) => {
            let mut first = f64::INFINITY;
            for index in 0..length {
                first = first.min(number_at("start_times", starts, index)?);
            }
            Some(first)
        }
        None => None,
    };
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for index in 0..length {
        let started_at_ms = match (start_times, first_start) {
            (Some(starts), Some(first)) => {
                Some((number_at("start_times", starts, index)? - first) * 1000.0)
            }
            _ => None,
        };
        let error = match &errors[index] {
            Value::String(text) => text.as_str(),
            Value::Null => "",
            value => {
                return Err(fields.error(&format!("errors[{index}]"), must_be("a string", value)))
            }
        };
        if !error.is_empty() {
            failures.push(failure_view(
                failures.len(),
                index as u64,
                "request_error",
                "vLLM request error",
                error,
                started_at_ms,
            ));
            continue;
        }
        let gaps = match &itls[index] {
            Value::Array(gaps) => gaps,
            value => {
                return Err(fields.error(
                    &format!("itls[{index}]"),
                    must_be("an array of seconds", value),
                ))
            }
        };
        let mut read_gaps_ms = Vec::with_capacity(gaps.len());
        for (gap_index, gap) in gaps.iter().enumerate() {
            let gap = non_negative(gap).ok_or_else(|| {
                fields.error(
                    &format!("itls[{index}][{gap_index}]"),
                    must_be("a finite number ≥ 0 (seconds)", gap),
                )
            })?;
            read_gaps_ms.push(gap * 1000.0);
        }
        let ttfo_ms = number_at("ttfts", ttfts, index)? * 1000.0;
        let e2e_ms = number_at("latencies", latencies, index)? * 1000.0;
        if ttfo_ms > e2e_ms {
            return Err(fields.error(
                &format!("ttfts[{index}]"),
                format!(
                    "({} s) exceeds its latency ({} s); the first token cannot come after the end",
                    ttfo_ms / 1000.0,
                    e2e_ms / 1000.0
                ),
            ));
        }
        let row = ToolRow {
            request_index: index as u64,
            started_at_ms,
            prompt_tokens: Some(count_at("input_lens", input_lens, index)?),
            cached_tokens: None,
            output_tokens: Some(count_at("output_lens", output_lens, index)?),
            output_token_source: "unknown",
            ttfo_ms: Some(ttfo_ms),
            ttft_ms: None,
            e2e_ms,
            read_gaps_ms,
        };
        rows.push(row.into_view(rows.len()));
    }
    Ok((rows, failures))
}

/// The headline numbers of a result without per-request arrays: vLLM's median and p99 (and,
/// when written, p95) of TTFT (as TTFO), E2E latency and TPOT, and their means.
fn summary_metrics(fields: &Fields) -> Result<KeyMetrics, ForeignError> {
    let summary = |name: &str| -> Result<MetricSummary, ForeignError> {
        Ok(MetricSummary {
            p50: fields.optional_non_negative(&format!("median_{name}_ms"))?,
            p95: fields.optional_non_negative(&format!("p95_{name}_ms"))?,
            p99: fields.optional_non_negative(&format!("p99_{name}_ms"))?,
            mean: fields.optional_non_negative(&format!("mean_{name}_ms"))?,
            samples: None,
            source_prefix: None,
        })
    };
    Ok(KeyMetrics {
        ttfo: summary("ttft")?,
        e2e: summary("e2el")?,
        tpot: summary("tpot")?,
        throughput_tok_s: fields.optional_non_negative("output_throughput")?,
        output_tokens: fields.optional_count("total_output_tokens")?,
        ..KeyMetrics::default()
    })
}
