//! Reading-side validation of `anvil-serving.benchmark/v1` artifacts (ARTIFACT.md §9, §10).
//!
//! This module owns the answer to "may strobe trust this file?": it detects which of the four
//! artifact generations a file belongs to, applies every §9 rule that the file's generation makes
//! applicable, and returns **all** violations with a JSON path and a rule id, never just the
//! first. It works on raw text (so it can report NaN tokens, nesting depth and syntax errors with
//! a line and column) and on `serde_json::Value` (so it does not depend on the typed artifact
//! structs). Input is treated as hostile: nothing here panics, recurses without bound or does
//! more than linear work in the size of the input.
//!
//! It also owns the small ISO-8601 reader the time rules need (no date crate: the rules only need
//! whole seconds and a UTC offset, and `days_from_civil` is a dozen lines).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;

use serde_json::{json, Map, Value};

/// The only schema string an artifact may carry.
pub const SCHEMA: &str = "anvil-serving.benchmark/v1";

/// serde_json's default recursion limit: deeper input is rejected with
/// [`RuleId::NestingTooDeep`]. Real artifacts nest at most five levels.
pub const MAX_NESTING_DEPTH: usize = 128;

/// Smallest tolerance (ms) between the nanosecond interval and `wall_clock_ms`.
pub const WALL_TOLERANCE_MIN_MS: f64 = 5.0;

/// Relative tolerance (0.01 %) between the nanosecond interval and `wall_clock_ms`.
pub const WALL_TOLERANCE_RELATIVE: f64 = 0.0001;

/// Fields that must be equal between replicas before the combiner merges them (§9).
pub const COMBINER_MATCHED_FIELDS: [&str; 12] = [
    "measurement_protocol",
    "engine",
    "context_tokens",
    "max_context_tokens",
    "max_tokens",
    "response_words",
    "prompt_cache_mode",
    "request_canaries",
    "controlled_output_policy",
    "context_seed",
    "serve_flags",
    "sampling",
];

/// Every §9 reading rule, plus the three text-level rules (syntax, depth, non-finite numbers).
///
/// Each variant has a stable kebab-case id ([`RuleId::id`]) that tools and tests may rely on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleId {
    /// The text is not JSON at all (syntax error, empty input, byte-order mark).
    InvalidJson,
    /// The JSON nests deeper than [`MAX_NESTING_DEPTH`].
    NestingTooDeep,
    /// The JSON contains `NaN`, `Infinity` or `-Infinity` (or a number too large for a double).
    NonFiniteNumber,
    /// The top level is not an object.
    NotAnObject,
    /// `schema` is not `anvil-serving.benchmark/v1`.
    SchemaMismatch,
    /// `metrics` is not an object.
    MetricsNotObject,
    /// `serve_flags` is not an object.
    ServeFlagsNotObject,
    /// `requests` ≥ 1, `completed` ≥ 0, `failed` ≥ 0, `concurrency` ≥ 1, as non-bool ints.
    CountField,
    /// `completed + failed == requests`.
    CountsAddUp,
    /// `performance_eligible` is a bool or null.
    PerformanceEligibleType,
    /// `context_tokens` ≥ 0, `max_context_tokens` ≥ 1, `max_tokens` ≥ 1, `response_words` ≥ 0
    /// and `context_seed`, each an int or null.
    PlanIntegerField,
    /// `wall_clock_ms` is finite and ≥ 0.
    WallClockMs,
    /// `prompt_cache_mode` is `shared` or `unique` (modern).
    PromptCacheMode,
    /// `request_canaries` is a bool (modern).
    RequestCanariesType,
    /// `controlled_output_policy` is null, `observe` or `strict`.
    ControlledOutputPolicy,
    /// `engine` and `model` are non-empty strings (modern).
    EngineModelNames,
    /// `source_recipe` is a string or null (modern).
    SourceRecipeType,
    /// `sampling` has exactly `temperature` and `top_p`, each with exactly
    /// `requested`/`effective_request`/`sent`.
    SamplingShape,
    /// Sampling values are in range: temperature finite 0..=2, top_p finite in (0, 1].
    SamplingRange,
    /// `effective_request` and `sent` agree with `requested` (§3).
    SamplingConsistency,
    /// `request_timings` is an array of objects.
    TimingRowsShape,
    /// `len(request_timings) == completed`.
    TimingRowCount,
    /// Row integers: `request_index`, `prompt_tokens`, `content_chunks`, `reasoning_chunks`,
    /// `planned_context_tokens` are non-bool ints ≥ 0.
    RowIntegerField,
    /// A row's `output_tokens` agrees with its `output_token_source` (≥ 1 for usage).
    RowOutputTokens,
    /// Every ms and rate field of a row is finite and ≥ 0.
    RowTimingValue,
    /// `time_to_first_output_ms ≤ ttft_ms ≤ e2e_ms`.
    TimingOrder,
    /// Row and failure indexes cover every request exactly once.
    IndexCoverage,
    /// `failures` is an array of objects with a `request_index` and well-typed §6.3 fields.
    FailureShape,
    /// `metrics.output_tokens` is an int equal to the sum of the rows' `output_tokens`.
    OutputTokensSum,
    /// `metrics.throughput_tok_s` is finite and ≥ 0, or null.
    ThroughputValue,
    /// A row carries a canary although `request_canaries` is false.
    CanaryUnexpected,
    /// With `request_canaries` true, every row has a canary object that passed.
    CanaryRequired,
    /// With a controlled-output policy, canaries carry the modern evidence (marker at start,
    /// no foreign marker, complete capture).
    CanaryModernEvidence,
    /// A row carries `controlled_output` although `response_words` is 0 or the policy is null.
    ControlledOutputUnexpected,
    /// A required `controlled_output` object is missing or has wrong types/values.
    ControlledOutputShape,
    /// `exact_adherence` disagrees with the observed word counts.
    ControlledOutputAdherence,
    /// `passed` disagrees with the policy.
    ControlledOutputPassed,
    /// Under `strict`, a row with an incomplete capture or without exact adherence.
    ControlledOutputStrict,
    /// `started_at`/`finished_at` parse as ISO-8601 with a timezone and zero microseconds.
    IsoTimestamp,
    /// Nanosecond fields are both non-bool ints ≥ 0 with finished ≥ started.
    NanosecondFields,
    /// `ns // 1e9` equals the ISO label's second.
    NanosecondIsoSecond,
    /// The nanosecond interval agrees with `wall_clock_ms` within max(5 ms, 0.01 %).
    WallClockReconciliation,
    /// `clock_domain_id` matches `[A-Za-z0-9._-]{1,64}`.
    ClockDomainId,
    /// `configuration_fingerprint` matches `sha256:` plus 64 lowercase hex digits.
    ConfigurationFingerprint,
    /// Distribution statistics are numbers, finite and ≥ 0 (CI bounds excepted).
    DistributionValue,
    /// `min ≤ p25 ≤ … ≤ max` and `min ≤ mean ≤ max`.
    DistributionOrder,
    /// `context_tokens ≤ max_context_tokens` when both are set.
    ContextWithinMax,
}

impl RuleId {
    /// Every rule, in the order of ARTIFACT.md §9.
    pub const ALL: [RuleId; 47] = [
        RuleId::InvalidJson,
        RuleId::NestingTooDeep,
        RuleId::NonFiniteNumber,
        RuleId::NotAnObject,
        RuleId::SchemaMismatch,
        RuleId::MetricsNotObject,
        RuleId::ServeFlagsNotObject,
        RuleId::CountField,
        RuleId::CountsAddUp,
        RuleId::PerformanceEligibleType,
        RuleId::PlanIntegerField,
        RuleId::WallClockMs,
        RuleId::PromptCacheMode,
        RuleId::RequestCanariesType,
        RuleId::ControlledOutputPolicy,
        RuleId::EngineModelNames,
        RuleId::SourceRecipeType,
        RuleId::SamplingShape,
        RuleId::SamplingRange,
        RuleId::SamplingConsistency,
        RuleId::TimingRowsShape,
        RuleId::TimingRowCount,
        RuleId::RowIntegerField,
        RuleId::RowOutputTokens,
        RuleId::RowTimingValue,
        RuleId::TimingOrder,
        RuleId::IndexCoverage,
        RuleId::FailureShape,
        RuleId::OutputTokensSum,
        RuleId::ThroughputValue,
        RuleId::CanaryUnexpected,
        RuleId::CanaryRequired,
        RuleId::CanaryModernEvidence,
        RuleId::ControlledOutputUnexpected,
        RuleId::ControlledOutputShape,
        RuleId::ControlledOutputAdherence,
        RuleId::ControlledOutputPassed,
        RuleId::ControlledOutputStrict,
        RuleId::IsoTimestamp,
        RuleId::NanosecondFields,
        RuleId::NanosecondIsoSecond,
        RuleId::WallClockReconciliation,
        RuleId::ClockDomainId,
        RuleId::ConfigurationFingerprint,
        RuleId::DistributionValue,
        RuleId::DistributionOrder,
        RuleId::ContextWithinMax,
    ];

    /// The stable kebab-case id, e.g. `"timing-order"`.
    pub fn id(self) -> &'static str {
        match self {
            RuleId::InvalidJson => "invalid-json",
            RuleId::NestingTooDeep => "nesting-too-deep",
            RuleId::NonFiniteNumber => "non-finite-number",
            RuleId::NotAnObject => "not-an-object",
            RuleId::SchemaMismatch => "schema-mismatch",
            RuleId::MetricsNotObject => "metrics-not-object",
            RuleId::ServeFlagsNotObject => "serve-flags-not-object",
            RuleId::CountField => "count-field",
            RuleId::CountsAddUp => "counts-add-up",
            RuleId::PerformanceEligibleType => "performance-eligible-type",
            RuleId::PlanIntegerField => "plan-integer-field",
            RuleId::WallClockMs => "wall-clock-ms",
            RuleId::PromptCacheMode => "prompt-cache-mode",
            RuleId::RequestCanariesType => "request-canaries-type",
            RuleId::ControlledOutputPolicy => "controlled-output-policy",
            RuleId::EngineModelNames => "engine-model-names",
            RuleId::SourceRecipeType => "source-recipe-type",
            RuleId::SamplingShape => "sampling-shape",
            RuleId::SamplingRange => "sampling-range",
            RuleId::SamplingConsistency => "sampling-consistency",
            RuleId::TimingRowsShape => "timing-rows-shape",
            RuleId::TimingRowCount => "timing-row-count",
            RuleId::RowIntegerField => "row-integer-field",
            RuleId::RowOutputTokens => "row-output-tokens",
            RuleId::RowTimingValue => "row-timing-value",
            RuleId::TimingOrder => "timing-order",
            RuleId::IndexCoverage => "index-coverage",
            RuleId::FailureShape => "failure-shape",
            RuleId::OutputTokensSum => "output-tokens-sum",
            RuleId::ThroughputValue => "throughput-value",
            RuleId::CanaryUnexpected => "canary-unexpected",
            RuleId::CanaryRequired => "canary-required",
            RuleId::CanaryModernEvidence => "canary-modern-evidence",
            RuleId::ControlledOutputUnexpected => "controlled-output-unexpected",
            RuleId::ControlledOutputShape => "controlled-output-shape",
            RuleId::ControlledOutputAdherence => "controlled-output-adherence",
            RuleId::ControlledOutputPassed => "controlled-output-passed",
            RuleId::ControlledOutputStrict => "controlled-output-strict",
            RuleId::IsoTimestamp => "iso-timestamp",
            RuleId::NanosecondFields => "nanosecond-fields",
            RuleId::NanosecondIsoSecond => "nanosecond-iso-second",
            RuleId::WallClockReconciliation => "wall-clock-reconciliation",
            RuleId::ClockDomainId => "clock-domain-id",
            RuleId::ConfigurationFingerprint => "configuration-fingerprint",
            RuleId::DistributionValue => "distribution-value",
            RuleId::DistributionOrder => "distribution-order",
            RuleId::ContextWithinMax => "context-within-max",
        }
    }

    /// Looks a rule up by its kebab-case id.
    pub fn from_id(id: &str) -> Option<RuleId> {
        RuleId::ALL.iter().copied().find(|rule| rule.id() == id)
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// The artifact generation a reader recognised (§10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Generation {
    /// No `measurement_protocol`, no `request_timings`; p50/p95 metrics only.
    G1LegacyMinimal,
    /// `capacity-v2`: engine, gpu and failures, but no timing rows.
    G2,
    /// `capacity-v3`/`capacity-v4-reasoning` with timing rows but no canary fields.
    G3,
    /// Canaries, controlled output, sampling provenance, ns timestamps, full distributions.
    Modern,
    /// The input was not a JSON object, so no generation can be read from it.
    Unknown,
}

