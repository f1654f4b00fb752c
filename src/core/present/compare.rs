//! Side-by-side comparison of two or more loaded runs.
//!
//! This module owns [`compare`]: the first run is the baseline; every key metric of every run
//! gets its value, its difference from the baseline and its ratio to it, and every workload
//! field that differs between the runs becomes a [`Mismatch`] with the reason it matters,
//! because unlike runs must not be read as alike. It is pure data: the page and the Markdown
//! export render it.

use crate::core::config::slo::Slo;
use crate::core::format::format_number;
use crate::core::present::server::ServerFigure;
use crate::core::read::opened::foreign::{Definition, Quantity};
use crate::core::read::opened::metrics::{MetricKind, MetricStat};
use crate::core::read::opened::text::CappedText;
use crate::core::read::opened::views::SamplingView;
use crate::core::read::opened::workload::WorkloadBlockView;
use crate::core::read::opened::OpenedArtifact;
use crate::core::slo::{judge_opened, SloOutcome};

/// What a [`MetricComparison`] row measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComparedMetric {
    /// One statistic of one request-level metric, e.g. TTFT p95.
    Distribution(MetricKind, MetricStat),
    /// `throughput_tok_s`.
    Throughput,
    /// `prefix_cache_hit_avg`.
    PrefixCacheHitAvg,
    /// `failed` (falls back to the length of `failures`).
    FailedRequests,
    /// The share of sent requests that met the SLO, % ([`Comparison::add_slo`]).
    SloAttainment,
    /// Met requests per second of wall time ([`Comparison::add_slo`]).
    GoodputRequests,
    /// Output tokens of the met requests per second of wall time ([`Comparison::add_slo`]).
    GoodputTokens,
    /// A figure of the server's own metrics over the run (its `server_metrics` block): peak
    /// queue, peak running, KV cache at peak, preemptions, prefix-cache hits.
    Server(ServerFigure),
}

impl ComparedMetric {
    /// Label for tables, e.g. `TTFT p95`.
    pub fn label(self) -> String {
        match self {
            ComparedMetric::Distribution(kind, stat) => {
                format!("{} {}", kind.short_label(), stat.id())
            }
            ComparedMetric::Throughput => "Throughput".to_owned(),
            ComparedMetric::PrefixCacheHitAvg => "Prefix-cache hit (avg fraction)".to_owned(),
            ComparedMetric::FailedRequests => "Failed requests".to_owned(),
            ComparedMetric::SloAttainment => "SLO attainment".to_owned(),
            ComparedMetric::GoodputRequests => "Goodput (requests)".to_owned(),
            ComparedMetric::GoodputTokens => "Goodput (output tokens)".to_owned(),
            ComparedMetric::Server(figure) => figure.label().to_owned(),
        }
    }

    /// Unit of the values (`ms`, `tok/s`, or empty for counts and fractions).
    pub fn unit(self) -> &'static str {
        match self {
            ComparedMetric::Distribution(kind, _) => kind.unit(),
            ComparedMetric::Throughput | ComparedMetric::GoodputTokens => "tok/s",
            ComparedMetric::PrefixCacheHitAvg | ComparedMetric::FailedRequests => "",
            ComparedMetric::SloAttainment => "%",
            ComparedMetric::GoodputRequests => "req/s",
            ComparedMetric::Server(figure) => figure.unit(),
        }
    }

    /// True when a larger value is better (rates, cache hits).
    pub fn higher_is_better(self) -> bool {
        match self {
            ComparedMetric::Distribution(kind, _) => kind.higher_is_better(),
            ComparedMetric::Throughput
            | ComparedMetric::PrefixCacheHitAvg
            | ComparedMetric::SloAttainment
            | ComparedMetric::GoodputRequests
            | ComparedMetric::GoodputTokens => true,
            ComparedMetric::FailedRequests => false,
            ComparedMetric::Server(figure) => figure.higher_is_better(),
        }
    }

    /// This metric's value in one run; `None` for the SLO's metrics, which need the SLO
    /// ([`Comparison::add_slo`] computes them).
    pub fn value_of(self, run: &OpenedArtifact) -> Option<f64> {
        match self {
            ComparedMetric::SloAttainment
            | ComparedMetric::GoodputRequests
            | ComparedMetric::GoodputTokens => None,
            ComparedMetric::Distribution(kind, stat) => run.metrics.get(kind).stat(stat),
            ComparedMetric::Throughput => run.metrics.throughput_tok_s,
            ComparedMetric::PrefixCacheHitAvg => run.metrics.prefix_cache_hit_avg,
            ComparedMetric::Server(figure) => run
                .server_metrics
                .as_ref()
                .and_then(|block| figure.of(block)),
            ComparedMetric::FailedRequests => match run.workload.failed {
                Some(failed) => Some(failed as f64),
                // G1 has neither `failed` nor `failures`; an empty list there means "unknown".
                None if !run.failures.is_empty() => Some(run.failures.len() as f64),
                None => None,
            },
        }
    }
}

