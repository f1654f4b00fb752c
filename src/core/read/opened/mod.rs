//! A dropped file as the results pages see it: an artifact validated, then read as far as it can
//! be, or another tool's results ([`foreign`]: vLLM, GuideLLM, AIPerf), or the records of a plan
//! run on Locust's workers ([`locust`]), each read into the same [`OpenedArtifact`].
//!
//! This module owns [`OpenedArtifact`]: the validator's [`Report`] for the file plus everything
//! the charts, the comparison and the exports need, extracted tolerantly from every generation
//! (G1 without rows and with p50/p95 only, G2, G3 rows with 15 keys, modern). Building one never
//! fails: a file that is too large, not UTF-8, not JSON or hostile still yields a value that says
//! so. Every string from the file is kept verbatim as data (the UI renders it as text, never as
//! HTML) and capped in length ([`CappedText`]) so a 10 MB model name cannot blow up a page.
//!
//! [`metrics`] owns [`MetricKind`](metrics::MetricKind), the request-level metrics strobe shows; [`basis`] the time
//! basis a run is shown on;
//! [`views`] the rows, failures and the rest read from a file; [`workload`] the traffic a run
//! sent (its `workload` block, each row's origin); [`repeat`] repeated runs and their groups;
//! [`text`] the capped text. [`foreign`] and [`locust`] read their files into these parts; this
//! file picks the reader by a file's content and stands above them.

use serde_json::Value;
use thiserror::Error;

use crate::core::format::counted;
use crate::core::read::carried::{CarriedError, CarriedFile};
use crate::core::read::opened::distributed::DistributedView;
use crate::core::read::opened::foreign::{read_json_lines, read_parsed, ForeignError, ForeignRun};
use crate::core::read::opened::foreign::{source_of_artifact, ForeignSource, KNOWN_FORMATS};
use crate::core::read::opened::load::{LoadView, SweepView};
use crate::core::read::opened::locust::{import::import_records, LocustError};
use crate::core::read::opened::metrics::{KeyMetrics, TimeBasis};
use crate::core::read::opened::repeat::RepeatView;
use crate::core::read::opened::text::{capped_string, markup_notices, CappedText, LoadNotice};
use crate::core::read::opened::views::{
    finite_f64, ClientView, FailureView, RowView, RunIdentity, SamplingView, SloView, WorkloadView,
};
use crate::core::read::opened::workload::WorkloadBlockView;
use crate::core::read::validate::report::{Generation, Report, Verdict};
use crate::core::read::validate::{validate_artifact, validate_artifact_text};
use crate::core::schema::cache_reset::PrefixCacheResetBlock;
use crate::core::schema::server_metrics::ServerMetricsBlock;

pub mod basis;
pub mod distributed;
pub mod foreign;
pub mod load;
pub mod locust;
pub mod metrics;
pub mod repeat;
pub mod text;
pub mod views;
pub mod workload;

/// Largest artifact text strobe reads (64 MiB). Real artifacts are at most a few MB even with
/// 10,000 rows; beyond this the browser tab would spend seconds and hundreds of MB on one file.
pub const MAX_ARTIFACT_TEXT_BYTES: usize = 64 * 1024 * 1024;

/// Why a file was not read at all (before any JSON rule could apply).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OpenRefusal {
    /// The text is larger than [`MAX_ARTIFACT_TEXT_BYTES`].
    #[error(
        "the file is {bytes} bytes, more than the {limit}-byte limit strobe reads; an artifact \
         is a few MB even with 10,000 requests, so check that this is the artifact JSON and \
         not a trace or a log (Locust workers' records this large import with \
         `strobe-artifact import-locust`)"
    )]
    TooLarge {
        /// Size of the refused text.
        bytes: usize,
        /// [`MAX_ARTIFACT_TEXT_BYTES`].
        limit: usize,
    },
    /// The bytes are not UTF-8, so they cannot be JSON.
    #[error(
        "the file is not UTF-8 text (invalid byte at offset {offset}); artifacts are UTF-8 \
         JSON, so re-save it as UTF-8 or pick the .json artifact itself"
    )]
    NotUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// The file could not be read at all (the browser's reason).
    #[error("the file could not be read: {reason}; try picking it again")]
    Unreadable {
        /// What the browser or the network said.
        reason: String,
    },
    /// The file has the shape of another tool's results, but a field of it is broken.
    #[error("{0}")]
    BrokenForeign(ForeignError),
    /// Locust workers' records that do not make one whole run, or a broken line of one.
    #[error("{0}")]
    BrokenLocust(LocustError),
    /// An HTML file that is no strobe report, or a report whose artifacts cannot be read.
    #[error("{0}")]
    Report(CarriedError),
}