impl Generation {
    /// Stable id: `g1-legacy-minimal`, `g2`, `g3`, `modern` or `unknown`.
    pub fn id(self) -> &'static str {
        match self {
            Generation::G1LegacyMinimal => "g1-legacy-minimal",
            Generation::G2 => "g2",
            Generation::G3 => "g3",
            Generation::Modern => "modern",
            Generation::Unknown => "unknown",
        }
    }

    /// True for the three older generations a reader still accepts.
    pub fn is_legacy(self) -> bool {
        matches!(
            self,
            Generation::G1LegacyMinimal | Generation::G2 | Generation::G3
        )
    }

    /// At least G2: `failed` and `failures` exist from here on.
    fn has_failure_counts(self) -> bool {
        matches!(self, Generation::G2 | Generation::G3 | Generation::Modern)
    }

    /// At least G3: timing rows and `wall_clock_ms` exist from here on.
    fn has_timings(self) -> bool {
        matches!(self, Generation::G3 | Generation::Modern)
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match self {
            Generation::G1LegacyMinimal => "G1 legacy minimal",
            Generation::G2 => "G2 (capacity-v2, no timing rows)",
            Generation::G3 => "G3 (timing rows, no canaries)",
            Generation::Modern => "modern",
            Generation::Unknown => "unknown",
        };
        f.write_str(label)
    }
}

/// The overall answer for one artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A modern artifact with no violation.
    Valid,
    /// An older-generation artifact with no violation under the legacy-tolerant rules.
    ValidLegacy(Generation),
    /// At least one violation.
    Invalid,
}

impl Verdict {
    /// Stable id: `valid`, `valid-legacy` or `invalid`.
    pub fn id(self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::ValidLegacy(_) => "valid-legacy",
            Verdict::Invalid => "invalid",
        }
    }

    /// True for [`Verdict::Valid`] and [`Verdict::ValidLegacy`].
    pub fn is_acceptable(self) -> bool {
        !matches!(self, Verdict::Invalid)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Valid => f.write_str("valid"),
            Verdict::ValidLegacy(generation) => write!(f, "valid (legacy {})", generation.id()),
            Verdict::Invalid => f.write_str("invalid"),
        }
    }
}

/// One broken rule at one place in the artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON path of the offending value, e.g. `$.request_timings[3].ttft_ms`.
    pub path: String,
    /// The rule that is broken.
    pub rule: RuleId,
    /// What is wrong, with the offending value.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}: {}", self.rule, self.path, self.message)
    }
}

/// The result of validating one artifact: verdict, generation and every violation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Valid, valid legacy, or invalid.
    pub verdict: Verdict,
    /// The generation detected from the artifact's shape (§10).
    pub generation: Generation,
    /// Every violation found, in document order of the checks.
    pub violations: Vec<Violation>,
}

impl Report {
    /// True if the artifact may be read (valid or valid legacy).
    pub fn is_acceptable(&self) -> bool {
        self.verdict.is_acceptable()
    }

    /// True if some violation is of `rule` at exactly `path`.
    pub fn has_violation(&self, rule: RuleId, path: &str) -> bool {
        self.violations
            .iter()
            .any(|violation| violation.rule == rule && violation.path == path)
    }

    /// The distinct rules broken, sorted.
    pub fn rules(&self) -> BTreeSet<RuleId> {
        self.violations
            .iter()
            .map(|violation| violation.rule)
            .collect()
    }

    /// A machine-readable form: `{verdict, generation, violations: [{path, rule, message}]}`.
    pub fn to_json(&self) -> Value {
        let violations: Vec<Value> = self
            .violations
            .iter()
            .map(|violation| {
                json!({
                    "path": violation.path,
                    "rule": violation.rule.id(),
                    "message": violation.message,
                })
            })
            .collect();
        json!({
            "verdict": self.verdict.id(),
            "generation": self.generation.id(),
            "violations": violations,
        })
    }

    fn from_violations(generation: Generation, violations: Vec<Violation>) -> Report {
        let verdict = if !violations.is_empty() {
            Verdict::Invalid
        } else if generation.is_legacy() {
            Verdict::ValidLegacy(generation)
        } else if generation == Generation::Modern {
            Verdict::Valid
        } else {
            Verdict::Invalid
        };
        Report {
            verdict,
            generation,
            violations,
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "verdict:    {}", self.verdict)?;
        writeln!(f, "generation: {}", self.generation)?;
        if self.violations.is_empty() {
            write!(f, "violations: none")
        } else {
            write!(f, "violations: {}", self.violations.len())?;
            for violation in &self.violations {
                write!(f, "\n  - {violation}")?;
            }
            Ok(())
        }
    }
}

/// Detects the generation from the §10 shapes: `request_canaries` ⇒ modern, else
/// `request_timings` ⇒ G3, else `measurement_protocol` ⇒ G2, else G1. Non-objects are
/// [`Generation::Unknown`].
pub fn detect_generation(value: &Value) -> Generation {
    let Some(artifact) = value.as_object() else {
        return Generation::Unknown;
    };
    if artifact.contains_key("request_canaries") {
        Generation::Modern
    } else if artifact.contains_key("request_timings") {
        Generation::G3
    } else if artifact.contains_key("measurement_protocol") {
        Generation::G2
    } else {
        Generation::G1LegacyMinimal
    }
}

/// Validates artifact text: syntax, nesting depth and NaN/±Infinity tokens (reported with line
/// and column), then every §9 rule on the parsed value.
pub fn validate_artifact_text(text: &str) -> Report {
    let mut text_violations = Vec::new();
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => {
            text_violations.push(Violation {
                path: "$".to_string(),
                rule: RuleId::InvalidJson,
                message: "the file starts with a UTF-8 byte-order mark, which JSON readers \
                          reject; save it without a BOM"
                    .to_string(),
            });
            rest
        }
        None => text,
    };
    let tokens = find_non_finite_tokens(text);
    let parse_text = if tokens.is_empty() {
        None
    } else {
        Some(replace_tokens_with_sentinels(text, &tokens))
    };
    let parsed: Result<Value, serde_json::Error> =
        serde_json::from_str(parse_text.as_deref().unwrap_or(text));
    let value = match parsed {
        Ok(value) => value,
        Err(error) => {
            for token in &tokens {
                text_violations.push(token.violation("$".to_string()));
            }
            text_violations.push(parse_error_violation(&error));
            return Report::from_violations(Generation::Unknown, text_violations);
        }
    };
    let token_paths = if tokens.is_empty() {
        Vec::new()
    } else {
        locate_sentinels(&value, tokens.len())
    };
    let suppressed: HashSet<String> = token_paths.iter().filter_map(|path| path.clone()).collect();
    for (token, path) in tokens.iter().zip(token_paths.iter()) {
        let path = path.clone().unwrap_or_else(|| "$".to_string());
        text_violations.push(token.violation(path));
    }
    let mut report = run_checks(&value, &suppressed);
    text_violations.append(&mut report.violations);
    Report::from_violations(report.generation, text_violations)
}

/// Validates a parsed artifact against every §9 rule that its generation makes applicable.
pub fn validate_artifact(value: &Value) -> Report {
    run_checks(value, &HashSet::new())
}

/// Reasons this run may not be combined with replicas (§9 "Combiner-only admission"). Empty
/// means admissible. This is not validity: a valid artifact with failures is still readable.
pub fn combiner_admission(value: &Value) -> Vec<String> {
    let mut reasons = Vec::new();
    let Some(artifact) = value.as_object() else {
        return vec!["the artifact is not a JSON object".to_string()];
    };
    let requests = artifact.get("requests").and_then(as_int);
    let completed = artifact.get("completed").and_then(as_int);
    let failed = artifact.get("failed").and_then(as_int);
    match failed {
        Some(0) => {}
        Some(count) => reasons.push(format!("the run has {count} failed requests; only zero-failure runs can be combined")),
        None => reasons.push("`failed` is missing or not an integer; only runs that record zero failures can be combined".to_string()),
    }
    if requests.is_none() || completed != requests {
        reasons.push(format!(
            "completed ({}) must equal requests ({})",
            show_opt(artifact.get("completed")),
            show_opt(artifact.get("requests"))
        ));
    }
    if artifact.get("performance_eligible") == Some(&Value::Bool(false)) {
        reasons.push("performance_eligible is false".to_string());
    }
    match artifact.get("request_timings").and_then(Value::as_array) {
        None => reasons.push(
            "there are no request_timings rows to combine (G1/G2 artifacts cannot be combined)"
                .to_string(),
        ),
        Some(rows) => {
            for (position, row) in rows.iter().enumerate() {
                let source = row.get("output_token_source");
                if !matches!(source, None | Some(Value::Null))
                    && source.and_then(Value::as_str) != Some("usage")
                {
                    reasons.push(format!(
                        "request_timings[{position}].output_token_source is {}; the combiner needs exact usage counts",
                        show_opt(source)
                    ));
                }
                if row.get("prompt_tokens").and_then(as_int).is_none() {
                    reasons.push(format!(
                        "request_timings[{position}].prompt_tokens is not an integer; the combiner needs it"
                    ));
                }
                if row
                    .get("time_to_first_output_ms")
                    .and_then(as_number)
                    .is_none()
                {
                    reasons.push(format!(
                        "request_timings[{position}].time_to_first_output_ms is missing; the combiner needs it"
                    ));
                }
            }
        }
    }
    reasons
}