/// One run's value of one metric against the baseline (the first run).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MetricDelta {
    /// The run's value, when it has one.
    pub value: Option<f64>,
    /// `value − baseline`, when both exist.
    pub delta: Option<f64>,
    /// `value / baseline`, when both exist and the baseline is not zero.
    pub ratio: Option<f64>,
}

impl MetricDelta {
    /// Compares `value` with `baseline`.
    pub fn against(value: Option<f64>, baseline: Option<f64>) -> Self {
        let both = value.zip(baseline);
        let finite = |number: f64| number.is_finite().then_some(number);
        MetricDelta {
            value,
            delta: both.and_then(|(value, baseline)| finite(value - baseline)),
            ratio: both
                .filter(|&(_, baseline)| baseline != 0.0)
                .and_then(|(value, baseline)| finite(value / baseline)),
        }
    }
}

/// One metric across all runs.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricComparison {
    /// What is compared.
    pub metric: ComparedMetric,
    /// One entry per run, in the order the runs were given (the first is the baseline).
    pub runs: Vec<MetricDelta>,
}

/// A workload field whose values differ between the runs, or a metric the runs' tools define
/// differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The artifact field, e.g. `concurrency` or `sampling.temperature.requested`, or the
    /// defined quantity, e.g. `definition: TTFO`.
    pub field: &'static str,
    /// Each run's value as display text (`(absent)` when the file lacks it), in run order.
    pub values: Vec<String>,
    /// Why runs that differ here must not be read as alike.
    pub explanation: String,
}

/// Everything the comparison view and the Markdown summary show.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Each run's label (file name or run id), in order; the first is the baseline.
    pub labels: Vec<String>,
    /// Key metrics that at least one run has.
    pub metrics: Vec<MetricComparison>,
    /// Workload fields that differ.
    pub mismatches: Vec<Mismatch>,
    /// The SLO whose attainment and goodput rows [`Comparison::add_slo`] added, if any.
    pub slo: Option<Slo>,
}

impl Comparison {
    /// True when the runs measured the same workload as far as their files tell.
    pub fn is_like_for_like(&self) -> bool {
        self.mismatches.is_empty()
    }

    /// When the runs sent different workloads, one sentence that says so plainly and names
    /// each difference (a file's SHA-256, a file against synthetic prompts, the API, the turns,
    /// the order, the output lengths, the history); `None` when their files tell of the same
    /// traffic, or do not tell.
    pub fn different_traffic(&self) -> Option<String> {
        let differences: Vec<String> = self
            .mismatches
            .iter()
            .filter(|mismatch| TRAFFIC_FIELDS.contains(&mismatch.field))
            .map(|mismatch| format!("{} {}", mismatch.field, mismatch.values.join(" vs ")))
            .collect();
        if differences.is_empty() {
            return None;
        }
        Some(format!(
            "These runs sent different workloads ({}): their numbers describe different \
             traffic, so a difference between them is the workloads' as much as the servers'.",
            differences.join("; ")
        ))
    }