/// A dropped artifact: the validator's verdict plus everything that could be read from it.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenedArtifact {
    /// The file name the user dropped, as data.
    pub file_name: CappedText,
    /// Size of the text in bytes.
    pub text_bytes: usize,
    /// Set when the file was not read at all (too large, not UTF-8).
    pub refusal: Option<OpenRefusal>,
    /// The validator's verdict, generation and every violation.
    pub report: Report,
    /// Things worth a warning that do not make the file invalid.
    pub notices: Vec<LoadNotice>,
    /// Who and what was measured.
    pub identity: RunIdentity,
    /// What the run asked for.
    pub workload: WorkloadView,
    /// strobe's `workload` block: the file (or synthetic prompts on the completions API) the
    /// requests came from, when present.
    pub workload_block: Option<WorkloadBlockView>,
    /// The `metrics` headline numbers.
    pub metrics: KeyMetrics,
    /// `request_timings`, in file order (empty for G1/G2).
    pub rows: Vec<RowView>,
    /// `failures`, in file order.
    pub failures: Vec<FailureView>,
    /// strobe's `client` block, when present.
    pub client: Option<ClientView>,
    /// The `load` block of an open-loop run, when present.
    pub load: Option<LoadView>,
    /// The `sweep` block of a sweep's step, when present.
    pub sweep: Option<SweepView>,
    /// The `repeat` block of one of a group's repeated runs, when present
    /// ([`crate::core::present::repeats`] gathers the groups).
    pub repeat: Option<RepeatView>,
    /// The `slo` block of a run held to an SLO, when present.
    pub slo: Option<SloView>,
    /// `client.from_wire`'s statistics of TTFO, TTFT and E2E from the wire, when the block
    /// holds any.
    pub from_wire: Option<KeyMetrics>,
    /// The basis its times are shown on ([`Self::on_basis`]); as measured when read.
    pub basis: TimeBasis,
    /// The tool, version and metric definitions of a run read from another tool's file.
    pub foreign: Option<ForeignSource>,
    /// The file is JSON of no shape strobe reads (neither an artifact nor another tool's file).
    pub unrecognized: bool,
    /// `client.distributed` of a run carried out by Locust's workers, when present.
    pub distributed: Option<DistributedView>,
    /// strobe's `server_metrics` block, when present and of its shape (the validator names
    /// what is wrong with one that is not).
    pub server_metrics: Option<ServerMetricsBlock>,
    /// strobe's `prefix_cache_reset` block, when present and of its shape: the reset sent
    /// before the run and whether the run started from an empty prefix cache.
    pub prefix_cache_reset: Option<PrefixCacheResetBlock>,
    /// The file it was read from, name and exact text, when one file holds it: what a report
    /// carries so that the run loads again from it ([`crate::core::read::carried`]). None for
    /// a refused file and for a run made of several files (an AIPerf pair).
    pub source: Option<CarriedFile>,
}

impl OpenedArtifact {
    /// Reads raw file bytes: refuses oversized or non-UTF-8 input, then
    /// [`Self::all_from_text`]: one run per artifact, several for another tool's report of
    /// several benchmarks.
    pub fn all_from_bytes(file_name: &str, bytes: &[u8]) -> Vec<Self> {
        match std::str::from_utf8(bytes) {
            Ok(text) if bytes.len() <= MAX_ARTIFACT_TEXT_BYTES => {
                Self::all_from_text(file_name, text)
            }
            _ => vec![Self::from_bytes(file_name, bytes)],
        }
    }

    /// Reads raw file bytes: refuses oversized or non-UTF-8 input, then [`Self::from_text`].
    pub fn from_bytes(file_name: &str, bytes: &[u8]) -> Self {
        if bytes.len() > MAX_ARTIFACT_TEXT_BYTES {
            return Self::refused(
                file_name,
                bytes.len(),
                OpenRefusal::TooLarge {
                    bytes: bytes.len(),
                    limit: MAX_ARTIFACT_TEXT_BYTES,
                },
            );
        }
        match std::str::from_utf8(bytes) {
            Ok(text) => Self::from_text(file_name, text),
            Err(error) => Self::refused(
                file_name,
                bytes.len(),
                OpenRefusal::NotUtf8 {
                    offset: error.valid_up_to(),
                },
            ),
        }
    }