/// Fields from [`COMBINER_MATCHED_FIELDS`] whose values differ between two replicas.
pub fn combiner_field_mismatches(first: &Value, other: &Value) -> Vec<String> {
    COMBINER_MATCHED_FIELDS
        .iter()
        .filter(|field| first.get(**field) != other.get(**field))
        .map(|field| {
            format!(
                "{field} differs: {} versus {}",
                show_opt(first.get(*field)),
                show_opt(other.get(*field))
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Text level: non-finite tokens, parse errors.
// ---------------------------------------------------------------------------------------------

/// Prefix of the placeholder strings that stand in for NaN/Infinity tokens while parsing, so
/// the rest of the artifact can still be validated and each token located by JSON path.
/// U+0001 cannot appear raw in JSON text, so only an escaped copy could collide, and
/// [`locate_sentinels`] refuses to trust an ambiguous result.
const SENTINEL_PREFIX: &str = "\u{1}strobe-non-finite-token:";

/// A bare `NaN`, `Infinity` or `-Infinity` outside any string.
#[derive(Debug, Clone, PartialEq, Eq)]
struct NonFiniteToken {
    byte_offset: usize,
    token: &'static str,
    line: usize,
    column: usize,
}

impl NonFiniteToken {
    fn violation(&self, path: String) -> Violation {
        Violation {
            path,
            rule: RuleId::NonFiniteNumber,
            message: format!(
                "`{}` at line {}, column {} is not valid JSON; artifacts must hold only finite numbers \
                 (the writer should have refused to serialize it)",
                self.token, self.line, self.column
            ),
        }
    }
}

/// Scans for NaN/±Infinity tokens outside strings, with 1-based line and column (in chars).
fn find_non_finite_tokens(text: &str) -> Vec<NonFiniteToken> {
    const TOKENS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut line = 1;
    let mut line_start = 0;
    let mut position = 0;
    while position < bytes.len() {
        let byte = bytes[position];
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            } else if byte == b'\n' {
                line += 1;
                line_start = position + 1;
            }
            position += 1;
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'\n' => {
                line += 1;
                line_start = position + 1;
            }
            b'-' | b'I' | b'N' => {
                let preceded_by_word = position > 0 && is_word_byte(bytes[position - 1]);
                let hit = TOKENS.iter().find(|token| {
                    bytes[position..].starts_with(token.as_bytes())
                        && !bytes
                            .get(position + token.len())
                            .is_some_and(|next| is_word_byte(*next))
                });
                if let (Some(token), false) = (hit, preceded_by_word) {
                    let column = text[line_start..position].chars().count() + 1;
                    found.push(NonFiniteToken {
                        byte_offset: position,
                        token,
                        line,
                        column,
                    });
                    position += token.len();
                    continue;
                }
            }
            _ => {}
        }
        position += 1;
    }
    found
}

fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'.'
}

fn replace_tokens_with_sentinels(text: &str, tokens: &[NonFiniteToken]) -> String {
    let mut out = String::with_capacity(text.len() + tokens.len() * 40);
    let mut copied_up_to = 0;
    for (number, token) in tokens.iter().enumerate() {
        out.push_str(&text[copied_up_to..token.byte_offset]);
        out.push_str(&format!("\"\\u0001strobe-non-finite-token:{number}\""));
        copied_up_to = token.byte_offset + token.token.len();
    }
    out.push_str(&text[copied_up_to..]);
    out
}

/// Finds the JSON path of each sentinel string. Returns `None` for a token whose path cannot
/// be trusted (a sentinel missing or occurring twice, which only hostile input can cause).
fn locate_sentinels(value: &Value, count: usize) -> Vec<Option<String>> {
    let mut paths: Vec<Vec<String>> = vec![Vec::new(); count];
    let mut stray = false;
    // An explicit stack: parsed input is at most 128 deep, but a stack costs nothing here.
    let mut stack: Vec<(&Value, String)> = vec![(value, "$".to_string())];
    while let Some((node, path)) = stack.pop() {
        match node {
            Value::String(text) => {
                if let Some(number) = text.strip_prefix(SENTINEL_PREFIX) {
                    match number.parse::<usize>().ok().filter(|n| *n < count) {
                        Some(n) => paths[n].push(path),
                        None => stray = true,
                    }
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    stack.push((item, index_path(&path, index)));
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    stack.push((item, child_path(&path, key)));
                }
            }
            _ => {}
        }
    }
    paths
        .into_iter()
        .map(|mut found| {
            if found.len() == 1 && !stray {
                found.pop()
            } else {
                None
            }
        })
        .collect()
}

fn parse_error_violation(error: &serde_json::Error) -> Violation {
    let (line, column) = (error.line(), error.column());
    // serde_json appends " at line L column C"; the position is restated in our own words.
    let full = error.to_string();
    let suffix = format!(" at line {line} column {column}");
    let detail = full.strip_suffix(&suffix).unwrap_or(&full);
    if detail.contains("recursion limit exceeded") {
        Violation {
            path: "$".to_string(),
            rule: RuleId::NestingTooDeep,
            message: format!(
                "the JSON nests deeper than {MAX_NESTING_DEPTH} levels (line {line}, column {column}); \
                 a real artifact nests at most a handful of levels, so this is not an artifact"
            ),
        }
    } else if detail.contains("number out of range") {
        Violation {
            path: "$".to_string(),
            rule: RuleId::NonFiniteNumber,
            message: format!(
                "a number at line {line}, column {column} is too large for a double (it would read \
                 as infinity); artifacts must hold only finite numbers"
            ),
        }
    } else {
        Violation {
            path: "$".to_string(),
            rule: RuleId::InvalidJson,
            message: format!(
                "the file is not valid JSON: {detail} at line {line}, column {column}; check that \
                 it is an artifact written by anvil-serving or strobe and was not truncated"
            ),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Value helpers.
// ---------------------------------------------------------------------------------------------

/// A non-bool JSON integer (Python `int`, not `float`), widened so u64 and i64 both fit.
fn as_int(value: &Value) -> Option<i128> {
    match value {
        Value::Number(number) => number
            .as_i64()
            .map(i128::from)
            .or_else(|| number.as_u64().map(i128::from)),
        _ => None,
    }
}

/// A non-bool JSON number as f64 (serde_json never holds a non-finite one).
fn as_number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(number) => number.as_f64(),
        _ => None,
    }
}

/// Present and not null.
fn present<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    map.get(key).filter(|value| !value.is_null())
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(flag) => format!("the boolean {flag}"),
        Value::Number(number) => {
            if number.is_f64() {
                format!("the float {number}")
            } else {
                format!("the integer {number}")
            }
        }
        Value::String(_) => format!("the string {}", show(value)),
        Value::Array(items) => format!("an array of {} items", items.len()),
        Value::Object(map) => format!("an object with {} keys", map.len()),
    }
}

/// A short rendering of a value for messages; long strings and containers are abbreviated so
/// hostile input cannot blow up a report.
fn show(value: &Value) -> String {
    const LIMIT: usize = 60;
    match value {
        Value::String(text) => {
            if text.chars().count() > LIMIT {
                let head: String = text.chars().take(LIMIT).collect();
                format!("{}… ({} chars)", Value::String(head), text.chars().count())
            } else {
                Value::String(text.clone()).to_string()
            }
        }
        Value::Array(items) => format!("[…{} items]", items.len()),
        Value::Object(map) => format!("{{…{} keys}}", map.len()),
        other => other.to_string(),
    }
}

fn show_opt(value: Option<&Value>) -> String {
    value.map_or_else(|| "missing".to_string(), show)
}

fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some(first) if first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn child_path(parent: &str, key: &str) -> String {
    if is_identifier(key) {
        format!("{parent}.{key}")
    } else {
        format!("{parent}[{}]", Value::String(key.to_string()))
    }
}

fn index_path(parent: &str, index: usize) -> String {
    format!("{parent}[{index}]")
}

// ---------------------------------------------------------------------------------------------
// The checks.
// ---------------------------------------------------------------------------------------------

fn run_checks(value: &Value, suppressed: &HashSet<String>) -> Report {
    let generation = detect_generation(value);
    let mut checker = Checker {
        generation,
        violations: Vec::new(),
    };
    match value.as_object() {
        Some(artifact) => checker.check_artifact(artifact),
        None => checker.push(
            "$",
            RuleId::NotAnObject,
            format!(
                "an artifact must be a JSON object, but this is {}",
                describe(value)
            ),
        ),
    }
    let mut violations = checker.violations;
    if !suppressed.is_empty() {
        // A NaN token already has its own violation; a type error at the same spot is noise.
        violations.retain(|violation| !suppressed.contains(&violation.path));
    }
    Report::from_violations(generation, violations)
}

/// Top-level facts the row checks need, read once.
struct RowContext {
    canaries: Option<bool>,
    policy: Option<String>,
    policy_valid: bool,
    response_words: Option<i128>,
}

struct Checker {
    generation: Generation,
    violations: Vec<Violation>,
}

const TIMING_MS_FIELDS: [&str; 10] = [
    "time_to_first_output_ms",
    "ttft_ms",
    "generation_ms",
    "visible_generation_ms",
    "e2e_ms",
    "effective_prefill_tok_s",
    "decode_tok_s",
    "mean_inter_token_latency_ms",
    "mean_time_per_output_token_ms",
    "tpot_ms",
];

const FAILURE_CLASSES: [&str; 5] = [
    "request_error",
    "stream_validation_failed",
    "request_canary_failed",
    "controlled_output_failed",
    "runner_error",
];

/// Distribution families checked by report.py, with their unit suffix (§7.1 key naming).
const DISTRIBUTION_FAMILIES: [(&str, &str); 7] = [
    ("ttft", "_ms"),
    ("e2e", "_ms"),
    ("tpot", "_ms"),
    ("decode_tok_s", ""),
    ("effective_prefill_tok_s", ""),
    ("prompt_tokens", ""),
    ("completion_tokens", ""),
];

const ORDERED_STATISTICS: [&str; 8] = ["min", "p25", "p50", "p75", "p90", "p95", "p99", "max"];

impl Checker {
    fn push(&mut self, path: impl Into<String>, rule: RuleId, message: String) {
        self.violations.push(Violation {
            path: path.into(),
            rule,
            message,
        });
    }

    fn check_artifact(&mut self, artifact: &Map<String, Value>) {
        self.check_structure(artifact);
        self.check_counts(artifact);
        if self.generation == Generation::Modern {
            self.check_modern_fields(artifact);
        }
        if let Some(sampling) = artifact.get("sampling") {
            self.check_sampling(sampling);
        }
        // Also checks controlled_output_policy, for every generation.
        let context = self.row_context(artifact);
        let rows = self.check_timing_rows(artifact, &context);
        let failure_indexes = self.check_failures(artifact);
        if let Some(rows) = rows {
            self.check_index_coverage(artifact, rows, &failure_indexes);
            self.check_output_token_sum(artifact, rows);
        }
        self.check_metric_scalars(artifact);
        self.check_time(artifact);
        self.check_identifiers(artifact);
        self.check_distributions(artifact);
        self.check_context_within_max(artifact);
    }

    fn check_structure(&mut self, artifact: &Map<String, Value>) {
        match artifact.get("schema") {
            Some(Value::String(schema)) if schema == SCHEMA => {}
            other => self.push(
                "$.schema",
                RuleId::SchemaMismatch,
                format!(
                    "schema must be \"{SCHEMA}\", found {}; this is not a capacity benchmark artifact",
                    show_opt(other)
                ),
            ),
        }
        for (key, rule) in [
            ("metrics", RuleId::MetricsNotObject),
            ("serve_flags", RuleId::ServeFlagsNotObject),
        ] {
            match artifact.get(key) {
                Some(Value::Object(_)) => {}
                Some(other) => self.push(
                    format!("$.{key}"),
                    rule,
                    format!("{key} must be an object, found {}", describe(other)),
                ),
                None => self.push(
                    format!("$.{key}"),
                    rule,
                    format!("{key} is missing; every generation records it as an object"),
                ),
            }
        }
    }

