//! Another tool's run as an `anvil-serving.benchmark/v1` artifact (`strobe-artifact convert`):
//! its rows under strobe's row rules (ARTIFACT.md §5), the §7 metrics computed from them, every
//! field the file cannot know `null`, and a `source` block naming the tool, its version and how
//! each quantity maps (docs/spec/converted.md). Counts strobe would not call exact
//! (a client tokenizer's) are kept beside the row as `tool_prompt_tokens` and
//! `tool_output_tokens`, so nothing the file held is lost; the numbers that then cannot be
//! computed are listed in `source.unavailable` with why and the tool's own figure.

use serde_json::{json, Map, Value};

use crate::core::artifact::metrics::{write_distribution_family, DISTRIBUTION_FAMILIES};
use crate::core::observe::accumulate::CHUNK_ARRIVALS_KEPT;
use crate::core::python::stats::exact_mean;
use crate::core::read::opened::metrics::KeyMetrics;
use crate::core::read::validate::report::SCHEMA;
use crate::core::schema::MetricPopulation;

use super::unavailable::{self, unavailable};
use super::{ForeignRun, Quantity};

/// Why a run cannot be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    /// The file holds the tool's summary only.
    #[error(
        "it holds no per-request rows ({kind}); an artifact is built from rows: re-run the tool \
         with per-request output (vLLM --save-detailed, AIPerf's profile_export.jsonl)"
    )]
    NoRows {
        /// What the file was.
        kind: String,
    },
}

/// The `source.mapping` of a converted artifact: one entry per quantity.
fn mapping(run: &ForeignRun) -> Value {
    Value::Array(
        Quantity::ALL
            .into_iter()
            .filter_map(|quantity| run.source.definition(quantity))
            .map(|definition| {
                json!({
                    "quantity": definition.quantity.label(),
                    "tool_term": (!definition.tool_term.is_empty()).then_some(definition.tool_term),
                    "meaning": definition.meaning,
                    "same_as_strobe": definition.same_as_strobe,
                })
            })
            .collect(),
    )
}

/// The run's rows under strobe's row rules, in request order.
fn rows(run: &ForeignRun) -> Vec<Value> {
    run.rows
        .iter()
        .map(|row| {
            let exact = row
                .output_token_source
                .as_ref()
                .is_some_and(|source| source.as_str() == "usage");
            let source = if exact { "usage" } else { "unknown" };
            let output_tokens = row.output_tokens.filter(|_| exact);
            let prompt_tokens = row.prompt_tokens.filter(|_| exact);
            let ttfo_ms = row.ttfo_ms.or(row.ttft_ms);
            let e2e_ms = row.e2e_ms.unwrap_or_default();
            // §5 in seconds, as the producer computes it.
            let (ttfo_s, e2e_s) = (ttfo_ms.map(|ms| ms / 1000.0), e2e_ms / 1000.0);
            let generation_s = ttfo_s.map(|ttfo| e2e_s - ttfo);
            let visible_s = row.ttft_ms.map(|ttft| e2e_s - ttft / 1000.0);
            let decoded = output_tokens.map(|tokens| tokens.saturating_sub(1));
            let per_token_ms = match (generation_s, decoded) {
                (Some(generation), Some(decoded)) if decoded > 0 && generation > 0.0 => {
                    Some(generation * 1000.0 / decoded as f64)
                }
                _ => None,
            };
            let decode_tok_s = match (generation_s, decoded) {
                (Some(generation), Some(decoded)) if decoded > 0 && generation > 0.0 => {
                    Some(decoded as f64 / generation)
                }
                _ => None,
            };
            let prefill_tok_s = match (prompt_tokens, ttfo_s) {
                (Some(prompt), Some(ttfo)) if ttfo > 0.0 => Some(prompt as f64 / ttfo),
                _ => None,
            };
            let mut object = Map::new();
            let mut put = |key: &str, value: Value| {
                object.insert(key.to_owned(), value);
            };
            put("request_index", json!(row.request_index));
            put("planned_context_tokens", Value::Null);
            put("prompt_tokens", json!(prompt_tokens));
            put("output_tokens", json!(output_tokens));
            put("output_token_source", json!(source));
            put("time_to_first_output_ms", json!(ttfo_ms));
            put("ttft_ms", json!(row.ttft_ms));
            put("generation_ms", json!(generation_s.map(|s| s * 1000.0)));
            put(
                "visible_generation_ms",
                json!(visible_s.map(|s| s * 1000.0)),
            );
            put("e2e_ms", json!(e2e_ms));
            put("effective_prefill_tok_s", json!(prefill_tok_s));
            put("decode_tok_s", json!(decode_tok_s));
            put("mean_inter_token_latency_ms", json!(per_token_ms));
            put("mean_time_per_output_token_ms", json!(per_token_ms));
            put("tpot_ms", json!(per_token_ms));
            put("reasoning_chunks", Value::Null);
            put("content_chunks", Value::Null);
            put("request_canary", Value::Null);
            put("controlled_output", Value::Null);
            put("visible_content_truncated", json!(false));
            put("cached_tokens", json!(row.cached_tokens));
            put("started_at_ms", json!(row.started_at_ms));
            // The tool's gaps between reads as arrival times after the request start (strobe's
            // chunk traces, docs/guide/metrics.md), so the read-gap charts survive the conversion.
            if let (Some(first), false) = (ttfo_ms, row.read_gaps_ms.is_empty()) {
                let arrivals: Vec<f64> = std::iter::once(first)
                    .chain(row.read_gaps_ms.iter().scan(first, |at, gap| {
                        *at += gap;
                        Some(*at)
                    }))
                    .take(CHUNK_ARRIVALS_KEPT)
                    .collect();
                put("chunk_arrivals_ms", json!(arrivals));
            }
            if !exact {
                put("tool_prompt_tokens", json!(row.prompt_tokens));
                put("tool_output_tokens", json!(row.output_tokens));
            }
            Value::Object(object)
        })
        .collect()
}

