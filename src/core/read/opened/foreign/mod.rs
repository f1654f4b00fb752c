//! Results files of other benchmark tools, read into the rows and numbers the library charts and
//! compares: `vllm bench serve --save-result --save-detailed` ([`vllm`]), GuideLLM's JSON report
//! ([`guidellm`]) and AIPerf's `profile_export.jsonl` and `profile_export_aiperf.json`
//! ([`aiperf`]).
//!
//! Each tool's metric is mapped to strobe's meaning, or kept apart: every run records a
//! [`Definition`] per quantity (what the tool's number measures in strobe's terms, and whether it
//! is strobe's), which the run's notes show and the comparison flags when two runs measured a
//! quantity differently (docs/guide/results.md, *Other tools' files*). The tool's own summary
//! numbers are kept under their own names ([`ToolAggregate`]). Formats are told apart by content,
//! never by file name; a file of none of them is left to the artifact reader.

pub mod aiperf;
pub mod convert;
mod fields;
pub mod guidellm;
pub mod unavailable;
pub mod vllm;

use std::fmt;

use serde_json::Value;

use crate::core::python::stats::{exact_mean, fmean, nearest_rank};
use crate::core::read::opened::load::{LoadView, SweepView};
use crate::core::read::opened::metrics::{KeyMetrics, MetricSummary};
use crate::core::read::opened::text::CappedText;
use crate::core::read::opened::views::{FailureView, RowView, RunIdentity, WorkloadView};

use unavailable::{OwnFigure, Unavailable};

/// What strobe reads besides its own artifacts, for the message of a file it cannot read.
pub const KNOWN_FORMATS: &str = "strobe and anvil artifacts (anvil-serving.benchmark/v1 and its \
     older generations), vLLM `bench serve --save-result` JSON (with `--save-detailed` for \
     per-request rows), a GuideLLM JSON report, AIPerf's `profile_export.jsonl` or \
     `profile_export_aiperf.json`, and the records of a strobe plan run on Locust's workers \
     (`worker-*.jsonl`, dropped together)";

/// A benchmark tool whose files strobe reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tool {
    /// `vllm bench serve`.
    Vllm,
    /// GuideLLM (`guidellm benchmark` / `guidellm run`).
    GuideLlm,
    /// NVIDIA AIPerf (`aiperf profile`).
    AiPerf,
}

impl Tool {
    /// The tool's name as its users write it.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Vllm => "vLLM",
            Tool::GuideLlm => "GuideLLM",
            Tool::AiPerf => "AIPerf",
        }
    }

    /// The tool named by its id.
    pub fn named(id: &str) -> Option<Tool> {
        [Tool::Vllm, Tool::GuideLlm, Tool::AiPerf]
            .into_iter()
            .find(|tool| tool.id() == id)
    }

    /// How the tool's numbers relate to strobe's, one definition per quantity.
    pub fn definitions(self) -> Vec<Definition> {
        match self {
            Tool::Vllm => vllm::definitions(),
            Tool::GuideLlm => guidellm::definitions(),
            Tool::AiPerf => aiperf::definitions(),
        }
    }

    /// Which of the tool's aggregates stand for strobe's numbers a conversion cannot give
    /// ([`unavailable`]).
    pub(crate) fn own_figures(self) -> &'static [OwnFigure] {
        match self {
            Tool::Vllm => vllm::OWN_FIGURES,
            Tool::GuideLlm => guidellm::OWN_FIGURES,
            Tool::AiPerf => aiperf::OWN_FIGURES,
        }
    }

    /// How the tool computes its percentiles.
    pub fn percentile_method(self) -> &'static str {
        match self {
            Tool::Vllm => vllm::PERCENTILE_METHOD,
            Tool::GuideLlm => guidellm::PERCENTILE_METHOD,
            Tool::AiPerf => aiperf::PERCENTILE_METHOD,
        }
    }

    /// Stable id: `vllm`, `guidellm`, `aiperf`.
    pub fn id(self) -> &'static str {
        match self {
            Tool::Vllm => "vllm",
            Tool::GuideLlm => "guidellm",
            Tool::AiPerf => "aiperf",
        }
    }
}

/// Why a file of a known tool's shape could not be read: the field and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignError {
    /// The tool whose file it looked like.
    pub tool: Tool,
    /// The field, as a path (`ttfts[3]`, `benchmarks[0].requests.successful[2].request_latency`).
    pub field: String,
    /// What is wrong, and what the tool writes there instead.
    pub reason: String,
}

