//! The vocabulary of validation: the tolerances the rules share, every rule's id, a violation,
//! and the report with its verdict. The schema string and the four generations are the
//! artifact's own ([`crate::core::schema::generation`]), named here too for the rules.

use std::fmt;

use serde_json::{json, Value};

pub use crate::core::schema::generation::{detect_generation, Generation, SCHEMA};
use std::collections::BTreeSet;

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
    /// strobe addition (docs/spec/converted.md): a `repeat` block is an object with a
    /// non-empty `group_id` string, an integer `count` of 1 to 20 and an integer `index` of 0
    /// to `count − 1`.
    RepeatBlock,
    /// strobe addition (docs/guide/workloads.md): a `workload` block has only the keys strobe
    /// writes (never a prompt), its spellings and ranges, and counts that agree.
    WorkloadBlock,
    /// strobe addition: every row and failure of a workload file's run records its `workload`
    /// origin within the block's counts, one record per session, turns 0, 1, 2… each once; no
    /// other run's rows carry one.
    WorkloadOrigin,
    /// strobe addition (docs/guide/telemetry.md): a `server_metrics` block names its source without
    /// credentials, an interval of 100 to 60,000 ms and a family, and holds samples in the
    /// order sent with numeric `t_ms`, `latency_ms` ≥ 0 and numeric `values`, and a summary of
    /// numbers (gauges min ≤ mean ≤ max, counters' deltas ≥ 0).
    ServerMetricsBlock,
    /// strobe addition (docs/guide/telemetry.md): a `prefix_cache_reset` block has the shape strobe
    /// writes, a reset URL without credentials, a 2xx status and a latency ≥ 0.
    PrefixCacheResetBlock,
}

impl RuleId {
    /// Every rule, in the order of ARTIFACT.md §9, then strobe's additions.
    pub const ALL: [RuleId; 52] = [
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
        RuleId::RepeatBlock,
        RuleId::WorkloadBlock,
        RuleId::WorkloadOrigin,
        RuleId::ServerMetricsBlock,
        RuleId::PrefixCacheResetBlock,
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
            RuleId::RepeatBlock => "repeat-block",
            RuleId::WorkloadBlock => "workload-block",
            RuleId::WorkloadOrigin => "workload-origin",
            RuleId::ServerMetricsBlock => "server-metrics-block",
            RuleId::PrefixCacheResetBlock => "prefix-cache-reset-block",
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
    /// Not an artifact but another tool's results file that strobe read
    /// (`core::read::opened::foreign`); the artifact rules do not apply to it.
    Foreign,
}

impl Verdict {
    /// Stable id: `valid`, `valid-legacy`, `invalid` or `foreign`.
    pub fn id(self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::ValidLegacy(_) => "valid-legacy",
            Verdict::Invalid => "invalid",
            Verdict::Foreign => "foreign",
        }
    }

    /// True for every verdict but [`Verdict::Invalid`].
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
            Verdict::Foreign => f.write_str("another tool's file"),
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

    pub(crate) fn from_violations(generation: Generation, violations: Vec<Violation>) -> Report {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

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
}