/// The §7 metrics of converted rows: the distribution families, token sums, throughput (only
/// when every request succeeded and every count is exact) and the cache hit average.
fn metrics(
    rows: &[Value],
    performance_eligible: bool,
    wall_seconds: Option<f64>,
) -> Map<String, Value> {
    let mut metrics = Map::new();
    for family in DISTRIBUTION_FAMILIES {
        let values: Vec<f64> = rows
            .iter()
            .filter_map(|row| row.get(family.row_field).and_then(Value::as_f64))
            .collect();
        write_distribution_family(&mut metrics, family.prefix, family.unit_suffix, &values);
    }
    let prompt: Vec<u64> = rows
        .iter()
        .filter_map(|row| row["prompt_tokens"].as_u64())
        .collect();
    metrics.insert(
        "prompt_tokens".to_owned(),
        if prompt.is_empty() {
            Value::Null
        } else {
            json!(prompt.iter().sum::<u64>())
        },
    );
    metrics.insert("prompt_token_samples".to_owned(), json!(prompt.len()));
    let output: Option<u64> = rows.iter().map(|row| row["output_tokens"].as_u64()).sum();
    metrics.insert("output_tokens".to_owned(), json!(output));
    let throughput = match (output, wall_seconds) {
        (Some(tokens), Some(seconds)) if performance_eligible && seconds > 0.0 => {
            Some(tokens as f64 / seconds)
        }
        _ => None,
    };
    metrics.insert("throughput_tok_s".to_owned(), json!(throughput));
    metrics.insert(
        "throughput_performance_eligible".to_owned(),
        json!(performance_eligible),
    );
    let fractions: Option<Vec<f64>> = rows
        .iter()
        .map(|row| {
            let cached = row["cached_tokens"].as_u64()?;
            let prompt = row["prompt_tokens"].as_u64().filter(|&prompt| prompt > 0)?;
            Some(cached as f64 / prompt as f64)
        })
        .collect();
    metrics.insert(
        "prefix_cache_hit_avg".to_owned(),
        json!(fractions.and_then(|fractions| exact_mean(&fractions))),
    );
    metrics
}

/// The failures, in request order, with the classes of ARTIFACT.md §6.3.
fn failures(run: &ForeignRun) -> Vec<Value> {
    run.failures
        .iter()
        .map(|failure| {
            json!({
                "request_index": failure.request_index,
                "failure_class": failure.failure_class.as_ref().map(|class| {
                    if class.as_str() == "incomplete" { "request_error" } else { class.as_str() }
                }),
                "error_type": failure.error_type.as_ref().map(|text| text.as_str()),
                "error_message": failure.error_message.as_ref().map(|text| text.as_str()),
                "started_at_ms": failure.started_at_ms,
            })
        })
        .collect()
}