impl fmt::Display for ForeignError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "this looks like a {} file, but `{}` {}; nothing of it is shown",
            self.tool.name(),
            self.field,
            self.reason
        )
    }
}

impl std::error::Error for ForeignError {}

/// A quantity whose definition differs between tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Quantity {
    /// Time to the first output (reasoning or content).
    Ttfo,
    /// Time to the first content token.
    Ttft,
    /// Request latency, start to end.
    E2e,
    /// Time per output token after the first.
    Tpot,
    /// Prompt token counts.
    PromptTokens,
    /// Output token counts.
    OutputTokens,
}

impl Quantity {
    /// Every quantity, in the order notes list them.
    pub const ALL: [Quantity; 6] = [
        Quantity::Ttfo,
        Quantity::Ttft,
        Quantity::E2e,
        Quantity::Tpot,
        Quantity::PromptTokens,
        Quantity::OutputTokens,
    ];

    /// strobe's name of the quantity.
    pub fn label(self) -> &'static str {
        match self {
            Quantity::Ttfo => "TTFO",
            Quantity::Ttft => "TTFT",
            Quantity::E2e => "E2E",
            Quantity::Tpot => "TPOT",
            Quantity::PromptTokens => "prompt tokens",
            Quantity::OutputTokens => "output tokens",
        }
    }

    /// The comparison's field name for a difference in its definition, e.g. `definition: TTFO`.
    pub fn mismatch_field(self) -> &'static str {
        match self {
            Quantity::Ttfo => "definition: TTFO",
            Quantity::Ttft => "definition: TTFT",
            Quantity::E2e => "definition: E2E",
            Quantity::Tpot => "definition: TPOT",
            Quantity::PromptTokens => "definition: prompt tokens",
            Quantity::OutputTokens => "definition: output tokens",
        }
    }

    /// strobe's definition, for the comparison's explanation.
    pub fn strobe_meaning(self) -> &'static str {
        match self {
            Quantity::Ttfo => "request start to the first reasoning or content chunk",
            Quantity::Ttft => "request start to the first content chunk",
            Quantity::E2e => "request start to the end of the stream",
            Quantity::Tpot => "(E2E − TTFO) / (output tokens − 1)",
            Quantity::PromptTokens => "the server's usage.prompt_tokens",
            Quantity::OutputTokens => "the server's usage.completion_tokens",
        }
    }
}

/// How one run's file defines a quantity, in strobe's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    /// The quantity.
    pub quantity: Quantity,
    /// The tool's own name and field for it, e.g. "vLLM's TTFT (`ttfts`)"; empty when the file
    /// has no such number.
    pub tool_term: &'static str,
    /// What it measures, in strobe's terms.
    pub meaning: &'static str,
    /// True when it is strobe's definition exactly.
    pub same_as_strobe: bool,
}

/// One of the tool's own summary numbers, under its own name.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolAggregate {
    /// The tool's key, e.g. `median_ttft_ms` or `time_to_first_token.p50`.
    pub name: String,
    /// The value.
    pub value: f64,
}

/// Where a run read from another tool's file came from, and how its numbers are defined.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignSource {
    /// The tool.
    pub tool: Tool,
    /// Its version, when the file records one.
    pub version: Option<CappedText>,
    /// Which of the tool's files this was, e.g. "`bench serve` result with per-request arrays".
    pub file_kind: &'static str,
    /// How the tool computes its percentiles, when not by nearest rank as strobe does.
    pub percentile_method: &'static str,
    /// One definition per quantity, in [`Quantity::ALL`] order.
    pub definitions: Vec<Definition>,
    /// The tool's own summary numbers (finite ones), in file order.
    pub aggregates: Vec<ToolAggregate>,
    /// Of a file `strobe-artifact convert` wrote, the numbers the tool's file gives but the
    /// conversion cannot, with why ([`unavailable`]); empty for the tool's own file.
    pub unavailable: Vec<Unavailable>,
}

impl ForeignSource {
    /// "vLLM 0.33.0", or "vLLM (version not recorded)".
    pub fn tool_and_version(&self) -> String {
        match &self.version {
            Some(version) => format!("{} {version}", self.tool.name()),
            None => format!("{} (version not recorded)", self.tool.name()),
        }
    }

    /// The definition this run's file gives `quantity`.
    pub fn definition(&self, quantity: Quantity) -> Option<&Definition> {
        self.definitions
            .iter()
            .find(|definition| definition.quantity == quantity)
    }

    /// The tool's own summary number `name`, when the file has it.
    pub fn aggregate(&self, name: &str) -> Option<f64> {
        self.aggregates
            .iter()
            .find(|aggregate| aggregate.name == name)
            .map(|aggregate| aggregate.value)
    }