    /// Adds the SLO's attainment and goodput of each of `runs` (the runs compared, in order),
    /// with deltas and ratios against the first like every other row; a run the SLO cannot
    /// judge (G1, G2) has no value.
    pub fn add_slo(&mut self, runs: &[&OpenedArtifact], slo: &Slo) {
        self.slo = Some(slo.clone());
        let outcomes: Vec<Option<SloOutcome>> =
            runs.iter().map(|run| judge_opened(slo, run).ok()).collect();
        type Read = fn(&SloOutcome) -> Option<f64>;
        let rows: [(ComparedMetric, Read); 3] = [
            (ComparedMetric::SloAttainment, |o| {
                o.attainment.map(|a| a * 100.0)
            }),
            (ComparedMetric::GoodputRequests, |o| o.goodput_req_s),
            (ComparedMetric::GoodputTokens, |o| o.goodput_output_tok_s),
        ];
        for (metric, read) in rows {
            let values: Vec<Option<f64>> = outcomes
                .iter()
                .map(|outcome| outcome.as_ref().and_then(read))
                .collect();
            let baseline = values.first().copied().flatten();
            self.metrics.push(MetricComparison {
                metric,
                runs: values
                    .into_iter()
                    .map(|value| MetricDelta::against(value, baseline))
                    .collect(),
            });
        }
    }
}

/// The text shown for a field a file does not have.
pub const ABSENT: &str = "(absent)";

/// Compares runs; the first is the baseline. Metrics that no run has are left out. With fewer
/// than two runs there is nothing to mismatch.
pub fn compare(runs: &[&OpenedArtifact]) -> Comparison {
    let labels = runs.iter().map(|run| run.label()).collect();
    let mut compared = Vec::new();
    for kind in MetricKind::ALL {
        for stat in MetricStat::ALL {
            compared.push(ComparedMetric::Distribution(kind, stat));
        }
    }
    compared.extend([
        ComparedMetric::Throughput,
        ComparedMetric::PrefixCacheHitAvg,
        ComparedMetric::FailedRequests,
    ]);
    // The server's own view, where a run scraped its metrics: the load at which its queue
    // starts to grow shows here.
    compared.extend(ServerFigure::ALL.map(ComparedMetric::Server));
    let metrics = compared
        .into_iter()
        .filter_map(|metric| {
            let values: Vec<Option<f64>> = runs.iter().map(|run| metric.value_of(run)).collect();
            if values.iter().all(Option::is_none) {
                return None;
            }
            let baseline = values.first().copied().flatten();
            Some(MetricComparison {
                metric,
                runs: values
                    .into_iter()
                    .map(|value| MetricDelta::against(value, baseline))
                    .collect(),
            })
        })
        .collect();
    Comparison {
        labels,
        metrics,
        mismatches: workload_mismatches(runs)
            .into_iter()
            .chain(definition_mismatches(runs))
            .collect(),
        slo: None,
    }
}

/// A compared workload field: how to read it and why a difference matters.
struct WorkloadField {
    field: &'static str,
    read: fn(&OpenedArtifact) -> Option<String>,
    explanation: &'static str,
    /// A run without the field differs from one with it. Off for what only strobe's `client`
    /// block records: a file from another client says nothing either way.
    absent_differs: bool,
}

fn text_of(text: &Option<CappedText>) -> Option<String> {
    text.as_ref().map(ToString::to_string)
}

fn number_of<T: ToString>(number: Option<T>) -> Option<String> {
    number.map(|number| number.to_string())
}