    /// A file refused by its size alone, before reading it (the browser knows the size first,
    /// so a huge file never has to be loaded into memory).
    pub fn too_large(file_name: &str, bytes: usize) -> Self {
        Self::refused(
            file_name,
            bytes,
            OpenRefusal::TooLarge {
                bytes,
                limit: MAX_ARTIFACT_TEXT_BYTES,
            },
        )
    }

    /// An HTML file whose artifacts could not be taken out (it is no strobe report, or a
    /// damaged one), with why.
    pub fn not_a_report(file_name: &str, bytes: usize, error: CarriedError) -> Self {
        Self::refused(file_name, bytes, OpenRefusal::Report(error))
    }

    /// A file whose bytes could not be obtained, with the reason.
    pub fn unreadable(file_name: &str, reason: &str) -> Self {
        Self::refused(
            file_name,
            0,
            OpenRefusal::Unreadable {
                reason: CappedText::new(reason).to_string(),
            },
        )
    }

    /// Validates `text` and reads what it can. Never fails: an unreadable file gives an
    /// invalid report and empty data. Of another tool's report of several benchmarks this is the
    /// first ([`Self::all_from_text`] gives them all).
    pub fn from_text(file_name: &str, text: &str) -> Self {
        let mut all = Self::all_from_text(file_name, text);
        all.truncate(1);
        all.pop()
            .unwrap_or_else(|| Self::unreadable(file_name, "it holds no run"))
    }

    /// Reads `text` as an artifact or, by its content, as another tool's results file
    /// (`core::read::opened::foreign`): every run it holds, or one invalid entry saying why none.
    pub fn all_from_text(file_name: &str, text: &str) -> Vec<Self> {
        let mut all = Self::read_text(file_name, text);
        if all.iter().any(|run| run.refusal.is_none()) {
            let source = CarriedFile::new(file_name, text);
            for run in all.iter_mut().filter(|run| run.refusal.is_none()) {
                run.source = Some(source.clone());
            }
        }
        all
    }

    /// [`Self::all_from_text`] without the source.
    fn read_text(file_name: &str, text: &str) -> Vec<Self> {
        if text.len() > MAX_ARTIFACT_TEXT_BYTES {
            return vec![Self::refused(
                file_name,
                text.len(),
                OpenRefusal::TooLarge {
                    bytes: text.len(),
                    limit: MAX_ARTIFACT_TEXT_BYTES,
                },
            )];
        }
        let foreign = match serde_json::from_str::<Value>(text) {
            Ok(value) => match read_parsed(&value, text) {
                Some(runs) => runs,
                None => return vec![Self::from_value(file_name, text.len(), &value)],
            },
            Err(_) => match read_json_lines(text) {
                Some(runs) => runs,
                None => {
                    return vec![Self::empty(
                        file_name,
                        text.len(),
                        validate_artifact_text(text),
                    )]
                }
            },
        };
        match foreign {
            Ok(runs) => runs
                .into_iter()
                .map(|run| Self::from_foreign(file_name, text.len(), run))
                .collect(),
            Err(error) => vec![Self::refused(
                file_name,
                text.len(),
                OpenRefusal::BrokenForeign(error),
            )],
        }
    }

    /// The run the records of Locust's workers make (docs/operate/locust.md), read as the artifact
    /// [`import_records`] builds from them, or a refusal naming the file and line at fault.
    /// `files` are `(name, text)`; the entry is named after the artifact and the files.
    pub fn from_locust_records(files: &[(String, String)]) -> Self {
        let bytes = files.iter().map(|(_, text)| text.len()).sum();
        let names = match files {
            [only] => only.0.clone(),
            [first, rest @ ..] => format!(
                "{} and {}",
                first.0,
                counted(rest.len() as u64, "more", "more")
            ),
            [] => String::new(),
        };
        let text = import_records(files).and_then(|artifact| {
            artifact
                .to_json_text()
                .map(|text| (artifact.file_name(), text))
                .map_err(|error| LocustError::of_run(error.to_string()))
        });
        match text {
            Ok((name, text)) => {
                let mut opened = Self::from_text(&format!("{name} (from {names})"), &text);
                opened.text_bytes = bytes;
                opened
            }
            Err(error) => Self::refused(&names, bytes, OpenRefusal::BrokenLocust(error)),
        }
    }

