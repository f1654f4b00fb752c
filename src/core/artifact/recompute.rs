//! Recomputation from a file (ARTIFACT.md §7.3): every field of an artifact that its rows
//! determine, recomputed and compared bit for bit, with the reason for each field it skips.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::core::artifact::metrics::compute_metrics;
use crate::core::artifact::metrics::ResultTotals;
use crate::core::artifact::metrics::DISTRIBUTION_FAMILIES;
use crate::core::python::stats::DISTRIBUTION_STATS;
use crate::core::python::time::UtcSecond;
use crate::core::schema::error::ArtifactError;
use crate::core::schema::generation::{detect_generation, is_converted, Generation};
use crate::core::schema::rows::RequestTiming;
use crate::core::schema::MeasurementProtocol;
use crate::core::schema::MetricPopulation;
use crate::core::schema::DERIVED_ROW_FIELDS;

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
    if is_converted(value) {
        return Err(ArtifactError::NotRecomputable {
            generation,
            reason: "it was converted from another tool's results (its `source` block): its rows \
                     lack the plan and chunk fields the producer's rules recompute from, and its \
                     metrics are strobe's, computed from those rows when it was converted; \
                     `strobe-artifact validate` and `strobe-artifact summary` read it"
                .to_owned(),
        });
    }
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
pub(crate) fn missing_row_input(
    metric: &str,
    filled: &BTreeSet<&'static str>,
) -> Option<&'static str> {
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
pub(crate) fn wall_seconds_candidates(wall_clock_ms: f64) -> Vec<f64> {
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
pub(crate) fn rate_over_wall(count: u64, wall_candidates: &[f64], stored: &Value) -> Value {
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
pub(crate) fn parse_row(
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