const WORKLOAD_FIELDS: [WorkloadField; 31] = [
    WorkloadField {
        field: "time basis",
        read: |run| Some(run.basis.label().to_owned()),
        explanation: "times from the wire leave out what passed in the browser before each \
                      request left it (client_queue_ms, a few ms), so they read lower than times \
                      as measured; a run without Timing-Allow-Origin, or from another client, can \
                      only be shown as measured",
        absent_differs: true,
    },
    WorkloadField {
        field: "measurement_protocol",
        read: |run| text_of(&run.identity.measurement_protocol),
        explanation: "the protocol decides what TTFT and TTFO measure (capacity-v4-reasoning \
                      separates reasoning from content; older protocols do not)",
        absent_differs: true,
    },
    WorkloadField {
        field: "prompt_cache_mode",
        read: |run| text_of(&run.workload.prompt_cache_mode),
        explanation: "shared prompts hit the prefix cache and skip most prefill, so TTFT and \
                      prefill rates are not comparable with unique prompts",
        absent_differs: true,
    },
    WorkloadField {
        field: "shared_prefix_tokens",
        read: |run| number_of(run.workload.shared_prefix_tokens),
        explanation: "a longer shared prefix means more cached tokens and faster first tokens",
        absent_differs: true,
    },
    WorkloadField {
        field: "context_tokens",
        read: |run| number_of(run.workload.context_tokens),
        explanation: "prompt length drives prefill time: TTFT grows with context",
        absent_differs: true,
    },
    WorkloadField {
        field: "context_distribution",
        read: |run| text_of(&run.workload.context_distribution),
        explanation: "the mix of prompt lengths differs, so latency distributions differ even \
                      at the same nominal context",
        absent_differs: true,
    },
    WorkloadField {
        field: "max_context_tokens",
        read: |run| number_of(run.workload.max_context_tokens),
        explanation: "the server's context limit differs (a different server configuration, \
                      and prompts may have been clamped differently)",
        absent_differs: true,
    },
    WorkloadField {
        field: "concurrency",
        read: |run| number_of(run.workload.concurrency),
        explanation: "more requests in flight raise throughput but also queueing, so \
                      per-request latency is not comparable",
        absent_differs: true,
    },
    WorkloadField {
        field: "load.mode",
        // A file without a `load` block is a closed loop: the reference tool has no other.
        read: |run| {
            Some(
                run.load
                    .as_ref()
                    .and_then(|load| text_of(&load.mode))
                    .unwrap_or_else(|| "concurrency".to_owned()),
            )
        },
        explanation: "a closed loop keeps a fixed number in flight and waits for the server; an \
                      open loop sends at a rate whatever the server's pace, so queueing and \
                      latency behave differently",
        absent_differs: true,
    },
    WorkloadField {
        field: "load.rate",
        read: |run| {
            run.load
                .as_ref()
                .and_then(|load| load.rate)
                .map(format_number_exact)
        },
        explanation: "a higher offered rate means more load: latency rises toward saturation",
        absent_differs: false,
    },
    WorkloadField {
        field: "load.arrivals",
        read: |run| run.load.as_ref().and_then(|load| text_of(&load.arrivals)),
        explanation: "burstier arrivals queue more at the same mean rate, so tail latency grows",
        absent_differs: false,
    },
    WorkloadField {
        field: "max_tokens",
        read: |run| number_of(run.workload.max_tokens),
        explanation: "the output cap bounds generation time and E2E latency",
        absent_differs: true,
    },
    WorkloadField {
        field: "response_words",
        read: |run| number_of(run.workload.response_words),
        explanation: "controlled output length differs, so E2E and throughput differ by design",
        absent_differs: true,
    },
    WorkloadField {
        field: "controlled_output_policy",
        read: |run| text_of(&run.workload.controlled_output_policy),
        explanation: "strict runs exclude non-adherent responses, observe runs keep them",
        absent_differs: true,
    },
    WorkloadField {
        field: "request_canaries",
        read: |run| number_of(run.workload.request_canaries),
        explanation: "canary runs verify each response belongs to its request and exclude the \
                      ones that fail; runs without canaries may count mixed-up responses",
        absent_differs: true,
    },
    WorkloadField {
        field: "workload.source",
        read: |run| block_or(run, |block| text_of(&block.source), "synthetic"),
        explanation: "one run sent a workload file's requests and the other strobe's synthetic \
                      prompts: their numbers describe different traffic",
        absent_differs: false,
    },
    WorkloadField {
        field: "workload.file.sha256",
        read: |run| {
            run.workload_block
                .as_ref()
                .and_then(|block| text_of(&block.sha256))
        },
        explanation: "the runs sent different workload files (or different versions of one): \
                      their numbers describe different traffic",
        absent_differs: false,
    },
    WorkloadField {
        field: "workload.endpoint",
        read: |run| block_or(run, |block| text_of(&block.endpoint), "chat"),
        explanation: "the chat API wraps each prompt in the model's chat template and the \
                      completions API sends it bare, so the same text is a different prompt to \
                      the server",
        absent_differs: false,
    },
    WorkloadField {
        field: "workload.sending.turns",
        read: |run| sending_of(run, |block| text_of(&block.turns)),
        explanation: "whole conversations send each turn with its growing history (where the \
                      prefix cache decides TTFT); first turns alone do not",
        absent_differs: false,
    },
    WorkloadField {
        field: "workload.sending.order",
        read: |run| sending_of(run, WorkloadBlockView::order_text),
        explanation: "another order (or shuffle seed) sends other records at each point of the \
                      run, and other records altogether when it takes fewer than all",
        absent_differs: false,
    },
    WorkloadField {
        field: "workload.sending.output_lengths",
        read: |run| sending_of(run, |block| text_of(&block.output_lengths)),
        explanation: "the file's output lengths and one fixed max_tokens ask for different \
                      answers, so E2E and throughput differ by design",
        absent_differs: false,
    },
    WorkloadField {
        field: "workload.sending.history",
        read: |run| sending_of(run, |block| text_of(&block.history)),
        explanation: "live history carries each server's own replies into later turns, \
                      recorded history the file's: later turns' prompts differ",
        absent_differs: false,
    },
    WorkloadField {
        field: "workload.sending.trace_speed",
        read: |run| sending_of(run, |block| block.trace_speed.map(format_number_exact)),
        explanation: "a trace replayed faster offers more load: latency rises toward \
                      saturation",
        absent_differs: false,
    },
    WorkloadField {
        field: "sampling.temperature.requested",
        read: |run| sampling_value(run, |sampling| sampling.temperature),
        explanation: "sampling temperature changes what is generated and how long outputs run",
        absent_differs: true,
    },
    WorkloadField {
        field: "sampling.top_p.requested",
        read: |run| sampling_value(run, |sampling| sampling.top_p),
        explanation: "top_p changes what is generated and how long outputs run",
        absent_differs: true,
    },
    WorkloadField {
        field: "serve_flags.thinking_mode",
        read: |run| text_of(&run.workload.thinking_mode),
        explanation: "with thinking on, the model reasons before answering: TTFT and output \
                      lengths change completely",
        absent_differs: true,
    },
    WorkloadField {
        field: "engine",
        read: |run| text_of(&run.identity.engine),
        explanation: "a different serving engine (or version) is a different system under test",
        absent_differs: true,
    },
    WorkloadField {
        field: "gpu",
        read: |run| text_of(&run.identity.gpu),
        explanation: "different hardware: differences may come from the GPU, not the software",
        absent_differs: true,
    },
    WorkloadField {
        field: "client.measurement_thread",
        read: |run| {
            run.client
                .as_ref()
                .and_then(|client| text_of(&client.measurement_thread))
        },
        explanation: "measured on the page's main thread, reads can be stamped late by the \
                      page's own work; the measurement worker avoids that",
        absent_differs: false,
    },
    WorkloadField {
        field: "client.live_view",
        read: |run| {
            run.client
                .as_ref()
                .and_then(|client| text_of(&client.live_view))
        },
        explanation: "one run's page drew live progress while it measured: on the page's main \
                      thread that drawing can stamp reads late",
        absent_differs: false,
    },
    WorkloadField {
        field: "client.transport.connection_limit_suspected",
        read: |run| {
            run.client
                .as_ref()
                .and_then(|client| number_of(client.connection_limit_suspected))
        },
        explanation: "in one run the browser may have queued requests for a connection, and \
                      that wait is inside its TTFO",
        absent_differs: false,
    },
];