    /// A run of another tool's file, named `file › part` when the file holds several.
    pub fn from_foreign(file_name: &str, text_bytes: usize, run: ForeignRun) -> Self {
        let name = match &run.part {
            Some(part) => format!("{file_name} › {part}"),
            None => file_name.to_owned(),
        };
        let report = Report {
            verdict: Verdict::Foreign,
            generation: Generation::Unknown,
            violations: Vec::new(),
        };
        let mut opened = Self::empty(&name, text_bytes, report);
        opened.identity = run.identity;
        opened.workload = run.workload;
        opened.metrics = run.metrics;
        opened.rows = run.rows;
        opened.failures = run.failures;
        opened.load = run.load;
        opened.sweep = run.sweep;
        opened.foreign = Some(run.source);
        opened
    }

    /// The artifact `value` (parsed from `text_bytes` bytes of text).
    fn from_value(file_name: &str, text_bytes: usize, value: &Value) -> Self {
        // Parse once. serde_json rejects exactly what the text-level rules look for (a BOM,
        // NaN/Infinity tokens, numbers out of range, nesting beyond its recursion limit), so
        // when the parse succeeds `validate_artifact` on the value gives the same report as
        // `validate_artifact_text`, without a second parse of a possibly large file.
        let report = validate_artifact(value);
        let mut opened = Self::empty(file_name, text_bytes, report);
        opened.unrecognized = !looks_like_an_artifact(value);
        opened.read_value(value);
        opened
    }

    /// The verdict: valid, valid legacy (with its generation) or invalid.
    pub fn verdict(&self) -> Verdict {
        self.report.verdict
    }

    /// The generation the validator detected.
    pub fn generation(&self) -> Generation {
        self.report.generation
    }

    /// True when the file has request rows to chart distributions from.
    pub fn has_rows(&self) -> bool {
        !self.rows.is_empty()
    }

    /// A name for legends and table headers: the file name, else the run id.
    pub fn label(&self) -> String {
        if !self.file_name.text.trim().is_empty() {
            return self.file_name.to_string();
        }
        match &self.identity.run_id {
            Some(run_id) => run_id.to_string(),
            None => "(unnamed run)".to_owned(),
        }
    }

    /// The verdict as the library's badge shows it: for another tool's file, the tool it was
    /// read as ("read as vLLM 0.33.0"); for an artifact converted from one, that tool.
    pub fn verdict_label(&self) -> String {
        match (&self.foreign, self.report.verdict) {
            (Some(source), Verdict::Foreign) => format!("read as {}", source.tool_and_version()),
            (Some(source), Verdict::Valid) => {
                format!("valid (converted from {})", source.tool_and_version())
            }
            (None, Verdict::Valid) if self.distributed.is_some() => {
                let engine = self
                    .distributed
                    .as_ref()
                    .map(DistributedView::engine_and_version)
                    .unwrap_or_default();
                format!("valid (sent by {engine})")
            }
            (_, Verdict::ValidLegacy(generation)) => format!("valid legacy ({generation})"),
            (_, verdict) => verdict.to_string(),
        }
    }

    /// "partial: the tab closed during the run, 37 of 100 requests" for a checkpoint of a run
    /// that did not end on its page (`client.checkpoint`), `None` for every other file.
    pub fn partial_label(&self) -> Option<String> {
        let checkpoint = self.client.as_ref()?.checkpoint.as_ref()?;
        let why = match &checkpoint.run_failed {
            Some(reason) => format!("the run failed ({reason})"),
            None => "the tab closed during the run".to_owned(),
        };
        let of = self
            .workload
            .requests
            .map(|requests| format!(" of {requests}"))
            .unwrap_or_default();
        Some(format!(
            "partial: {why}, {}{of} {}",
            checkpoint.finished_requests,
            if checkpoint.finished_requests == 1 && of.is_empty() {
                "request"
            } else {
                "requests"
            }
        ))
    }