    /// Checks an integer field with a minimum; returns its value when well-formed.
    fn int_field(
        &mut self,
        map: &Map<String, Value>,
        base: &str,
        key: &str,
        minimum: i128,
        rule: RuleId,
    ) -> Option<i128> {
        let path = child_path(base, key);
        match map.get(key) {
            None => {
                self.push(
                    path,
                    rule,
                    format!("{key} is missing; it must be an integer ≥ {minimum}"),
                );
                None
            }
            Some(value) => match as_int(value) {
                Some(number) if number >= minimum => Some(number),
                Some(number) => {
                    self.push(
                        path,
                        rule,
                        format!("{key} must be ≥ {minimum}, found {number}"),
                    );
                    None
                }
                None => {
                    self.push(
                        path,
                        rule,
                        format!(
                            "{key} must be an integer ≥ {minimum}, found {}",
                            describe(value)
                        ),
                    );
                    None
                }
            },
        }
    }

    /// Like [`Checker::int_field`] but absent and null are allowed.
    fn optional_int_field(
        &mut self,
        map: &Map<String, Value>,
        base: &str,
        key: &str,
        minimum: i128,
        rule: RuleId,
    ) -> Option<i128> {
        present(map, key)?;
        self.int_field(map, base, key, minimum, rule)
    }

    fn check_counts(&mut self, artifact: &Map<String, Value>) {
        let requests = self.int_field(artifact, "$", "requests", 1, RuleId::CountField);
        let completed = self.int_field(artifact, "$", "completed", 0, RuleId::CountField);
        let failed = if self.generation.has_failure_counts() || artifact.contains_key("failed") {
            self.int_field(artifact, "$", "failed", 0, RuleId::CountField)
        } else {
            None
        };
        self.int_field(artifact, "$", "concurrency", 1, RuleId::CountField);
        if let (Some(requests), Some(completed), Some(failed)) = (requests, completed, failed) {
            if completed + failed != requests {
                self.push(
                    "$.completed",
                    RuleId::CountsAddUp,
                    format!(
                        "completed ({completed}) + failed ({failed}) = {} but requests is {requests}; \
                         every request must end as a result or a failure",
                        completed + failed
                    ),
                );
            }
        }
        if let Some(value) = present(artifact, "performance_eligible") {
            if !value.is_boolean() {
                self.push(
                    "$.performance_eligible",
                    RuleId::PerformanceEligibleType,
                    format!(
                        "performance_eligible must be true, false or null, found {}",
                        describe(value)
                    ),
                );
            }
        }
        for (key, minimum) in [
            ("context_tokens", 0),
            ("max_context_tokens", 1),
            ("max_tokens", 1),
            ("response_words", 0),
        ] {
            self.optional_int_field(artifact, "$", key, minimum, RuleId::PlanIntegerField);
        }
        if let Some(seed) = present(artifact, "context_seed") {
            if as_int(seed).is_none() {
                self.push(
                    "$.context_seed",
                    RuleId::PlanIntegerField,
                    format!(
                        "context_seed must be an integer or null, found {}",
                        describe(seed)
                    ),
                );
            }
        }
        match artifact.get("wall_clock_ms") {
            None if !self.generation.has_timings() => {}
            None => self.push(
                "$.wall_clock_ms",
                RuleId::WallClockMs,
                "wall_clock_ms is missing; artifacts with timing rows record it".to_string(),
            ),
            Some(value) => match as_number(value) {
                Some(wall) if wall >= 0.0 => {}
                _ => self.push(
                    "$.wall_clock_ms",
                    RuleId::WallClockMs,
                    format!(
                        "wall_clock_ms must be a finite number ≥ 0, found {}",
                        describe(value)
                    ),
                ),
            },
        }
    }

    fn check_modern_fields(&mut self, artifact: &Map<String, Value>) {
        match artifact.get("prompt_cache_mode").and_then(Value::as_str) {
            Some("shared" | "unique") => {}
            _ => self.push(
                "$.prompt_cache_mode",
                RuleId::PromptCacheMode,
                format!(
                    "prompt_cache_mode must be \"shared\" or \"unique\", found {}",
                    show_opt(artifact.get("prompt_cache_mode"))
                ),
            ),
        }
        if let Some(value) = artifact.get("request_canaries") {
            if !value.is_boolean() {
                self.push(
                    "$.request_canaries",
                    RuleId::RequestCanariesType,
                    format!(
                        "request_canaries must be true or false, found {}",
                        describe(value)
                    ),
                );
            }
        }
        for key in ["engine", "model"] {
            match artifact.get(key) {
                Some(Value::String(name)) if !name.is_empty() => {}
                other => self.push(
                    format!("$.{key}"),
                    RuleId::EngineModelNames,
                    format!(
                        "{key} must be a non-empty string, found {}",
                        show_opt(other)
                    ),
                ),
            }
        }
        if let Some(recipe) = present(artifact, "source_recipe") {
            if !recipe.is_string() {
                self.push(
                    "$.source_recipe",
                    RuleId::SourceRecipeType,
                    format!(
                        "source_recipe must be a string or null, found {}",
                        describe(recipe)
                    ),
                );
            }
        }
        // controlled_output_policy is checked for every generation, in `row_context`.
    }

    fn check_sampling(&mut self, sampling: &Value) {
        let Some(entries) = sampling.as_object() else {
            self.push(
                "$.sampling",
                RuleId::SamplingShape,
                format!(
                    "sampling must be an object with temperature and top_p, found {}",
                    describe(sampling)
                ),
            );
            return;
        };
        let unexpected: Vec<&str> = entries
            .keys()
            .map(String::as_str)
            .filter(|key| !["temperature", "top_p"].contains(key))
            .collect();
        if !unexpected.is_empty() {
            self.push(
                "$.sampling",
                RuleId::SamplingShape,
                format!(
                    "sampling must have exactly the keys temperature and top_p; unexpected: {}",
                    unexpected
                        .iter()
                        .map(|key| show(&Value::String((*key).to_string())))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        for key in ["temperature", "top_p"] {
            let path = child_path("$.sampling", key);
            let Some(entry) = entries.get(key) else {
                self.push(
                    path,
                    RuleId::SamplingShape,
                    format!("sampling.{key} is missing"),
                );
                continue;
            };
            let Some(fields) = entry.as_object() else {
                self.push(
                    path,
                    RuleId::SamplingShape,
                    format!(
                        "sampling.{key} must be an object, found {}",
                        describe(entry)
                    ),
                );
                continue;
            };
            let expected = ["requested", "effective_request", "sent"];
            let keys_ok = fields.len() == expected.len()
                && expected.iter().all(|name| fields.contains_key(*name));
            if !keys_ok {
                let found: Vec<String> = fields
                    .keys()
                    .map(|name| show(&Value::String(name.clone())))
                    .collect();
                self.push(
                    path.clone(),
                    RuleId::SamplingShape,
                    format!(
                        "sampling.{key} must have exactly requested, effective_request and sent; found [{}]",
                        found.join(", ")
                    ),
                );
            }
            self.check_sampling_entry(key, &path, fields);
        }
    }

    fn check_sampling_entry(&mut self, key: &str, path: &str, fields: &Map<String, Value>) {
        let in_range = |value: f64| {
            if key == "temperature" {
                (0.0..=2.0).contains(&value)
            } else {
                value > 0.0 && value <= 1.0
            }
        };
        let range_text = if key == "temperature" {
            "0 ≤ x ≤ 2"
        } else {
            "0 < x ≤ 1"
        };
        // Ok(None) = null, Ok(Some(x)) = in-range number, Err(()) = already reported.
        let read = |checker: &mut Checker, name: &str| -> Result<Option<f64>, ()> {
            let field_path = child_path(path, name);
            match fields.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(value) => match as_number(value) {
                    Some(number) if in_range(number) => Ok(Some(number)),
                    Some(number) => {
                        checker.push(
                            field_path,
                            RuleId::SamplingRange,
                            format!("{key}.{name} must satisfy {range_text}, found {number}"),
                        );
                        Err(())
                    }
                    None => {
                        checker.push(
                            field_path,
                            RuleId::SamplingRange,
                            format!(
                                "{key}.{name} must be a finite number or null, found {}",
                                describe(value)
                            ),
                        );
                        Err(())
                    }
                },
            }
        };
        let requested = read(self, "requested");
        let effective = read(self, "effective_request");
        if let (Ok(requested), Ok(effective)) = (requested, effective) {
            let expected = match (key, requested) {
                ("temperature", None) => Some(0.0),
                (_, requested) => requested,
            };
            if effective != expected {
                let shown = |value: Option<f64>| {
                    value.map_or_else(|| "null".to_string(), |v| format!("{v:?}"))
                };
                self.push(
                    child_path(path, "effective_request"),
                    RuleId::SamplingConsistency,
                    format!(
                        "{key}.effective_request is {} but must be {} for requested {}",
                        shown(effective),
                        shown(expected),
                        shown(requested)
                    ),
                );
            }
        }
        let sent_path = child_path(path, "sent");
        match fields.get("sent") {
            None => {}
            Some(Value::Bool(sent)) => {
                let expected = match key {
                    "temperature" => Some(true),
                    _ => requested.ok().map(|requested| requested.is_some()),
                };
                if let Some(expected) = expected {
                    if *sent != expected {
                        let why = if key == "temperature" {
                            "temperature is always sent (0.0 unless requested)".to_string()
                        } else {
                            format!(
                                "top_p is sent only when requested (requested is {})",
                                show_opt(fields.get("requested"))
                            )
                        };
                        self.push(
                            sent_path,
                            RuleId::SamplingConsistency,
                            format!("{key}.sent is {sent} but must be {expected}: {why}"),
                        );
                    }
                }
            }
            Some(other) => self.push(
                sent_path,
                RuleId::SamplingShape,
                format!("{key}.sent must be a boolean, found {}", describe(other)),
            ),
        }
    }

    /// Reads (and checks) the top-level fields that govern row canaries and controlled output.
    fn row_context(&mut self, artifact: &Map<String, Value>) -> RowContext {
        let policy_value = artifact.get("controlled_output_policy");
        let (policy, policy_valid) = match policy_value {
            None | Some(Value::Null) => (None, true),
            Some(Value::String(text)) if text == "observe" || text == "strict" => {
                (Some(text.clone()), true)
            }
            Some(other) => {
                self.push(
                    "$.controlled_output_policy",
                    RuleId::ControlledOutputPolicy,
                    format!("controlled_output_policy must be null, \"observe\" or \"strict\", found {}", show(other)),
                );
                (None, false)
            }
        };
        let response_words = match present(artifact, "response_words") {
            None => Some(0),
            Some(value) => as_int(value).filter(|words| *words >= 0),
        };
        let canaries = match artifact.get("request_canaries") {
            None | Some(Value::Null) => Some(false),
            Some(Value::Bool(flag)) => Some(*flag),
            Some(_) => None,
        };
        RowContext {
            canaries,
            policy,
            policy_valid,
            response_words,
        }
    }

    /// Checks `request_timings`; returns the rows when it is an array.
    fn check_timing_rows<'a>(
        &mut self,
        artifact: &'a Map<String, Value>,
        context: &RowContext,
    ) -> Option<&'a [Value]> {
        let rows = match artifact.get("request_timings") {
            None => {
                if self.generation == Generation::Modern {
                    self.push(
                        "$.request_timings",
                        RuleId::TimingRowsShape,
                        "request_timings is missing; modern artifacts always record it (an empty array when nothing completed)".to_string(),
                    );
                }
                return None;
            }
            Some(Value::Array(rows)) => rows.as_slice(),
            Some(other) => {
                self.push(
                    "$.request_timings",
                    RuleId::TimingRowsShape,
                    format!(
                        "request_timings must be an array, found {}",
                        describe(other)
                    ),
                );
                return None;
            }
        };
        if let Some(completed) = artifact.get("completed").and_then(as_int) {
            if rows.len() as i128 != completed {
                self.push(
                    "$.request_timings",
                    RuleId::TimingRowCount,
                    format!(
                        "request_timings has {} rows but completed is {completed}; every completed request needs exactly one row",
                        rows.len()
                    ),
                );
            }
        }
        for (position, row) in rows.iter().enumerate() {
            let path = index_path("$.request_timings", position);
            match row.as_object() {
                Some(fields) => {
                    self.check_row(&path, fields);
                    self.check_row_canary(&path, fields, context);
                    self.check_row_controlled_output(&path, fields, context);
                }
                None => self.push(
                    path,
                    RuleId::TimingRowsShape,
                    format!("each timing row must be an object, found {}", describe(row)),
                ),
            }
        }
        Some(rows)
    }