/// The v1 artifact of `run`.
pub fn to_artifact(run: &ForeignRun) -> Result<Value, ConvertError> {
    if run.rows.is_empty() && run.failures.is_empty() {
        return Err(ConvertError::NoRows {
            kind: run.source.file_kind.to_owned(),
        });
    }
    let rows = rows(run);
    let completed = rows.len() as u64;
    let failed = run.failures.len() as u64;
    let requests = completed + failed;
    let performance_eligible = failed == 0;
    let wall_seconds = run.workload.wall_clock_ms.map(|ms| ms / 1000.0);
    let metrics = metrics(&rows, performance_eligible, wall_seconds);
    // What the tool's file gives but these rows cannot, said in the file itself.
    let unavailable = unavailable(run, &KeyMetrics::from_metrics(&metrics));
    let population = MetricPopulation::from_metrics(requests, completed, failed, &metrics);
    let text = |text: &Option<crate::core::read::opened::text::CappedText>| {
        text.as_ref().map(|text| text.as_str().to_owned())
    };
    let load = run.load.as_ref().map(|load| {
        json!({
            "mode": "rate",
            "rate": load.rate,
            "arrivals": load.arrivals.as_ref().map(|arrivals| arrivals.as_str()),
            "burstiness": load.burstiness,
            "cap": load.cap,
        })
    });
    let aggregates: Map<String, Value> = run
        .source
        .aggregates
        .iter()
        .map(|aggregate| (aggregate.name.clone(), json!(aggregate.value)))
        .collect();
    let mut artifact = Map::new();
    let mut put = |key: &str, value: Value| {
        artifact.insert(key.to_owned(), value);
    };
    put("schema", json!(SCHEMA));
    put("measurement_protocol", Value::Null);
    put("run_id", json!(text(&run.identity.run_id)));
    // The tools write local-time labels without a zone; the label is kept in `source`.
    put("started_at", Value::Null);
    put("finished_at", Value::Null);
    put("started_at_unix_ns", Value::Null);
    put("finished_at_unix_ns", Value::Null);
    put("timestamp_precision", Value::Null);
    put("clock_domain_id", Value::Null);
    put("configuration_fingerprint", Value::Null);
    put("wall_clock_ms", json!(run.workload.wall_clock_ms));
    put("base_url", json!(text(&run.identity.base_url)));
    put("model", json!(text(&run.identity.model)));
    put("engine", Value::Null);
    put("gpu", Value::Null);
    put("tier", Value::Null);
    put("manifest", Value::Null);
    put("source_recipe", Value::Null);
    put("requests", json!(requests));
    put("completed", json!(completed));
    put("failed", json!(failed));
    put("failures", json!(failures(run)));
    put("responses_received", Value::Null);
    put("concurrency", json!(run.workload.concurrency));
    put("context_tokens", Value::Null);
    put("context_seed", Value::Null);
    put("context_distribution", Value::Null);
    put("max_context_tokens", Value::Null);
    put("max_tokens", Value::Null);
    put("response_words", Value::Null);
    put("prompt_cache_mode", Value::Null);
    put("shared_prefix_tokens", Value::Null);
    put("request_canaries", json!(false));
    put("controlled_output_policy", Value::Null);
    put("performance_eligible", json!(performance_eligible));
    put(
        "metric_population",
        serde_json::to_value(population).unwrap_or(Value::Null),
    );
    put("serve_flags", json!({}));
    put("sampling", Value::Null);
    put("timing_methodology", Value::Null);
    put("request_timings", Value::Array(rows));
    put("metrics", Value::Object(metrics));
    put(
        "source",
        json!({
            "tool": run.source.tool.id(),
            "tool_name": run.source.tool.name(),
            "version": text(&run.source.version),
            "file_kind": run.source.file_kind,
            "percentile_method": run.source.percentile_method,
            "started_at_label": text(&run.identity.started_at),
            "mapping": mapping(run),
            "aggregates": aggregates,
            "unavailable": unavailable::to_json(&unavailable),
        }),
    );
    if let Some(load) = load {
        put("load", load);
    }
    Ok(Value::Object(artifact))
}