    /// What the run's notes say: the tool and file, then each quantity that is not strobe's.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = vec![format!(
            "Read as {}: {}. strobe's statistics are recomputed from its rows by nearest rank; \
             the tool's own summary is kept under its own names ({}).",
            self.tool_and_version(),
            self.file_kind,
            self.percentile_method
        )];
        for definition in &self.definitions {
            if definition.same_as_strobe {
                continue;
            }
            let term = if definition.tool_term.is_empty() {
                String::new()
            } else {
                format!("{}: ", definition.tool_term)
            };
            notes.push(format!(
                "{} here — {term}{}.",
                definition.quantity.label(),
                definition.meaning
            ));
        }
        notes
    }
}

/// A run read from another tool's file: everything the library shows of an artifact.
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignRun {
    /// The tool, version and definitions.
    pub source: ForeignSource,
    /// Model, endpoint and date.
    pub identity: RunIdentity,
    /// Requests, completions, failures, concurrency, wall time.
    pub workload: WorkloadView,
    /// The arrival rate and burstiness of a rate-driven run.
    pub load: Option<LoadView>,
    /// One row per successful request.
    pub rows: Vec<RowView>,
    /// One entry per failed or unfinished request.
    pub failures: Vec<FailureView>,
    /// Headline numbers: from the rows when the file has them, else the tool's own summary
    /// mapped where its definition allows.
    pub metrics: KeyMetrics,
    /// What tells this run apart from others of the same file (a GuideLLM benchmark's
    /// strategy), for its label.
    pub part: Option<String>,
    /// The sweep it is a step of: a GuideLLM report of several benchmarks is one sweep, so its
    /// benchmarks form one curve of the capacity view.
    pub sweep: Option<SweepView>,
}

/// The tool whose file `value` is, by its content; `None` for anything else (an anvil or
/// strobe artifact included).
pub fn detect(value: &Value) -> Option<Tool> {
    let object = value.as_object()?;
    if object.contains_key("schema") || object.contains_key("request_timings") {
        return None;
    }
    if vllm::looks_like(object) {
        return Some(Tool::Vllm);
    }
    if guidellm::looks_like(object) {
        return Some(Tool::GuideLlm);
    }
    if aiperf::looks_like_summary(object) {
        return Some(Tool::AiPerf);
    }
    None
}

/// Reads a parsed JSON file of another tool: `None` when it is none of theirs, else its runs
/// (a GuideLLM report holds one per benchmark) or why they cannot be read.
pub fn read_json(value: &Value) -> Option<Result<Vec<ForeignRun>, ForeignError>> {
    let tool = detect(value)?;
    let object = value.as_object()?;
    Some(match tool {
        Tool::Vllm => vllm::read(object).map(|run| vec![run]),
        Tool::GuideLlm => guidellm::read(object),
        Tool::AiPerf => aiperf::read_summary(object).map(|run| vec![run]),
    })
}

/// Reads a file's text as another tool's results: one JSON value ([`read_json`]) or AIPerf's
/// JSON lines ([`read_json_lines`]); `None` when it is none of theirs.
pub fn read_text(text: &str) -> Option<Result<Vec<ForeignRun>, ForeignError>> {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => read_parsed(&value, text),
        Err(_) => read_json_lines(text),
    }
}

/// [`read_json`] of `value`, parsed from `text`; when `value` is one AIPerf record alone (one
/// JSON value too), the records of `text`. Nothing is parsed again for any other value.
pub fn read_parsed(value: &Value, text: &str) -> Option<Result<Vec<ForeignRun>, ForeignError>> {
    read_json(value).or_else(|| {
        aiperf::is_record(value).then(|| aiperf::read_records(text).map(|run| vec![run]))
    })
}

/// Reads a text that is not one JSON value: AIPerf's JSON lines, one record per request.
/// `None` when its first line is no AIPerf record.
pub fn read_json_lines(text: &str) -> Option<Result<Vec<ForeignRun>, ForeignError>> {
    aiperf::looks_like_records(text).then(|| aiperf::read_records(text).map(|run| vec![run]))
}