    fn check_row(&mut self, path: &str, row: &Map<String, Value>) {
        let modern = self.generation == Generation::Modern;
        self.int_field(row, path, "request_index", 0, RuleId::RowIntegerField);
        match row.get("prompt_tokens") {
            None => self.push(
                child_path(path, "prompt_tokens"),
                RuleId::RowIntegerField,
                "prompt_tokens is missing; it must be an integer ≥ 0 (or null when the server reported no usage)".to_string(),
            ),
            Some(Value::Null) => {}
            Some(_) => {
                self.int_field(row, path, "prompt_tokens", 0, RuleId::RowIntegerField);
            }
        }
        for key in [
            "planned_context_tokens",
            "content_chunks",
            "reasoning_chunks",
        ] {
            if modern || present(row, key).is_some() {
                self.int_field(row, path, key, 0, RuleId::RowIntegerField);
            }
        }
        self.check_row_output_tokens(path, row);

        let mut required = vec!["ttft_ms", "e2e_ms"];
        if modern {
            required.push("time_to_first_output_ms");
        }
        let mut values: HashMap<&str, f64> = HashMap::new();
        for key in TIMING_MS_FIELDS {
            let field_path = child_path(path, key);
            match row.get(key) {
                None | Some(Value::Null) => {
                    if required.contains(&key) {
                        self.push(
                            field_path,
                            RuleId::RowTimingValue,
                            format!(
                                "{key} is {}; it must be a finite number ≥ 0",
                                show_opt(row.get(key))
                            ),
                        );
                    }
                }
                Some(value) => match as_number(value) {
                    Some(number) if number >= 0.0 => {
                        values.insert(key, number);
                    }
                    _ => self.push(
                        field_path,
                        RuleId::RowTimingValue,
                        format!(
                            "{key} must be a finite number ≥ 0, found {}",
                            describe(value)
                        ),
                    ),
                },
            }
        }
        let ttft = values.get("ttft_ms").copied();
        let e2e = values.get("e2e_ms").copied();
        if let (Some(ttfo), Some(ttft)) = (values.get("time_to_first_output_ms").copied(), ttft) {
            if ttfo > ttft {
                self.push(
                    child_path(path, "time_to_first_output_ms"),
                    RuleId::TimingOrder,
                    format!("time_to_first_output_ms ({ttfo}) exceeds ttft_ms ({ttft}); the first output cannot come after the first content"),
                );
            }
        }
        if let (Some(ttft), Some(e2e)) = (ttft, e2e) {
            if ttft > e2e {
                self.push(
                    child_path(path, "ttft_ms"),
                    RuleId::TimingOrder,
                    format!("ttft_ms ({ttft}) exceeds e2e_ms ({e2e}); the first token cannot arrive after the response ended"),
                );
            }
        }
    }

    /// §5: `output_tokens` is the usage count (≥ 1 for a completed request) when the source is
    /// usage or unrecorded, and null for content-chunk or unknown sources.
    fn check_row_output_tokens(&mut self, path: &str, row: &Map<String, Value>) {
        let source_path = child_path(path, "output_token_source");
        let tokens_path = child_path(path, "output_tokens");
        let exact = match row.get("output_token_source") {
            None | Some(Value::Null) => true,
            Some(Value::String(source)) if source == "usage" => true,
            Some(Value::String(source)) if source == "content_chunks" || source == "unknown" => {
                false
            }
            Some(other) => {
                self.push(
                    source_path,
                    RuleId::RowOutputTokens,
                    format!("output_token_source must be \"usage\", \"content_chunks\", \"unknown\" or null, found {}", show(other)),
                );
                return;
            }
        };
        let tokens = row.get("output_tokens");
        if exact {
            match tokens.and_then(as_int) {
                Some(count) if count >= 1 => {}
                _ => self.push(
                    tokens_path,
                    RuleId::RowOutputTokens,
                    format!(
                        "output_tokens must be an integer ≥ 1 for a completed request counted by usage, found {}",
                        show_opt(tokens)
                    ),
                ),
            }
        } else if !matches!(tokens, None | Some(Value::Null)) {
            self.push(
                tokens_path,
                RuleId::RowOutputTokens,
                format!(
                    "output_tokens must be null when output_token_source is {} (only usage counts are exact), found {}",
                    show_opt(row.get("output_token_source")),
                    show_opt(tokens)
                ),
            );
        }
    }

    fn check_row_canary(&mut self, path: &str, row: &Map<String, Value>, context: &RowContext) {
        let Some(canaries) = context.canaries else {
            return; // request_canaries has the wrong type; already reported.
        };
        let canary_path = child_path(path, "request_canary");
        let canary = row.get("request_canary").filter(|value| !value.is_null());
        if !canaries {
            if let Some(canary) = canary {
                self.push(
                    canary_path,
                    RuleId::CanaryUnexpected,
                    format!(
                        "request_canaries is off, so request_canary must be null, found {}",
                        describe(canary)
                    ),
                );
            }
            return;
        }
        let Some(canary) = canary.and_then(Value::as_object) else {
            self.push(
                canary_path,
                RuleId::CanaryRequired,
                format!(
                    "request_canaries is on, so every row needs a request_canary object, found {}",
                    show_opt(row.get("request_canary"))
                ),
            );
            return;
        };
        if canary.get("passed") != Some(&Value::Bool(true)) {
            self.push(
                child_path(&canary_path, "passed"),
                RuleId::CanaryRequired,
                format!(
                    "a completed row's canary must have passed true, found {}; failed canaries belong in failures",
                    show_opt(canary.get("passed"))
                ),
            );
        }
        if context.policy.is_some() || !context.policy_valid {
            let mut missing = Vec::new();
            if canary.get("marker_at_start") != Some(&Value::Bool(true)) {
                missing.push(format!(
                    "marker_at_start is {}",
                    show_opt(canary.get("marker_at_start"))
                ));
            }
            if canary.get("foreign_marker_count").and_then(as_int) != Some(0) {
                missing.push(format!(
                    "foreign_marker_count is {}",
                    show_opt(canary.get("foreign_marker_count"))
                ));
            }
            if canary.get("capture_complete") != Some(&Value::Bool(true)) {
                missing.push(format!(
                    "capture_complete is {}",
                    show_opt(canary.get("capture_complete"))
                ));
            }
            if !missing.is_empty() {
                self.push(
                    canary_path,
                    RuleId::CanaryModernEvidence,
                    format!(
                        "with a controlled_output_policy the canary must show marker_at_start true, foreign_marker_count 0 \
                         and capture_complete true (otherwise it is legacy substring-only evidence): {}",
                        missing.join(", ")
                    ),
                );
            }
        }
    }

    fn check_row_controlled_output(
        &mut self,
        path: &str,
        row: &Map<String, Value>,
        context: &RowContext,
    ) {
        let (Some(words), true) = (context.response_words, context.policy_valid) else {
            return; // response_words or the policy is malformed; already reported.
        };
        let controlled_path = child_path(path, "controlled_output");
        let controlled = row
            .get("controlled_output")
            .filter(|value| !value.is_null());
        let policy = match (&context.policy, words) {
            (Some(policy), words) if words > 0 => policy.as_str(),
            _ => {
                if let Some(controlled) = controlled {
                    self.push(
                        controlled_path,
                        RuleId::ControlledOutputUnexpected,
                        format!(
                            "controlled_output must be null when response_words is 0 or the policy is null \
                             (response_words {words}, policy {}), found {}",
                            context.policy.as_deref().unwrap_or("null"),
                            describe(controlled)
                        ),
                    );
                }
                return;
            }
        };
        let Some(controlled) = controlled.and_then(Value::as_object) else {
            self.push(
                controlled_path,
                RuleId::ControlledOutputShape,
                format!(
                    "with response_words {words} and policy {policy} every row needs a controlled_output object, found {}",
                    show_opt(row.get("controlled_output"))
                ),
            );
            return;
        };
        let mut shape_ok = true;
        if controlled.get("policy").and_then(Value::as_str) != Some(policy) {
            shape_ok = false;
            self.push(
                child_path(&controlled_path, "policy"),
                RuleId::ControlledOutputShape,
                format!("controlled_output.policy must equal the artifact's policy \"{policy}\", found {}", show_opt(controlled.get("policy"))),
            );
        }
        match self.int_field(
            controlled,
            &controlled_path,
            "requested_words",
            1,
            RuleId::ControlledOutputShape,
        ) {
            Some(requested) if requested != words => {
                shape_ok = false;
                self.push(
                    child_path(&controlled_path, "requested_words"),
                    RuleId::ControlledOutputShape,
                    format!("controlled_output.requested_words is {requested} but the artifact's response_words is {words}"),
                );
            }
            Some(_) => {}
            None => shape_ok = false,
        }
        let code = self.int_field(
            controlled,
            &controlled_path,
            "observed_code_words",
            0,
            RuleId::ControlledOutputShape,
        );
        let extra = self.int_field(
            controlled,
            &controlled_path,
            "observed_extra_words",
            0,
            RuleId::ControlledOutputShape,
        );
        let complete = self.bool_field(controlled, &controlled_path, "capture_complete", false);
        let exact = self.bool_field(controlled, &controlled_path, "exact_adherence", true);
        let passed = self.bool_field(controlled, &controlled_path, "passed", false);
        let (Some(code), Some(extra), Some(Some(complete)), Some(exact)) =
            (code, extra, complete, exact)
        else {
            return;
        };
        if !shape_ok {
            return;
        }
        let expected_exact = complete.then_some(code == words && extra == 0);
        let shown =
            |value: Option<bool>| value.map_or_else(|| "null".to_string(), |flag| flag.to_string());
        if exact != expected_exact {
            self.push(
                child_path(&controlled_path, "exact_adherence"),
                RuleId::ControlledOutputAdherence,
                format!(
                    "exact_adherence is {} but the observations ({code} code words, {extra} extra, capture complete {complete}) give {}",
                    shown(exact),
                    shown(expected_exact)
                ),
            );
        }
        if let Some(Some(passed)) = passed {
            let expected_passed = if policy == "strict" {
                exact == Some(true)
            } else {
                true
            };
            if passed != expected_passed {
                self.push(
                    child_path(&controlled_path, "passed"),
                    RuleId::ControlledOutputPassed,
                    format!("passed is {passed} but under policy {policy} with exact_adherence {} it must be {expected_passed}", shown(exact)),
                );
            }
        }
        if policy == "strict" && (!complete || exact != Some(true)) {
            self.push(
                controlled_path,
                RuleId::ControlledOutputStrict,
                format!(
                    "under the strict policy a completed row needs a complete capture with exact adherence \
                     (capture_complete {complete}, exact_adherence {}); such a response belongs in failures",
                    shown(exact)
                ),
            );
        }
    }