/// A value of a run's `workload` block, or `otherwise` for a file without one that strobe or
/// the reference producer wrote (they send synthetic prompts on the chat API when there is
/// none); `None` for another tool's results, which do not say what they sent.
fn block_or(
    run: &OpenedArtifact,
    read: fn(&WorkloadBlockView) -> Option<String>,
    otherwise: &str,
) -> Option<String> {
    match &run.workload_block {
        Some(block) => read(block),
        None if run.foreign.is_some() => None,
        None => Some(otherwise.to_owned()),
    }
}

/// A sending setting of a run that sent a workload file; `None` for every other run.
fn sending_of(
    run: &OpenedArtifact,
    read: fn(&WorkloadBlockView) -> Option<String>,
) -> Option<String> {
    run.workload_block
        .as_ref()
        .filter(|block| block.source.as_ref().is_some_and(|s| s.as_str() == "file"))
        .and_then(read)
}

/// The compared fields that say which requests a run sent: runs that differ in one sent
/// different traffic ([`Comparison::different_traffic`]).
const TRAFFIC_FIELDS: [&str; 7] = [
    "workload.source",
    "workload.file.sha256",
    "workload.endpoint",
    "workload.sending.turns",
    "workload.sending.order",
    "workload.sending.output_lengths",
    "workload.sending.history",
];