    /// One sentence for the file's card: the verdict and what can be shown.
    pub fn status_line(&self) -> String {
        if let (None, Some(partial)) = (&self.refusal, self.partial_label()) {
            return format!(
                "Partial run ({}): the requests that ended before it stopped, {} of them as \
                 rows; the others are failures saying they had not finished.",
                partial.trim_start_matches("partial: "),
                self.rows.len()
            );
        }
        if let Some(refusal) = &self.refusal {
            return format!("Not read: {refusal}.");
        }
        if self.unrecognized {
            return format!(
                "Not a file strobe reads: it reads {KNOWN_FORMATS}. Pick one of those."
            );
        }
        match self.report.verdict {
            Verdict::Foreign => {
                let tool = self
                    .foreign
                    .as_ref()
                    .map(ForeignSource::tool_and_version)
                    .unwrap_or_default();
                if self.rows.is_empty() {
                    format!(
                        "Read as {tool}: its summary only, so its p50/p95 are shown without \
                         per-request charts."
                    )
                } else {
                    format!(
                        "Read as {tool}: {} request rows; its metrics are mapped to strobe's \
                         (see the notes).",
                        self.rows.len()
                    )
                }
            }
            Verdict::Valid if self.rows.is_empty() => {
                "Valid artifact with no successful request rows; showing its summary metrics."
                    .to_owned()
            }
            Verdict::Valid => format!("Valid artifact with {} request rows.", self.rows.len()),
            Verdict::ValidLegacy(generation) if self.rows.is_empty() => format!(
                "Valid legacy artifact ({generation}): it has no request rows, so only its \
                 p50/p95 summary metrics are shown."
            ),
            Verdict::ValidLegacy(generation) => format!(
                "Valid legacy artifact ({generation}) with {} request rows; newer fields are \
                 absent.",
                self.rows.len()
            ),
            Verdict::Invalid => {
                let count = self.report.violations.len();
                match self.report.violations.first() {
                    Some(first) => format!(
                        "Invalid artifact: {count} violation{} (first: {first}).",
                        if count == 1 { "" } else { "s" }
                    ),
                    None => "Invalid artifact.".to_owned(),
                }
            }
        }
    }