    /// A bool field of a controlled-output object; `Some(None)` is an allowed null.
    fn bool_field(
        &mut self,
        map: &Map<String, Value>,
        base: &str,
        key: &str,
        nullable: bool,
    ) -> Option<Option<bool>> {
        match map.get(key) {
            Some(Value::Bool(flag)) => Some(Some(*flag)),
            Some(Value::Null) if nullable => Some(None),
            other => {
                let allowed = if nullable {
                    "true, false or null"
                } else {
                    "true or false"
                };
                self.push(
                    child_path(base, key),
                    RuleId::ControlledOutputShape,
                    format!("{key} must be {allowed}, found {}", show_opt(other)),
                );
                None
            }
        }
    }

    /// Checks `failures`; returns `(position, request_index)` of every well-formed entry.
    fn check_failures(&mut self, artifact: &Map<String, Value>) -> Vec<(usize, i128)> {
        let mut indexes = Vec::new();
        let failures = match artifact.get("failures") {
            None => return indexes,
            Some(Value::Array(failures)) => failures,
            Some(other) => {
                self.push(
                    "$.failures",
                    RuleId::FailureShape,
                    format!("failures must be an array, found {}", describe(other)),
                );
                return indexes;
            }
        };
        for (position, failure) in failures.iter().enumerate() {
            let path = index_path("$.failures", position);
            let Some(fields) = failure.as_object() else {
                self.push(
                    path,
                    RuleId::FailureShape,
                    format!(
                        "each failure must be an object, found {}",
                        describe(failure)
                    ),
                );
                continue;
            };
            if let Some(index) =
                self.int_field(fields, &path, "request_index", 0, RuleId::FailureShape)
            {
                indexes.push((position, index));
            }
            if let Some(class) = fields.get("failure_class") {
                if !class
                    .as_str()
                    .is_some_and(|text| FAILURE_CLASSES.contains(&text))
                {
                    self.push(
                        child_path(&path, "failure_class"),
                        RuleId::FailureShape,
                        format!(
                            "failure_class must be one of {}, found {}",
                            FAILURE_CLASSES.join(", "),
                            show(class)
                        ),
                    );
                }
            }
            for key in ["error_type", "error_message"] {
                if let Some(value) = fields.get(key) {
                    if !value.is_string() {
                        self.push(
                            child_path(&path, key),
                            RuleId::FailureShape,
                            format!("{key} must be a string, found {}", describe(value)),
                        );
                    }
                }
            }
            for key in ["error_message_truncated", "response_received"] {
                if let Some(value) = fields.get(key) {
                    if !value.is_boolean() {
                        self.push(
                            child_path(&path, key),
                            RuleId::FailureShape,
                            format!("{key} must be true or false, found {}", describe(value)),
                        );
                    }
                }
            }
            if let Some(value) = fields.get("performance_eligible") {
                if value != &Value::Bool(false) {
                    self.push(
                        child_path(&path, "performance_eligible"),
                        RuleId::FailureShape,
                        format!("a failure is never performance eligible; performance_eligible must be false, found {}", show(value)),
                    );
                }
            }
            if let Some(value) = fields.get("elapsed_ms") {
                if !as_number(value).is_some_and(|elapsed| elapsed >= 0.0) {
                    self.push(
                        child_path(&path, "elapsed_ms"),
                        RuleId::FailureShape,
                        format!(
                            "elapsed_ms must be a finite number ≥ 0, found {}",
                            describe(value)
                        ),
                    );
                }
            }
            if present(fields, "planned_context_tokens").is_some() {
                self.int_field(
                    fields,
                    &path,
                    "planned_context_tokens",
                    0,
                    RuleId::FailureShape,
                );
            }
            for key in ["response_timing", "response_metadata"] {
                if let Some(value) = present(fields, key) {
                    if !value.is_object() {
                        self.push(
                            child_path(&path, key),
                            RuleId::FailureShape,
                            format!("{key} must be an object or null, found {}", describe(value)),
                        );
                    }
                }
            }
        }
        indexes
    }

    fn check_index_coverage(
        &mut self,
        artifact: &Map<String, Value>,
        rows: &[Value],
        failures: &[(usize, i128)],
    ) {
        let row_indexes: Vec<(usize, i128)> = rows
            .iter()
            .enumerate()
            .filter_map(|(position, row)| {
                row.get("request_index")
                    .and_then(as_int)
                    .filter(|i| *i >= 0)
                    .map(|i| (position, i))
            })
            .collect();
        let failed = artifact.get("failed").and_then(as_int).unwrap_or(0);
        let zero_failure_form = failures.is_empty() && failed == 0;
        let (upper, upper_name) = if zero_failure_form {
            (artifact.get("completed").and_then(as_int), "completed")
        } else {
            (artifact.get("requests").and_then(as_int), "requests")
        };
        let mut first_seen: HashMap<i128, String> =
            HashMap::with_capacity(row_indexes.len() + failures.len());
        let labelled = row_indexes
            .iter()
            .map(|(position, index)| (index_path("$.request_timings", *position), *index))
            .chain(
                failures
                    .iter()
                    .map(|(position, index)| (index_path("$.failures", *position), *index)),
            );
        for (path, index) in labelled {
            let index_field = child_path(&path, "request_index");
            if let Some(earlier) = first_seen.get(&index) {
                self.push(
                    index_field,
                    RuleId::IndexCoverage,
                    format!("request_index {index} is already used by {earlier}; each request must appear exactly once"),
                );
                continue;
            }
            if let Some(upper) = upper {
                if index >= upper {
                    let form = if zero_failure_form {
                        format!(
                            "with zero failures indexes must be exactly 0..{upper_name}−1 (0..{})",
                            upper - 1
                        )
                    } else {
                        format!("indexes must lie in 0..{upper_name}−1 (0..{})", upper - 1)
                    };
                    self.push(
                        index_field,
                        RuleId::IndexCoverage,
                        format!("request_index {index} is out of range: {form}"),
                    );
                }
            }
            first_seen.insert(index, path);
        }
        let Some(upper) = upper else { return };
        let mut seen: Vec<i128> = first_seen
            .keys()
            .copied()
            .filter(|index| *index < upper)
            .collect();
        seen.sort_unstable();
        let mut gaps: Vec<(i128, i128)> = Vec::new();
        let mut expected = 0;
        for index in seen.iter().copied().chain(std::iter::once(upper)) {
            if index > expected {
                gaps.push((expected, index - 1));
            }
            expected = index + 1;
        }
        if gaps.is_empty() {
            return;
        }
        let missing: i128 = gaps.iter().map(|(low, high)| high - low + 1).sum();
        let mut listed: Vec<String> = gaps
            .iter()
            .take(8)
            .map(|(low, high)| {
                if low == high {
                    low.to_string()
                } else {
                    format!("{low}–{high}")
                }
            })
            .collect();
        if gaps.len() > 8 {
            listed.push("…".to_string());
        }
        let message = if zero_failure_form {
            format!(
                "with zero failures the row indexes must be exactly 0..completed−1, but {missing} are missing: {}",
                listed.join(", ")
            )
        } else {
            format!(
                "row and failure indexes together must cover 0..requests−1, but {missing} requests are neither a row nor a failure: {}",
                listed.join(", ")
            )
        };
        self.push("$.request_timings", RuleId::IndexCoverage, message);
    }

    fn check_output_token_sum(&mut self, artifact: &Map<String, Value>, rows: &[Value]) {
        let Some(recorded_value) = artifact
            .get("metrics")
            .and_then(|metrics| present(metrics.as_object()?, "output_tokens"))
        else {
            return;
        };
        let Some(recorded) = as_int(recorded_value) else {
            return; // The type error is reported by `check_metric_scalars`.
        };
        let mut sum: i128 = 0;
        let mut inexact = Vec::new();
        for (position, row) in rows.iter().enumerate() {
            match row.get("output_tokens").and_then(as_int) {
                Some(tokens) => sum += tokens,
                None => inexact.push(position),
            }
        }
        if !inexact.is_empty() {
            let listed: Vec<String> = inexact.iter().take(8).map(usize::to_string).collect();
            self.push(
                "$.metrics.output_tokens",
                RuleId::OutputTokensSum,
                format!(
                    "metrics.output_tokens is {recorded} but rows {} have no exact output_tokens; it must be null unless every row is counted by usage",
                    listed.join(", ")
                ),
            );
        } else if sum != recorded {
            self.push(
                "$.metrics.output_tokens",
                RuleId::OutputTokensSum,
                format!(
                    "metrics.output_tokens is {recorded} but the rows' output_tokens sum to {sum}"
                ),
            );
        }
    }

    fn check_metric_scalars(&mut self, artifact: &Map<String, Value>) {
        let Some(metrics) = artifact.get("metrics").and_then(Value::as_object) else {
            return;
        };
        if let Some(value) = present(metrics, "output_tokens") {
            if as_int(value).is_none_or(|tokens| tokens < 0) {
                self.push(
                    "$.metrics.output_tokens",
                    RuleId::OutputTokensSum,
                    format!(
                        "metrics.output_tokens must be an integer ≥ 0 or null, found {}",
                        describe(value)
                    ),
                );
            }
        }
        if let Some(value) = present(metrics, "throughput_tok_s") {
            if !as_number(value).is_some_and(|rate| rate >= 0.0) {
                self.push(
                    "$.metrics.throughput_tok_s",
                    RuleId::ThroughputValue,
                    format!(
                        "throughput_tok_s must be a finite number ≥ 0 or null, found {}",
                        describe(value)
                    ),
                );
            }
        }
    }