/// An AIPerf run's two exports read together: the rows of `profile_export.jsonl` with the
/// version, configuration and statistics of `profile_export_aiperf.json`.
pub fn read_aiperf_pair(records: &str, summary: &str) -> Result<ForeignRun, ForeignError> {
    let records = aiperf::read_records(records)?;
    let value: Value = serde_json::from_str(summary).map_err(|error| ForeignError {
        tool: Tool::AiPerf,
        field: "profile_export_aiperf.json".to_owned(),
        reason: format!("is not JSON ({error})"),
    })?;
    let object = value
        .as_object()
        .filter(|object| aiperf::looks_like_summary(object))
        .ok_or_else(|| ForeignError {
            tool: Tool::AiPerf,
            field: "profile_export_aiperf.json".to_owned(),
            reason: "is not AIPerf's summary (no `aiperf_version` or `input_config`)".to_owned(),
        })?;
    let summary = aiperf::read_summary(object)?;
    if !aiperf::belong_together(&records, &summary) {
        return Err(ForeignError {
            tool: Tool::AiPerf,
            field: "profile_export_aiperf.json".to_owned(),
            reason: format!(
                "counts {} requests where profile_export.jsonl holds {}: they are of different \
                 runs",
                summary.workload.requests.unwrap_or_default(),
                records.rows.len() + records.failures.len()
            ),
        });
    }
    Ok(aiperf::with_summary(records, &summary))
}