fn sampling_value(run: &OpenedArtifact, pick: fn(&SamplingView) -> Option<f64>) -> Option<String> {
    let sampling = run.workload.sampling.as_ref()?;
    Some(match pick(sampling) {
        Some(value) => format_number_exact(value),
        None => "not requested".to_owned(),
    })
}

/// Shortest round-trip text of a number, so `0.9` and `0.90000001` do not look equal.
fn format_number_exact(value: f64) -> String {
    format!("{value}")
}

/// The compared fields that are a run's load level or a consequence of it (a suspected
/// connection limit comes with concurrency above six), not its setup: the points of one
/// capacity curve differ in these.
const LOAD_LEVEL_FIELDS: [&str; 6] = [
    "concurrency",
    "load.mode",
    "load.rate",
    "load.arrivals",
    "workload.sending.trace_speed",
    "client.transport.connection_limit_suspected",
];

/// What a run measured apart from the load it carried: its model and every compared field of
/// its setup (engine, GPU, prompts, output contract, sampling, workload…) but the load level.
/// Runs with the same key are points of one curve; runs of other servers or workloads are not.
pub fn setup_key(run: &OpenedArtifact) -> String {
    let model = run.identity.model.as_ref().map(|model| model.text.clone());
    std::iter::once(("model", model))
        .chain(
            WORKLOAD_FIELDS
                .iter()
                .filter(|field| !LOAD_LEVEL_FIELDS.contains(&field.field))
                .map(|field| (field.field, (field.read)(run))),
        )
        .map(|(name, value)| format!("{name}={}", value.unwrap_or_else(|| ABSENT.to_owned())))
        .collect::<Vec<_>>()
        .join("\u{1f}")
}

fn workload_mismatches(runs: &[&OpenedArtifact]) -> Vec<Mismatch> {
    if runs.len() < 2 {
        return Vec::new();
    }
    WORKLOAD_FIELDS
        .iter()
        .filter_map(|field| {
            let read: Vec<Option<String>> = runs.iter().map(|run| (field.read)(run)).collect();
            let mut compared = read
                .iter()
                .filter(|value| field.absent_differs || value.is_some());
            let first = compared.next()?;
            let differs = compared.any(|value| value != first);
            let values: Vec<String> = read
                .into_iter()
                .map(|value| value.unwrap_or_else(|| ABSENT.to_owned()))
                .collect();
            differs.then_some(Mismatch {
                field: field.field,
                values,
                explanation: field.explanation.to_owned(),
            })
        })
        .collect()
}