    fn check_time(&mut self, artifact: &Map<String, Value>) {
        let started_ns = present(artifact, "started_at_unix_ns");
        let finished_ns = present(artifact, "finished_at_unix_ns");
        let has_ns = started_ns.is_some() || finished_ns.is_some();
        let mut labels: [Option<i64>; 2] = [None, None];
        for (slot, key) in ["started_at", "finished_at"].into_iter().enumerate() {
            let path = format!("$.{key}");
            match present(artifact, key) {
                None => {
                    if has_ns {
                        self.push(
                            path,
                            RuleId::IsoTimestamp,
                            format!(
                                "{key} is {}; it is required next to the nanosecond fields",
                                show_opt(artifact.get(key))
                            ),
                        );
                    }
                }
                Some(Value::String(label)) => match parse_iso8601(label) {
                    Ok(parsed) => match parsed.unix_seconds() {
                        None => self.push(
                            path,
                            RuleId::IsoTimestamp,
                            format!(
                                "{key} {} has no timezone; write it in UTC with a trailing Z",
                                show(&Value::String(label.clone()))
                            ),
                        ),
                        Some(_) if parsed.microsecond != 0 => self.push(
                            path,
                            RuleId::IsoTimestamp,
                            format!(
                                "{key} {} has {} microseconds; ISO labels are whole seconds",
                                show(&Value::String(label.clone())),
                                parsed.microsecond
                            ),
                        ),
                        Some(seconds) => labels[slot] = Some(seconds),
                    },
                    Err(error) => self.push(path, RuleId::IsoTimestamp, format!("{key}: {error}")),
                },
                Some(other) => self.push(
                    path,
                    RuleId::IsoTimestamp,
                    format!(
                        "{key} must be an ISO-8601 string, found {}",
                        describe(other)
                    ),
                ),
            }
        }
        if !has_ns {
            return;
        }
        let read_ns = |checker: &mut Checker, key: &str, value: Option<&Value>| -> Option<i128> {
            match value.and_then(as_int) {
                Some(ns) if ns >= 0 => Some(ns),
                _ => {
                    checker.push(
                        format!("$.{key}"),
                        RuleId::NanosecondFields,
                        format!(
                            "{key} is {}; when either nanosecond field exists both must be integers ≥ 0",
                            show_opt(value)
                        ),
                    );
                    None
                }
            }
        };
        let started = read_ns(self, "started_at_unix_ns", started_ns);
        let finished = read_ns(self, "finished_at_unix_ns", finished_ns);
        let (Some(started), Some(finished)) = (started, finished) else {
            return;
        };
        if finished < started {
            self.push(
                "$.finished_at_unix_ns",
                RuleId::NanosecondFields,
                format!(
                    "finished_at_unix_ns ({finished}) is before started_at_unix_ns ({started})"
                ),
            );
            return;
        }
        for ((key, ns), label) in [("started_at", started), ("finished_at", finished)]
            .into_iter()
            .zip(labels)
        {
            if let Some(label_seconds) = label {
                let ns_seconds = ns.div_euclid(1_000_000_000);
                if ns_seconds != i128::from(label_seconds) {
                    self.push(
                        format!("$.{key}_unix_ns"),
                        RuleId::NanosecondIsoSecond,
                        format!(
                            "{key}_unix_ns {ns} falls in Unix second {ns_seconds}, but {key} {} is second {label_seconds}",
                            show_opt(artifact.get(key))
                        ),
                    );
                }
            }
        }
        // A negative wall is already a `wall-clock-ms` violation; comparing it would only echo it.
        let wall = artifact
            .get("wall_clock_ms")
            .and_then(as_number)
            .filter(|wall| *wall >= 0.0);
        if let Some(wall) = wall {
            // Python: (finished − started) / 1_000_000.0 converts the int difference to a float.
            let interval_ms = (finished - started) as f64 / 1_000_000.0;
            let tolerance = WALL_TOLERANCE_MIN_MS.max(wall * WALL_TOLERANCE_RELATIVE);
            let delta = (interval_ms - wall).abs();
            if delta > tolerance {
                self.push(
                    "$.wall_clock_ms",
                    RuleId::WallClockReconciliation,
                    format!(
                        "the nanosecond interval is {interval_ms} ms but wall_clock_ms is {wall}: they differ by {delta} ms, more than the tolerance of {tolerance} ms"
                    ),
                );
            }
        }
    }

    fn check_identifiers(&mut self, artifact: &Map<String, Value>) {
        if let Some(value) = present(artifact, "clock_domain_id") {
            let ok = value.as_str().is_some_and(is_clock_domain_id);
            if !ok {
                self.push(
                    "$.clock_domain_id",
                    RuleId::ClockDomainId,
                    format!(
                        "clock_domain_id must match [A-Za-z0-9._-]{{1,64}}, found {}",
                        show(value)
                    ),
                );
            }
        }
        if let Some(value) = present(artifact, "configuration_fingerprint") {
            let ok = value.as_str().is_some_and(is_configuration_fingerprint);
            if !ok {
                self.push(
                    "$.configuration_fingerprint",
                    RuleId::ConfigurationFingerprint,
                    format!("configuration_fingerprint must be \"sha256:\" followed by 64 lowercase hex digits, found {}", show(value)),
                );
            }
        }
    }

    fn check_distributions(&mut self, artifact: &Map<String, Value>) {
        let Some(metrics) = artifact.get("metrics").and_then(Value::as_object) else {
            return;
        };
        for (family, suffix) in DISTRIBUTION_FAMILIES {
            let read = |checker: &mut Checker, statistic: &str| -> Option<(String, f64)> {
                let key = format!("{family}_{statistic}{suffix}");
                let value = present(metrics, &key)?;
                let path = child_path("$.metrics", &key);
                match as_number(value) {
                    Some(number) if number >= 0.0 => Some((key, number)),
                    _ => {
                        checker.push(
                            path,
                            RuleId::DistributionValue,
                            format!(
                                "{key} must be a finite number ≥ 0 or null, found {}",
                                describe(value)
                            ),
                        );
                        None
                    }
                }
            };
            let mut previous: Option<(String, f64)> = None;
            let mut chain: Vec<(String, f64)> = Vec::new();
            for statistic in ORDERED_STATISTICS {
                if let Some((key, number)) = read(self, statistic) {
                    if let Some((previous_key, previous_number)) = &previous {
                        if number < *previous_number {
                            self.push(
                                child_path("$.metrics", &key),
                                RuleId::DistributionOrder,
                                format!("{key} ({number}) is below {previous_key} ({previous_number}); percentiles must not decrease from min to max"),
                            );
                        }
                    }
                    chain.push((key.clone(), number));
                    previous = Some((key, number));
                }
            }
            read(self, "stddev");
            if let Some((mean_key, mean)) = read(self, "mean") {
                let min = chain
                    .iter()
                    .find(|(key, _)| key == &format!("{family}_min{suffix}"));
                let max = chain
                    .iter()
                    .find(|(key, _)| key == &format!("{family}_max{suffix}"));
                let below = min.filter(|(_, min)| mean < *min);
                let above = max.filter(|(_, max)| mean > *max);
                if let Some((key, bound)) = below.or(above) {
                    self.push(
                        child_path("$.metrics", &mean_key),
                        RuleId::DistributionOrder,
                        format!("{mean_key} ({mean}) lies outside [min, max]: it is on the wrong side of {key} ({bound})"),
                    );
                }
            }
        }
    }

    fn check_context_within_max(&mut self, artifact: &Map<String, Value>) {
        let context = artifact.get("context_tokens").and_then(as_int);
        let max = artifact.get("max_context_tokens").and_then(as_int);
        if let (Some(context), Some(max)) = (context, max) {
            if context > max {
                self.push(
                    "$.context_tokens",
                    RuleId::ContextWithinMax,
                    format!("context_tokens ({context}) exceeds max_context_tokens ({max})"),
                );
            }
        }
    }
}

/// `[A-Za-z0-9._-]{1,64}`, the public-safe clock domain syntax.
pub fn is_clock_domain_id(text: &str) -> bool {
    (1..=64).contains(&text.len())
        && text
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-'))
}

/// `sha256:` followed by exactly 64 lowercase hex digits.
pub fn is_configuration_fingerprint(text: &str) -> bool {
    text.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
    })
}

// ---------------------------------------------------------------------------------------------
// ISO-8601 labels.
// ---------------------------------------------------------------------------------------------

/// Why an ISO-8601 label could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IsoLabelError {
    /// The text does not have the `YYYY-MM-DDTHH:MM[:SS[.f]][Z|±HH[:MM]]` shape.
    #[error(
        "{label:?} is not an ISO-8601 date-time ({reason}); write it like 2026-10-05T11:42:24Z"
    )]
    Malformed {
        /// The offending label.
        label: String,
        /// Which part could not be read.
        reason: &'static str,
    },
    /// A field is out of its calendar range (month 13, 24:00, February 30…).
    #[error("{label:?} has an out-of-range {field}; check the date and time")]
    OutOfRange {
        /// The offending label.
        label: String,
        /// The field that is out of range.
        field: &'static str,
    },
}

/// An ISO-8601 date-time as Python's `datetime.fromisoformat` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IsoLabel {
    /// The written civil date-time as seconds since 1970-01-01T00:00:00, ignoring any offset.
    pub civil_seconds: i64,
    /// The UTC offset in seconds, or `None` for a naive label without a timezone.
    pub utc_offset_seconds: Option<i64>,
    /// Microseconds of the written fraction (digits beyond the sixth are ignored, as in Python).
    pub microsecond: u32,
}

impl IsoLabel {
    /// Whole Unix seconds (floor), or `None` for a naive label.
    pub fn unix_seconds(&self) -> Option<i64> {
        self.utc_offset_seconds
            .map(|offset| self.civil_seconds - offset)
    }
}

/// Days from 1970-01-01 to the given proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

/// Reads an ISO-8601 date-time: `YYYY-MM-DD`, then `T` or a space, `HH:MM[:SS[.fraction]]`,
/// then optionally `Z` or `±HH[:MM[:SS]]` / `±HHMM`. This is the subset of Python 3.11's
/// `fromisoformat` that artifact writers produce.
pub fn parse_iso8601(label: &str) -> Result<IsoLabel, IsoLabelError> {
    let malformed = |reason| IsoLabelError::Malformed {
        label: label.to_string(),
        reason,
    };
    let out_of_range = |field| IsoLabelError::OutOfRange {
        label: label.to_string(),
        field,
    };
    let bytes = label.as_bytes();
    let mut cursor = Cursor { bytes, position: 0 };
    let year = cursor
        .digits(4)
        .ok_or_else(|| malformed("expected a four-digit year"))?;
    cursor
        .expect(b'-')
        .ok_or_else(|| malformed("expected '-' after the year"))?;
    let month = cursor
        .digits(2)
        .ok_or_else(|| malformed("expected a two-digit month"))?;
    cursor
        .expect(b'-')
        .ok_or_else(|| malformed("expected '-' after the month"))?;
    let day = cursor
        .digits(2)
        .ok_or_else(|| malformed("expected a two-digit day"))?;
    if !matches!(cursor.next(), Some(b'T' | b' ')) {
        return Err(malformed("expected 'T' between the date and the time"));
    }
    let hour = cursor
        .digits(2)
        .ok_or_else(|| malformed("expected a two-digit hour"))?;
    cursor
        .expect(b':')
        .ok_or_else(|| malformed("expected ':' after the hour"))?;
    let minute = cursor
        .digits(2)
        .ok_or_else(|| malformed("expected two-digit minutes"))?;
    let mut second = 0;
    let mut microsecond = 0;
    if cursor.peek() == Some(b':') {
        cursor.position += 1;
        second = cursor
            .digits(2)
            .ok_or_else(|| malformed("expected two-digit seconds"))?;
        if matches!(cursor.peek(), Some(b'.' | b',')) {
            cursor.position += 1;
            let start = cursor.position;
            while cursor.peek().is_some_and(|byte| byte.is_ascii_digit()) {
                cursor.position += 1;
            }
            let fraction = &bytes[start..cursor.position];
            if fraction.is_empty() {
                return Err(malformed("expected digits after the decimal point"));
            }
            for place in 0..6 {
                let digit = fraction.get(place).map_or(0, |byte| u32::from(byte - b'0'));
                microsecond = microsecond * 10 + digit;
            }
        }
    }
    let utc_offset_seconds = match cursor.next() {
        None => None,
        Some(b'Z') => Some(0),
        Some(sign @ (b'+' | b'-')) => {
            let hours = cursor
                .digits(2)
                .ok_or_else(|| malformed("expected a two-digit offset hour"))?;
            let mut minutes = 0;
            let mut seconds = 0;
            if cursor.peek() == Some(b':') {
                cursor.position += 1;
                minutes = cursor
                    .digits(2)
                    .ok_or_else(|| malformed("expected two-digit offset minutes"))?;
                if cursor.peek() == Some(b':') {
                    cursor.position += 1;
                    seconds = cursor
                        .digits(2)
                        .ok_or_else(|| malformed("expected two-digit offset seconds"))?;
                }
            } else if cursor.peek().is_some_and(|byte| byte.is_ascii_digit()) {
                minutes = cursor
                    .digits(2)
                    .ok_or_else(|| malformed("expected two-digit offset minutes"))?;
            }
            if minutes > 59 || seconds > 59 {
                return Err(out_of_range("UTC offset"));
            }
            let total = hours * 3600 + minutes * 60 + seconds;
            if total >= 86_400 {
                return Err(out_of_range("UTC offset"));
            }
            Some(if sign == b'-' { -total } else { total })
        }
        Some(_) => return Err(malformed("unexpected text after the time")),
    };
    if cursor.peek().is_some() {
        return Err(malformed("unexpected text after the timezone"));
    }
    if year < 1 {
        return Err(out_of_range("year"));
    }
    let month = u32::try_from(month)
        .ok()
        .filter(|m| (1..=12).contains(m))
        .ok_or_else(|| out_of_range("month"))?;
    let day = u32::try_from(day)
        .ok()
        .filter(|d| *d >= 1 && *d <= days_in_month(year, month))
        .ok_or_else(|| out_of_range("day"))?;
    if hour > 23 {
        return Err(out_of_range("hour"));
    }
    if minute > 59 {
        return Err(out_of_range("minute"));
    }
    if second > 59 {
        return Err(out_of_range("second"));
    }
    let civil_seconds =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    Ok(IsoLabel {
        civil_seconds,
        utc_offset_seconds,
        microsecond,
    })
}