/// The `source` block of an artifact `strobe-artifact convert` wrote: the tool, its version and
/// summary, and the tool's definitions as strobe knows them. `None` for any other artifact.
pub fn source_of_artifact(value: &Value) -> Option<ForeignSource> {
    let source = value.get("source")?.as_object()?;
    let tool = Tool::named(source.get("tool")?.as_str()?)?;
    let aggregates = source
        .get("aggregates")
        .and_then(Value::as_object)
        .map(|aggregates| {
            aggregates
                .iter()
                .filter_map(|(name, value)| {
                    let value = value.as_f64().filter(|value| value.is_finite())?;
                    Some(ToolAggregate {
                        name: CappedText::new(name).to_string(),
                        value,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Some(ForeignSource {
        tool,
        version: source
            .get("version")
            .and_then(Value::as_str)
            .map(CappedText::new),
        file_kind: "an artifact `strobe-artifact convert` wrote from its results",
        percentile_method: tool.percentile_method(),
        definitions: tool.definitions(),
        aggregates,
        unavailable: unavailable::from_json(source.get("unavailable")),
    })
}

/// A successful request as a tool recorded it, in ms and counts, before strobe derives the rest.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ToolRow {
    pub(crate) request_index: u64,
    pub(crate) started_at_ms: Option<f64>,
    pub(crate) prompt_tokens: Option<u64>,
    pub(crate) cached_tokens: Option<u64>,
    pub(crate) output_tokens: Option<u64>,
    pub(crate) output_token_source: &'static str,
    pub(crate) ttfo_ms: Option<f64>,
    pub(crate) ttft_ms: Option<f64>,
    pub(crate) e2e_ms: f64,
    pub(crate) read_gaps_ms: Vec<f64>,
}

impl ToolRow {
    /// The row view, with strobe's derived fields (ARTIFACT.md §5) computed from the tool's
    /// times: generation = E2E − TTFO, TPOT = generation / (output − 1), decode rate its
    /// inverse, prefill rate = prompt tokens / TTFO.
    pub(crate) fn into_view(self, position: usize) -> RowView {
        let first = self.ttfo_ms.or(self.ttft_ms);
        // A tool's first token may trail its end by a rounding error: no negative generation.
        let generation_ms = first.map(|first| (self.e2e_ms - first).max(0.0));
        let decoded = self.output_tokens.map(|tokens| tokens.saturating_sub(1));
        let tpot_ms = match (generation_ms, decoded) {
            (Some(generation), Some(decoded)) if decoded > 0 && generation > 0.0 => {
                Some(generation / decoded as f64)
            }
            _ => None,
        };
        let decode_tok_s = match (generation_ms, decoded) {
            (Some(generation), Some(decoded)) if decoded > 0 && generation > 0.0 => {
                Some(decoded as f64 / (generation / 1000.0))
            }
            _ => None,
        };
        let prefill_tok_s = match (self.prompt_tokens, first) {
            (Some(prompt), Some(first)) if first > 0.0 => Some(prompt as f64 / (first / 1000.0)),
            _ => None,
        };
        RowView {
            position,
            request_index: Some(self.request_index),
            started_at_ms: self.started_at_ms,
            planned_context_tokens: None,
            prompt_tokens: self.prompt_tokens,
            cached_tokens: self.cached_tokens,
            output_tokens: self.output_tokens,
            output_token_source: Some(CappedText::new(self.output_token_source)),
            ttfo_ms: self.ttfo_ms,
            ttft_ms: self.ttft_ms,
            e2e_ms: Some(self.e2e_ms),
            ttfo_from_wire_ms: None,
            ttft_from_wire_ms: None,
            e2e_from_wire_ms: None,
            generation_ms,
            tpot_ms,
            decode_tok_s,
            prefill_tok_s,
            read_gaps_ms: self.read_gaps_ms,
            origin: None,
        }
    }
}

/// A failed request as a tool recorded it.
pub(crate) fn failure_view(
    position: usize,
    request_index: u64,
    class: &str,
    error_type: &str,
    message: &str,
    started_at_ms: Option<f64>,
) -> FailureView {
    FailureView {
        position,
        request_index: Some(request_index),
        failure_class: Some(CappedText::new(class)),
        error_type: Some(CappedText::new(error_type)),
        error_message: Some(CappedText::new(message)),
        elapsed_ms: None,
        started_at_ms,
        response_received: None,
        origin: None,
    }
}

/// strobe's headline numbers of `rows`: nearest-rank p50/p95/p99 and the mean of each metric,
/// output tokens per wall-clock second (none when any request failed, as strobe's own), the
/// mean cached share of the prompt when every row says.
pub(crate) fn metrics_of_rows(
    rows: &[RowView],
    failed: u64,
    wall_seconds: Option<f64>,
) -> KeyMetrics {
    let summary = |values: Vec<f64>| -> MetricSummary {
        let sorted = sorted_finite(values);
        MetricSummary {
            p50: nearest_rank(&sorted, 50),
            p95: nearest_rank(&sorted, 95),
            p99: nearest_rank(&sorted, 99),
            mean: fmean(&sorted),
            samples: (!sorted.is_empty()).then_some(sorted.len() as u64),
            source_prefix: None,
        }
    };
    let column = |read: fn(&RowView) -> Option<f64>| rows.iter().filter_map(read).collect();
    let output_tokens: Option<u64> = rows.iter().map(|row| row.output_tokens).sum();
    let throughput_tok_s = match (output_tokens, wall_seconds) {
        (Some(tokens), Some(seconds)) if failed == 0 && seconds > 0.0 => {
            Some(tokens as f64 / seconds)
        }
        _ => None,
    };
    let fractions: Option<Vec<f64>> = rows
        .iter()
        .map(|row| {
            let cached = row.cached_tokens?;
            let prompt = row.prompt_tokens.filter(|&prompt| prompt > 0)?;
            Some(cached as f64 / prompt as f64)
        })
        .collect();
    KeyMetrics {
        ttfo: summary(column(|row| row.ttfo_ms)),
        ttft: summary(column(|row| row.ttft_ms)),
        e2e: summary(column(|row| row.e2e_ms)),
        tpot: summary(column(|row| row.tpot_ms)),
        decode: summary(column(|row| row.decode_tok_s)),
        prefill: summary(column(|row| row.prefill_tok_s)),
        throughput_tok_s,
        // The artifact's own rule (ARTIFACT.md §7.2): the exact mean of the cached shares.
        prefix_cache_hit_avg: fractions
            .filter(|all| !all.is_empty())
            .and_then(|all| exact_mean(&all)),
        output_tokens,
    }
}

/// The finite ones of `values`, ascending.
fn sorted_finite(values: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut sorted: Vec<f64> = values
        .into_iter()
        .filter(|value| value.is_finite())
        .collect();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// The percentile of `values` by linear interpolation between closest ranks (numpy's default,
/// which vLLM and AIPerf use): the tool's own figure, for checking a mapping against the file.
pub fn linear_percentile(values: &[f64], percent: f64) -> Option<f64> {
    let sorted = sorted_finite(values.iter().copied());
    if sorted.is_empty() || !(0.0..=100.0).contains(&percent) {
        return None;
    }
    let position = percent / 100.0 * (sorted.len() - 1) as f64;
    let lower = position.floor() as usize;
    let upper = position.ceil() as usize;
    let fraction = position - lower as f64;
    Some(sorted[lower] + (sorted[upper] - sorted[lower]) * fraction)
}

/// The percentile of `values` as GuideLLM computes it: the sorted value at index ⌊p·n⌋
/// (clamped to the last).
pub fn floor_index_percentile(values: &[f64], percent: f64) -> Option<f64> {
    let sorted = sorted_finite(values.iter().copied());
    if sorted.is_empty() || !(0.0..=100.0).contains(&percent) {
        return None;
    }
    let index = ((percent / 100.0) * sorted.len() as f64).floor() as usize;
    sorted.get(index.min(sorted.len() - 1)).copied()
}

#[cfg(test)]
mod tests;
