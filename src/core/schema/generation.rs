//! What an artifact file is, read from its JSON before any rule: the schema string, the
//! generation its shape shows (§10), and whether it was converted from another tool's results.
//! The validator ([`crate::core::read::validate`]) and recomputation both start here.

use serde_json::Value;

/// The only schema string an artifact may carry.
pub const SCHEMA: &str = "anvil-serving.benchmark/v1";

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
    pub(crate) fn has_failure_counts(self) -> bool {
        matches!(self, Generation::G2 | Generation::G3 | Generation::Modern)
    }

    /// At least G3: timing rows and `wall_clock_ms` exist from here on.
    pub(crate) fn has_timings(self) -> bool {
        matches!(self, Generation::G3 | Generation::Modern)
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

/// The tools whose results `strobe-artifact convert` writes as artifacts (`source.tool`).
const CONVERTED_TOOLS: [&str; 3] = ["vllm", "guidellm", "aiperf"];

/// Whether `value` is a converted file: its `source.tool` is `vllm`, `guidellm` or `aiperf`.
pub fn is_converted(value: &Value) -> bool {
    value
        .get("source")
        .and_then(|source| source.get("tool"))
        .and_then(Value::as_str)
        .is_some_and(|tool| CONVERTED_TOOLS.contains(&tool))
}