struct Cursor<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.position).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.position += 1;
        Some(byte)
    }

    fn expect(&mut self, wanted: u8) -> Option<()> {
        (self.next()? == wanted).then_some(())
    }

    /// Exactly `count` ASCII digits as a number.
    fn digits(&mut self, count: usize) -> Option<i64> {
        let slice = self.bytes.get(self.position..self.position + count)?;
        if !slice.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.position += count;
        Some(
            slice
                .iter()
                .fold(0, |total, byte| total * 10 + i64::from(byte - b'0')),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_kebab_case_and_round_trip() {
        let mut seen = HashSet::new();
        for rule in RuleId::ALL {
            let id = rule.id();
            assert!(seen.insert(id), "duplicate id {id}");
            assert!(
                id.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
                    && !id.starts_with('-')
                    && !id.ends_with('-'),
                "{id} is not kebab-case"
            );
            assert_eq!(RuleId::from_id(id), Some(rule));
            assert_eq!(rule.to_string(), id);
        }
        assert_eq!(RuleId::from_id("no-such-rule"), None);
    }

    /// Expected day counts from Python: `(date(y, m, d) - date(1970, 1, 1)).days`.
    #[test]
    fn days_from_civil_matches_python() {
        let vectors = [
            ((1970, 1, 1), 0),
            ((1969, 12, 31), -1),
            ((2000, 2, 29), 11_016),
            ((2026, 10, 5), 20_731),
            ((1, 1, 1), -719_162),
            ((9999, 12, 31), 2_932_896),
            ((2024, 3, 1), 19_783),
            ((1600, 2, 29), -135_081),
        ];
        for ((year, month, day), days) in vectors {
            assert_eq!(
                days_from_civil(year, month, day),
                days,
                "{year}-{month}-{day}"
            );
        }
    }

    /// Expected seconds and microseconds from Python 3.11:
    /// `datetime.fromisoformat(s.replace("Z", "+00:00"))`, then `.timestamp()` / `.microsecond`.
    #[test]
    fn iso_labels_parse_like_python_fromisoformat() {
        let vectors = [
            ("2026-10-05T11:42:24Z", 1_791_200_544, 0),
            ("2026-10-05T11:42:24+00:00", 1_791_200_544, 0),
            ("2026-10-05 13:42:24.000+02:00", 1_791_200_544, 0),
            ("2026-10-05T06:12:24-0530", 1_791_200_544, 0),
            ("2026-10-05T11:42:24.5Z", 1_791_200_544, 500_000),
            ("2026-10-05T11:42:24.1234567Z", 1_791_200_544, 123_456),
            ("2026-10-05T11:42Z", 1_791_200_520, 0),
            ("2026-10-05T11:42:24+05", 1_791_182_544, 0),
        ];
        for (label, seconds, microsecond) in vectors {
            let parsed = parse_iso8601(label).unwrap_or_else(|error| panic!("{label}: {error}"));
            assert_eq!(parsed.unix_seconds(), Some(seconds), "{label}");
            assert_eq!(parsed.microsecond, microsecond, "{label}");
        }
    }

    #[test]
    fn iso_labels_without_timezone_are_naive() {
        let parsed = parse_iso8601("2026-10-05T11:42:24").expect("parses");
        assert_eq!(parsed.utc_offset_seconds, None);
        assert_eq!(parsed.unix_seconds(), None);
    }

    #[test]
    fn malformed_or_out_of_range_iso_labels_are_errors() {
        for label in [
            "",
            "yesterday",
            "2026-10-05",
            "2026-10-05T11",
            "2026-1-05T11:42:24Z",
            "2026-10-05T11:42:24.Z",
            "2026-10-05T11:42:24Zjunk",
            "2026-10-05T11:42:24 UTC",
            "२०२६-10-05T11:42:24Z",
        ] {
            assert!(
                matches!(parse_iso8601(label), Err(IsoLabelError::Malformed { .. })),
                "{label:?} should be malformed"
            );
        }
        for label in [
            "2026-13-05T11:42:24Z",
            "2026-02-29T11:42:24Z",
            "2026-10-05T24:00:00Z",
            "2026-10-05T11:60:00Z",
            "2026-10-05T11:42:60Z",
            "0000-01-01T00:00:00Z",
            "2026-10-05T11:42:24+24:00",
        ] {
            assert!(
                matches!(parse_iso8601(label), Err(IsoLabelError::OutOfRange { .. })),
                "{label:?} should be out of range"
            );
        }
        assert!(
            parse_iso8601("2024-02-29T00:00:00Z").is_ok(),
            "2024 is a leap year"
        );
    }

    #[test]
    fn non_finite_tokens_are_found_outside_strings_only() {
        // Columns count characters, so the two-byte é is one column.
        let text = "{\"a\": NaN,\n \"b\": \"NaN \\\" Infinity\",\n  \"é\": [-Infinity, Infinity]}";
        let tokens = find_non_finite_tokens(text);
        let found: Vec<_> = tokens.iter().map(|t| (t.token, t.line, t.column)).collect();
        assert_eq!(
            found,
            vec![("NaN", 1, 7), ("-Infinity", 3, 9), ("Infinity", 3, 20)]
        );
        assert!(find_non_finite_tokens("{\"x\": NaNo, \"y\": xNaN}").is_empty());
    }

    #[test]
    fn sentinel_substitution_keeps_the_rest_of_the_document() {
        let text = "{\"a\": [1, NaN], \"b\": -Infinity}";
        let tokens = find_non_finite_tokens(text);
        let replaced = replace_tokens_with_sentinels(text, &tokens);
        let value: Value = serde_json::from_str(&replaced).expect("parses");
        assert_eq!(
            locate_sentinels(&value, tokens.len()),
            vec![Some("$.a[1]".to_string()), Some("$.b".to_string())]
        );
    }

    #[test]
    fn a_literal_sentinel_in_hostile_input_is_not_trusted() {
        let text = "{\"a\": NaN, \"b\": \"\\u0001strobe-non-finite-token:0\"}";
        let report = validate_artifact_text(text);
        assert!(
            report.has_violation(RuleId::NonFiniteNumber, "$"),
            "{report}"
        );
    }

    #[test]
    fn paths_quote_keys_that_are_not_identifiers() {
        assert_eq!(child_path("$", "ttft_ms"), "$.ttft_ms");
        assert_eq!(
            child_path("$.context_distribution", "65536"),
            "$.context_distribution[\"65536\"]"
        );
        assert_eq!(child_path("$", "a \"b\""), "$[\"a \\\"b\\\"\"]");
        assert_eq!(index_path("$.request_timings", 3), "$.request_timings[3]");
    }

    #[test]
    fn shown_values_are_bounded() {
        let long = Value::String("x".repeat(10_000));
        let shown = show(&long);
        assert!(shown.len() < 100, "{shown}");
        assert!(shown.ends_with("(10000 chars)"));
        assert_eq!(show(&json!([1, 2, 3])), "[…3 items]");
        assert_eq!(describe(&json!(1.0)), "the float 1.0");
        assert_eq!(describe(&json!(true)), "the boolean true");
    }

    #[test]
    fn identifier_patterns() {
        assert!(is_clock_domain_id("lab-a.rack_2"));
        assert!(!is_clock_domain_id(""));
        assert!(!is_clock_domain_id("é"));
        assert!(is_configuration_fingerprint(&format!(
            "sha256:{}",
            "a".repeat(64)
        )));
        assert!(!is_configuration_fingerprint(&format!(
            "sha256:{}",
            "a".repeat(63)
        )));
        assert!(!is_configuration_fingerprint(&format!(
            "sha256:{}g",
            "a".repeat(63)
        )));
    }

    #[test]
    fn integers_and_floats_are_told_apart() {
        assert_eq!(as_int(&json!(5)), Some(5));
        assert_eq!(as_int(&json!(u64::MAX)), Some(i128::from(u64::MAX)));
        assert_eq!(as_int(&json!(5.0)), None);
        assert_eq!(as_int(&json!(true)), None);
        assert_eq!(as_number(&json!(false)), None);
    }

    #[test]
    fn verdicts_follow_generation_and_violations() {
        let legacy = Report::from_violations(Generation::G3, Vec::new());
        assert_eq!(legacy.verdict, Verdict::ValidLegacy(Generation::G3));
        assert_eq!(legacy.verdict.to_string(), "valid (legacy g3)");
        let modern = Report::from_violations(Generation::Modern, Vec::new());
        assert_eq!(modern.verdict, Verdict::Valid);
        let violation = Violation {
            path: "$".to_string(),
            rule: RuleId::NotAnObject,
            message: "m".to_string(),
        };
        let invalid = Report::from_violations(Generation::Modern, vec![violation]);
        assert_eq!(invalid.verdict, Verdict::Invalid);
        assert!(!invalid.is_acceptable());
    }

    #[test]
    fn garbage_never_panics() {
        for text in [
            "",
            "{",
            "}",
            "[",
            "null",
            "0",
            "\"x\"",
            "-",
            "NaN",
            "{\"schema\":",
            "\u{feff}",
        ] {
            let report = validate_artifact_text(text);
            assert_eq!(report.verdict, Verdict::Invalid, "{text:?}");
        }
    }
}