/// The quantities (TTFO, TTFT, E2E, TPOT, token counts) the runs' tools define differently: a
/// run read from another tool's file whose number is not strobe's beside a run whose number is
/// another (docs/guide/results.md, *Other tools' files*).
fn definition_mismatches(runs: &[&OpenedArtifact]) -> Vec<Mismatch> {
    if runs.len() < 2 {
        return Vec::new();
    }
    Quantity::ALL
        .into_iter()
        .filter_map(|quantity| {
            let definitions: Vec<Option<&Definition>> = runs
                .iter()
                .map(|run| {
                    run.foreign
                        .as_ref()
                        .and_then(|source| source.definition(quantity))
                })
                .collect();
            // A run's definition as a key: strobe's own, or the tool's term and meaning.
            let key = |definition: &Option<&Definition>| match definition {
                Some(definition) if !definition.same_as_strobe => {
                    Some((definition.tool_term, definition.meaning))
                }
                _ => None,
            };
            let first = key(&definitions[0]);
            if definitions
                .iter()
                .all(|definition| key(definition) == first)
            {
                return None;
            }
            let values = runs
                .iter()
                .zip(&definitions)
                .map(
                    |(run, definition)| match (run.foreign.as_ref(), definition) {
                        (Some(source), Some(definition)) if !definition.same_as_strobe => {
                            let term = if definition.tool_term.is_empty() {
                                "not recorded".to_owned()
                            } else {
                                definition.tool_term.to_owned()
                            };
                            format!("{} ({})", term, source.tool.name())
                        }
                        _ => "strobe's".to_owned(),
                    },
                )
                .collect();
            let mut seen: Vec<(&str, &str)> = Vec::new();
            let mut explanation = Vec::new();
            for (run, definition) in runs.iter().zip(&definitions) {
                let (Some(source), Some(definition)) = (run.foreign.as_ref(), definition) else {
                    continue;
                };
                if definition.same_as_strobe
                    || seen.contains(&(definition.tool_term, definition.meaning))
                {
                    continue;
                }
                seen.push((definition.tool_term, definition.meaning));
                let term = if definition.tool_term.is_empty() {
                    format!("{}'s file", source.tool.name())
                } else {
                    definition.tool_term.to_owned()
                };
                explanation.push(format!(
                    "{term} here is strobe's {}, measured differently: {}",
                    quantity.label(),
                    definition.meaning
                ));
            }
            explanation.push(format!(
                "strobe's {} is {}",
                quantity.label(),
                quantity.strobe_meaning()
            ));
            Some(Mismatch {
                field: quantity.mismatch_field(),
                values,
                explanation: explanation.join("; "),
            })
        })
        .collect()
}

/// `value (+delta, ×ratio)` for tables, or `—` when the run lacks the value.
pub fn format_delta(delta: &MetricDelta, unit: &str, is_baseline: bool) -> String {
    let Some(value) = delta.value else {
        return "—".to_owned();
    };
    let unit_suffix = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    let mut text = format!("{}{unit_suffix}", format_number(value));
    if is_baseline {
        return text;
    }
    let mut details = Vec::new();
    if let Some(change) = delta.delta {
        let sign = if change >= 0.0 { "+" } else { "" };
        details.push(format!("{sign}{}", format_number(change)));
    }
    if let Some(ratio) = delta.ratio {
        details.push(format!("×{ratio:.3}"));
    }
    if !details.is_empty() {
        text.push_str(&format!(" ({})", details.join(", ")));
    }
    text
}

#[cfg(test)]
mod tests;