    /// Every message the user should see: the refusal, each violation, then each notice.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if let Some(refusal) = &self.refusal {
            problems.push(refusal.to_string());
        }
        problems.extend(self.report.violations.iter().map(ToString::to_string));
        problems.extend(self.notices.iter().map(ToString::to_string));
        problems
    }

    fn refused(file_name: &str, text_bytes: usize, refusal: OpenRefusal) -> Self {
        let mut opened = Self::empty(
            file_name,
            text_bytes,
            Report {
                verdict: Verdict::Invalid,
                generation: Generation::Unknown,
                violations: Vec::new(),
            },
        );
        opened.refusal = Some(refusal);
        opened
    }

    fn empty(file_name: &str, text_bytes: usize, report: Report) -> Self {
        OpenedArtifact {
            file_name: CappedText::new(file_name),
            text_bytes,
            refusal: None,
            report,
            notices: Vec::new(),
            identity: RunIdentity::default(),
            workload: WorkloadView::default(),
            workload_block: None,
            metrics: KeyMetrics::default(),
            rows: Vec::new(),
            failures: Vec::new(),
            client: None,
            load: None,
            sweep: None,
            repeat: None,
            slo: None,
            from_wire: None,
            basis: TimeBasis::Measured,
            foreign: None,
            unrecognized: false,
            distributed: None,
            server_metrics: None,
            prefix_cache_reset: None,
            source: None,
        }
    }

    fn read_value(&mut self, value: &Value) {
        self.notices = markup_notices(value);
        let Some(artifact) = value.as_object() else {
            return;
        };
        let text = |key: &str| capped_string(artifact.get(key));
        let integer = |key: &str| artifact.get(key).and_then(Value::as_u64);
        self.identity = RunIdentity {
            run_id: text("run_id"),
            model: text("model"),
            engine: text("engine"),
            gpu: text("gpu"),
            base_url: text("base_url"),
            measurement_protocol: text("measurement_protocol"),
            started_at: text("started_at"),
        };
        let serve_flags = artifact.get("serve_flags");
        self.workload = WorkloadView {
            requests: integer("requests"),
            completed: integer("completed"),
            failed: integer("failed"),
            concurrency: integer("concurrency"),
            context_tokens: integer("context_tokens"),
            context_seed: artifact.get("context_seed").and_then(Value::as_i64),
            context_distribution: artifact
                .get("context_distribution")
                .filter(|distribution| distribution.is_object())
                .map(|distribution| CappedText::new(&distribution.to_string())),
            max_context_tokens: integer("max_context_tokens"),
            max_tokens: integer("max_tokens"),
            response_words: integer("response_words"),
            prompt_cache_mode: text("prompt_cache_mode"),
            shared_prefix_tokens: integer("shared_prefix_tokens"),
            request_canaries: artifact.get("request_canaries").and_then(Value::as_bool),
            controlled_output_policy: text("controlled_output_policy"),
            sampling: artifact
                .get("sampling")
                .and_then(Value::as_object)
                .map(|sampling| SamplingView {
                    temperature: finite_f64(
                        sampling
                            .get("temperature")
                            .and_then(|parameter| parameter.get("requested")),
                    ),
                    top_p: finite_f64(
                        sampling
                            .get("top_p")
                            .and_then(|parameter| parameter.get("requested")),
                    ),
                }),
            thinking_mode: capped_string(serve_flags.and_then(|flags| flags.get("thinking_mode"))),
            reasoning_effort: capped_string(
                serve_flags.and_then(|flags| flags.get("reasoning_effort")),
            ),
            performance_eligible: artifact
                .get("performance_eligible")
                .and_then(Value::as_bool),
            wall_clock_ms: finite_f64(artifact.get("wall_clock_ms")),
        };
        if let Some(metrics) = artifact.get("metrics").and_then(Value::as_object) {
            self.metrics = KeyMetrics::from_metrics(metrics);
        }
        if let Some(rows) = artifact.get("request_timings").and_then(Value::as_array) {
            let mut skipped = 0;
            self.rows = rows
                .iter()
                .enumerate()
                .filter_map(|(position, row)| match row.as_object() {
                    Some(row) => Some(RowView::from_json(position, row)),
                    None => {
                        skipped += 1;
                        None
                    }
                })
                .collect();
            if skipped > 0 {
                self.notices
                    .push(LoadNotice::RowsSkipped { count: skipped });
            }
        }
        if let Some(failures) = artifact.get("failures").and_then(Value::as_array) {
            self.failures = failures
                .iter()
                .enumerate()
                .filter_map(|(position, failure)| {
                    failure
                        .as_object()
                        .map(|failure| FailureView::from_json(position, failure))
                })
                .collect();
        }
        self.client = artifact
            .get("client")
            .and_then(Value::as_object)
            .map(ClientView::from_json);
        self.from_wire = artifact
            .get("client")
            .and_then(|client| client.get("from_wire"))
            .and_then(Value::as_object)
            .and_then(KeyMetrics::of_from_wire);
        self.load = artifact
            .get("load")
            .and_then(Value::as_object)
            .map(LoadView::from_json);
        self.sweep = artifact
            .get("sweep")
            .and_then(Value::as_object)
            .map(SweepView::from_json);
        self.workload_block = artifact
            .get("workload")
            .and_then(Value::as_object)
            .map(WorkloadBlockView::from_json);
        self.repeat = artifact
            .get("repeat")
            .and_then(Value::as_object)
            .map(RepeatView::from_json);
        self.slo = artifact
            .get("slo")
            .and_then(Value::as_object)
            .map(SloView::from_json);
        self.distributed = artifact
            .get("client")
            .and_then(|client| client.get("distributed"))
            .and_then(Value::as_object)
            .map(DistributedView::from_json);
        self.server_metrics = artifact
            .get("server_metrics")
            .and_then(|block| serde_json::from_value(block.clone()).ok());
        self.prefix_cache_reset = artifact
            .get("prefix_cache_reset")
            .and_then(|block| serde_json::from_value(block.clone()).ok());
        self.foreign = source_of_artifact(value);
        // A converted file keeps the tool's local-time start label in its source block.
        if self.foreign.is_some() && self.identity.started_at.is_none() {
            self.identity.started_at = capped_string(value.pointer("/source/started_at_label"));
        }
    }
}

/// Whether `value` has any key an artifact of some generation has; JSON without any of them is
/// no artifact at all, and its card says what strobe reads instead.
fn looks_like_an_artifact(value: &Value) -> bool {
    const ARTIFACT_KEYS: [&str; 5] = [
        "schema",
        "measurement_protocol",
        "metrics",
        "request_timings",
        "run_id",
    ];
    value
        .as_object()
        .is_some_and(|object| ARTIFACT_KEYS.iter().any(|key| object.contains_key(*key)))
}

#[cfg(test)]
mod tests;
