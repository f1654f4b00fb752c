//! The §7 metrics of an artifact from its rows: the distribution families (which row field feeds
//! which `metrics` keys), sums, throughput and the cache hit rate, with the producer's rules.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::core::observe::conclude::CompletedRequest;
use crate::core::python::stats::exact_mean;
use crate::core::python::stats::{Distribution, DISTRIBUTION_STATS};
use crate::core::schema::error::ArtifactError;
use crate::core::schema::rows::{OutputTokenSource, RequestTiming};

/// One distribution family of `metrics`: which row field feeds it and how its keys are spelled.
///
/// Keys are `{prefix}_samples` (never suffixed) and `{prefix}_{stat}{unit_suffix}` for every
/// stat in [`DISTRIBUTION_STATS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DistributionFamily {
    /// Key prefix in `metrics`, e.g. `ttft` or `mean_inter_token_latency_ms`.
    pub prefix: &'static str,
    /// The `request_timings[]` field whose non-null values are summarized.
    pub row_field: &'static str,
    /// Appended after the stat name (`_ms` or empty), e.g. `ttft_p99_ms`.
    pub unit_suffix: &'static str,
}

impl DistributionFamily {
    /// The integer sample-count key, `{prefix}_samples`.
    pub fn samples_key(&self) -> String {
        format!("{}_samples", self.prefix)
    }

    /// The key of one statistic, `{prefix}_{stat}{unit_suffix}` (e.g. `e2e_mean_ci95_low_ms`).
    pub fn stat_key(&self, stat: &str) -> String {
        format!("{}_{}{}", self.prefix, stat, self.unit_suffix)
    }
}

/// The 11 distribution families of ARTIFACT.md §7.1, in the spec's order.
///
/// `tpot` and `mean_time_per_output_token` both read `mean_time_per_output_token_ms`, and
/// `completion_tokens` reads `output_tokens`; those pairings are the producer's, not typos.
pub const DISTRIBUTION_FAMILIES: [DistributionFamily; 11] = [
    DistributionFamily {
        prefix: "time_to_first_output",
        row_field: "time_to_first_output_ms",
        unit_suffix: "_ms",
    },
    DistributionFamily {
        prefix: "ttft",
        row_field: "ttft_ms",
        unit_suffix: "_ms",
    },
    DistributionFamily {
        prefix: "generation",
        row_field: "generation_ms",
        unit_suffix: "_ms",
    },
    DistributionFamily {
        prefix: "e2e",
        row_field: "e2e_ms",
        unit_suffix: "_ms",
    },
    DistributionFamily {
        prefix: "effective_prefill_tok_s",
        row_field: "effective_prefill_tok_s",
        unit_suffix: "",
    },
    DistributionFamily {
        prefix: "decode_tok_s",
        row_field: "decode_tok_s",
        unit_suffix: "",
    },
    DistributionFamily {
        prefix: "mean_inter_token_latency_ms",
        row_field: "mean_inter_token_latency_ms",
        unit_suffix: "",
    },
    DistributionFamily {
        prefix: "mean_time_per_output_token",
        row_field: "mean_time_per_output_token_ms",
        unit_suffix: "_ms",
    },
    DistributionFamily {
        prefix: "tpot",
        row_field: "mean_time_per_output_token_ms",
        unit_suffix: "_ms",
    },
    DistributionFamily {
        prefix: "prompt_tokens",
        row_field: "prompt_tokens",
        unit_suffix: "",
    },
    DistributionFamily {
        prefix: "completion_tokens",
        row_field: "output_tokens",
        unit_suffix: "",
    },
];

/// Writes the 13 keys of one family into `metrics`: `{prefix}_samples` and
/// `{prefix}_{stat}{unit_suffix}` for each stat. With no values, samples is `0` and every
/// other key is `null` (ARTIFACT.md §7.1).
///
/// A non-finite statistic cannot be held by `serde_json` and would be written as `null`; it only
/// arises from non-finite input or sums beyond `f64::MAX`, which timing rows never contain.
pub fn write_distribution_family(
    metrics: &mut Map<String, Value>,
    prefix: &str,
    unit_suffix: &str,
    values: &[f64],
) {
    let family_key = |stat: &str| format!("{prefix}_{stat}{unit_suffix}");
    let distribution = Distribution::of(values);
    let samples = distribution.map_or(0, |summary| summary.samples);
    metrics.insert(format!("{prefix}_samples"), Value::from(samples));
    match distribution {
        Some(summary) => {
            for (stat, value) in summary.stat_values() {
                metrics.insert(family_key(stat), Value::from(value));
            }
        }
        None => {
            for stat in DISTRIBUTION_STATS {
                metrics.insert(family_key(stat), Value::Null);
            }
        }
    }
}

/// The per-result totals `metrics` needs beyond the rows. The builder takes them from the
/// results; a recomputation from a file can only take them from the rows.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ResultTotals {
    pub(crate) output_tokens: Option<u64>,
    pub(crate) content_chunks: u64,
    pub(crate) reasoning_chunks: u64,
    pub(crate) output_token_sources: BTreeMap<String, u64>,
    /// `None` when not recomputable at all; `Some(None)` when nothing qualified.
    pub(crate) prefix_cache_hit_avg: Option<Option<f64>>,
}

impl ResultTotals {
    /// From the successful results (§7.2).
    pub(crate) fn of_results(results: &[CompletedRequest]) -> Result<Self, ArtifactError> {
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
    pub(crate) fn of_rows(rows: &[RequestTiming]) -> Result<Self, ArtifactError> {
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
pub(crate) fn row_field_value(row: &RequestTiming, field: &str) -> Option<f64> {
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
pub(crate) fn compute_metrics(
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
