//! What the results read from a file besides its metrics: the run's identity, workload and
//! sampling, each row and failure, how it was measured (the `client` block) and the SLO it was
//! held to (the `slo` block), every field
//! optional because older generations lack most of them.

use serde_json::{Map, Value};

use crate::core::config::settings::BROWSER_HTTP1_CONNECTIONS_PER_HOST;
use crate::core::config::slo::Slo;
use crate::core::format::{counted, format_duration_ms, quoted_preview};
use crate::core::observe::accumulate::CHUNK_ARRIVALS_KEPT;
use crate::core::read::opened::text::{capped_string, CappedText};
use crate::core::read::opened::workload::OriginView;
use crate::core::schema::client::ClientBlock;
use crate::core::schema::rows::{FailureRecord, RequestTiming};

/// Who and what was measured. Every field is absent when the file lacks it or it is not a string.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunIdentity {
    /// `run_id`, e.g. `benchmark-20261005T114224Z`.
    pub run_id: Option<CappedText>,
    /// `model`.
    pub model: Option<CappedText>,
    /// `engine` (G2 and later).
    pub engine: Option<CappedText>,
    /// `gpu` (G2 and later).
    pub gpu: Option<CappedText>,
    /// `base_url` (possibly `[operator identity redacted]`).
    pub base_url: Option<CappedText>,
    /// `measurement_protocol` (`capacity-v2`, `capacity-v3`, `capacity-v4-reasoning`).
    pub measurement_protocol: Option<CappedText>,
    /// `started_at`, an ISO-8601 label.
    pub started_at: Option<CappedText>,
}

/// The requested sampling parameters (`sampling.*.requested`); absent before the modern
/// generation, `None` inside when the user did not request a value.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SamplingView {
    /// `sampling.temperature.requested`.
    pub temperature: Option<f64>,
    /// `sampling.top_p.requested`.
    pub top_p: Option<f64>,
}

/// What the run asked the server to do. Absent fields are `None`; so are fields of the wrong
/// type (the validator reports those).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkloadView {
    /// `requests`: planned requests.
    pub requests: Option<u64>,
    /// `completed`: successful requests.
    pub completed: Option<u64>,
    /// `failed`: failed requests (G2 and later).
    pub failed: Option<u64>,
    /// `concurrency`: requests in flight at once.
    pub concurrency: Option<u64>,
    /// `context_tokens`: the planned prompt size.
    pub context_tokens: Option<u64>,
    /// `context_seed`.
    pub context_seed: Option<i64>,
    /// `context_distribution` as compact JSON text (`{"65536":6}`), for display and comparison.
    pub context_distribution: Option<CappedText>,
    /// `max_context_tokens`: the server's context limit, when it was probed.
    pub max_context_tokens: Option<u64>,
    /// `max_tokens`: the output cap per request.
    pub max_tokens: Option<u64>,
    /// `response_words`: the controlled-output word count (0 = off).
    pub response_words: Option<u64>,
    /// `prompt_cache_mode`: `unique` or `shared`.
    pub prompt_cache_mode: Option<CappedText>,
    /// `shared_prefix_tokens`.
    pub shared_prefix_tokens: Option<u64>,
    /// `request_canaries`.
    pub request_canaries: Option<bool>,
    /// `controlled_output_policy`: `observe`, `strict`, or `None` (also when null).
    pub controlled_output_policy: Option<CappedText>,
    /// Requested sampling; `None` when the file has no `sampling` object.
    pub sampling: Option<SamplingView>,
    /// `serve_flags.thinking_mode`, e.g. `default` or `disabled`.
    pub thinking_mode: Option<CappedText>,
    /// `serve_flags.reasoning_effort`.
    pub reasoning_effort: Option<CappedText>,
    /// `performance_eligible`.
    pub performance_eligible: Option<bool>,
    /// `wall_clock_ms`: the run's duration.
    pub wall_clock_ms: Option<f64>,
}

/// One `request_timings[]` row, read tolerantly: a missing or mistyped field is `None`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RowView {
    /// Position of the row in `request_timings`.
    pub position: usize,
    /// `request_index`, when a non-negative integer.
    pub request_index: Option<u64>,
    /// `started_at_ms` (strobe addition): request start relative to the run start.
    pub started_at_ms: Option<f64>,
    /// `planned_context_tokens`.
    pub planned_context_tokens: Option<u64>,
    /// `prompt_tokens` as the server reported them.
    pub prompt_tokens: Option<u64>,
    /// `cached_tokens` (strobe addition): prompt tokens served from the prefix cache.
    pub cached_tokens: Option<u64>,
    /// `output_tokens` (null when not counted exactly).
    pub output_tokens: Option<u64>,
    /// `output_token_source`: `usage`, `content_chunks` or `unknown`.
    pub output_token_source: Option<CappedText>,
    /// `time_to_first_output_ms` (absent from some G3 rows).
    pub ttfo_ms: Option<f64>,
    /// `ttft_ms`.
    pub ttft_ms: Option<f64>,
    /// `e2e_ms`.
    pub e2e_ms: Option<f64>,
    /// `ttfo_from_wire_ms` (strobe addition): TTFO from the request leaving the browser.
    pub ttfo_from_wire_ms: Option<f64>,
    /// `ttft_from_wire_ms` (strobe addition).
    pub ttft_from_wire_ms: Option<f64>,
    /// `e2e_from_wire_ms` (strobe addition).
    pub e2e_from_wire_ms: Option<f64>,
    /// `generation_ms`.
    pub generation_ms: Option<f64>,
    /// `tpot_ms`, else `mean_time_per_output_token_ms`, else `mean_inter_token_latency_ms`.
    pub tpot_ms: Option<f64>,
    /// `decode_tok_s`.
    pub decode_tok_s: Option<f64>,
    /// `effective_prefill_tok_s`.
    pub prefill_tok_s: Option<f64>,
    /// Gaps between consecutive stream reads that carried events, ms, from the optional
    /// per-chunk trace `chunk_arrivals_ms` (strobe's *Chunk traces*); empty without a trace.
    pub read_gaps_ms: Vec<f64>,
    /// `workload` (strobe addition): the record, session and turn a workload file's request
    /// came from.
    pub origin: Option<OriginView>,
}

impl RowView {
    /// The view of a row strobe itself just measured (live charts during a run).
    pub fn from_timing(position: usize, row: &RequestTiming) -> Self {
        RowView {
            position,
            request_index: Some(row.request_index),
            started_at_ms: row.started_at_ms,
            planned_context_tokens: Some(row.planned_context_tokens),
            prompt_tokens: row.prompt_tokens,
            cached_tokens: row.cached_tokens.flatten(),
            output_tokens: row.output_tokens,
            output_token_source: Some(CappedText::new(&row.output_token_source)),
            ttfo_ms: Some(row.time_to_first_output_ms),
            ttft_ms: Some(row.ttft_ms),
            e2e_ms: Some(row.e2e_ms),
            ttfo_from_wire_ms: row.ttfo_from_wire_ms.flatten(),
            ttft_from_wire_ms: row.ttft_from_wire_ms.flatten(),
            e2e_from_wire_ms: row.e2e_from_wire_ms.flatten(),
            generation_ms: Some(row.generation_ms),
            tpot_ms: row.tpot_ms,
            decode_tok_s: row.decode_tok_s,
            prefill_tok_s: row.effective_prefill_tok_s,
            read_gaps_ms: row
                .chunk_arrivals_ms
                .as_deref()
                .map(read_gaps)
                .unwrap_or_default(),
            origin: row.workload.as_deref().map(|origin| OriginView {
                record: Some(origin.record),
                session: Some(origin.session),
                turn: Some(origin.turn),
            }),
        }
    }

    /// The views of a run's rows strobe itself just measured, in order.
    pub fn of_timings(rows: &[RequestTiming]) -> Vec<RowView> {
        rows.iter()
            .enumerate()
            .map(|(position, row)| RowView::from_timing(position, row))
            .collect()
    }

    /// The longest gap between two reads of this request's stream, ms (needs a trace).
    pub fn longest_stall_ms(&self) -> Option<f64> {
        self.read_gaps_ms.iter().copied().reduce(f64::max)
    }

    /// The request index, or the row's position when the index is missing or malformed.
    pub fn index_or_position(&self) -> u64 {
        self.request_index.unwrap_or(self.position as u64)
    }

    /// TTFO, falling back to TTFT as the producer does for rows without reasoning (§5).
    pub fn ttfo_or_ttft_ms(&self) -> Option<f64> {
        self.ttfo_ms.or(self.ttft_ms)
    }

    pub(crate) fn from_json(position: usize, row: &Map<String, Value>) -> Self {
        let float = |key: &str| finite_f64(row.get(key));
        let integer = |key: &str| row.get(key).and_then(Value::as_u64);
        RowView {
            position,
            request_index: integer("request_index"),
            started_at_ms: float("started_at_ms"),
            planned_context_tokens: integer("planned_context_tokens"),
            prompt_tokens: integer("prompt_tokens"),
            cached_tokens: integer("cached_tokens"),
            output_tokens: integer("output_tokens"),
            output_token_source: capped_string(row.get("output_token_source")),
            ttfo_ms: float("time_to_first_output_ms"),
            ttft_ms: float("ttft_ms"),
            e2e_ms: float("e2e_ms"),
            ttfo_from_wire_ms: float("ttfo_from_wire_ms"),
            ttft_from_wire_ms: float("ttft_from_wire_ms"),
            e2e_from_wire_ms: float("e2e_from_wire_ms"),
            generation_ms: float("generation_ms"),
            tpot_ms: float("tpot_ms")
                .or_else(|| float("mean_time_per_output_token_ms"))
                .or_else(|| float("mean_inter_token_latency_ms")),
            decode_tok_s: float("decode_tok_s"),
            prefill_tok_s: float("effective_prefill_tok_s"),
            read_gaps_ms: traced_arrivals(row.get("chunk_arrivals_ms"))
                .map(|arrivals| read_gaps(&arrivals))
                .unwrap_or_default(),
            origin: OriginView::of_entry(row),
        }
    }
}

/// A file's `chunk_arrivals_ms`, when it is what strobe writes: at most
/// [`CHUNK_ARRIVALS_KEPT`] finite numbers. Anything else is no trace at all, rather than part of
/// one.
pub(crate) fn traced_arrivals(value: Option<&Value>) -> Option<Vec<f64>> {
    let arrivals = value?.as_array()?;
    if arrivals.len() > CHUNK_ARRIVALS_KEPT {
        return None;
    }
    arrivals
        .iter()
        .map(|arrival| finite_f64(Some(arrival)))
        .collect()
}

/// The gaps between consecutive arrival times; a step backwards (not something strobe writes)
/// ends the trace there.
pub(crate) fn read_gaps(arrivals: &[f64]) -> Vec<f64> {
    arrivals
        .windows(2)
        .map(|pair| pair[1] - pair[0])
        .take_while(|gap| gap.is_finite() && *gap >= 0.0)
        .collect()
}

/// One `failures[]` entry, read tolerantly. Strings are data, capped for display.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FailureView {
    /// Position of the entry in `failures`.
    pub position: usize,
    /// `request_index`.
    pub request_index: Option<u64>,
    /// `failure_class` (modern), e.g. `request_error`.
    pub failure_class: Option<CappedText>,
    /// `error_type`, e.g. `TimeoutError`.
    pub error_type: Option<CappedText>,
    /// `error_message` (G3 and later).
    pub error_message: Option<CappedText>,
    /// `elapsed_ms`: request start to failure (modern).
    pub elapsed_ms: Option<f64>,
    /// Request start on the run clock: a `started_at_ms` key of the failure, else
    /// `response_timing.started_at_ms` when the failed response kept a timing row.
    pub started_at_ms: Option<f64>,
    /// `response_received`.
    pub response_received: Option<bool>,
    /// `workload` (strobe addition): where a workload file's request came from.
    pub origin: Option<OriginView>,
}

impl FailureView {
    /// The view of a failure strobe itself just recorded (live charts during a run).
    pub fn from_record(position: usize, failure: &FailureRecord) -> Self {
        FailureView {
            position,
            request_index: Some(failure.request_index),
            failure_class: Some(CappedText::new(failure.failure_class.as_str())),
            error_type: Some(CappedText::new(&failure.error_type)),
            error_message: Some(CappedText::new(&failure.error_message)),
            elapsed_ms: failure.elapsed_ms,
            started_at_ms: None,
            response_received: Some(failure.response_received),
            origin: failure.workload.as_deref().map(|origin| OriginView {
                record: Some(origin.record),
                session: Some(origin.session),
                turn: Some(origin.turn),
            }),
        }
    }

    /// The request index, or the entry's position when the index is missing or malformed.
    pub fn index_or_position(&self) -> u64 {
        self.request_index.unwrap_or(self.position as u64)
    }

    pub(crate) fn from_json(position: usize, failure: &Map<String, Value>) -> Self {
        FailureView {
            position,
            request_index: failure.get("request_index").and_then(Value::as_u64),
            failure_class: capped_string(failure.get("failure_class")),
            error_type: capped_string(failure.get("error_type")),
            error_message: capped_string(failure.get("error_message")),
            elapsed_ms: finite_f64(failure.get("elapsed_ms")),
            started_at_ms: finite_f64(failure.get("started_at_ms")).or_else(|| {
                finite_f64(
                    failure
                        .get("response_timing")
                        .and_then(|timing| timing.get("started_at_ms")),
                )
            }),
            response_received: failure.get("response_received").and_then(Value::as_bool),
            origin: OriginView::of_entry(failure),
        }
    }
}

/// Planned and measured prompt tokens may differ by this share before the results say so.
pub const PROMPT_TOKENS_TOLERANCE: f64 = 0.25;

/// What the rows say about how far their numbers can be trusted, one sentence each: prompts
/// whose measured size is far from the plan (the server's tokenizer is not strobe's estimate of
/// 3 characters per token; a session's later turns, which carry their history, are left out),
/// and requests whose output tokens were counted as content chunks
/// (the server sent no `usage`).
pub fn row_notes(rows: &[RowView]) -> Vec<String> {
    let mut notes = Vec::new();
    let mut ratios: Vec<(f64, u64, u64)> = rows
        .iter()
        // A session's later turns carry their history, which their planned size leaves out:
        // their ratio says nothing of the tokenizer.
        .filter(|row| {
            row.origin
                .as_ref()
                .and_then(|origin| origin.turn)
                .unwrap_or(0)
                == 0
        })
        .filter_map(|row| {
            let planned = row.planned_context_tokens.filter(|planned| *planned > 0)?;
            let measured = row.prompt_tokens?;
            Some((measured as f64 / planned as f64, planned, measured))
        })
        .collect();
    ratios.sort_by(|a, b| a.0.total_cmp(&b.0));
    if let Some(&(ratio, planned, measured)) = ratios.get(ratios.len() / 2) {
        if (ratio - 1.0).abs() > PROMPT_TOKENS_TOLERANCE {
            notes.push(format!(
                "Prompts measured {:.2} server tokens per planned token on the median request \
                 ({measured} for {planned} planned): this server's tokenizer (and chat template) \
                 counts differently from strobe's estimate of 3 characters per token, so \
                 context_tokens is approximate here; compare prompt_tokens in the rows, or \
                 turn Context calibration on to size prompts in this server's tokens.",
                ratio
            ));
        }
    }
    let chunk_counted = rows
        .iter()
        .filter(|row| {
            row.output_token_source
                .as_ref()
                .is_some_and(|source| source.as_str() == "content_chunks")
        })
        .count();
    if chunk_counted > 0 {
        notes.push(format!(
            "{chunk_counted} of {} got no usage from the server, so their token \
             counts are content chunk counts (llama-cpp-python's server, for one, ignores \
             stream_options): their output_tokens, TPOT and decode rate are left null and \
             throughput is withheld.",
            counted(rows.len() as u64, "request", "requests")
        ));
    }
    notes
}

/// strobe's `slo` block: the SLO a run was held to, read back so the page can restore it.
#[derive(Debug, Clone, PartialEq)]
pub struct SloView {
    /// `slo.spec`, when it reads as an SLO.
    pub slo: Option<Slo>,
    /// `slo.target`, when a share from 0 to 1 (above 0).
    pub target: Option<f64>,
    /// Why `slo.spec` was not taken, when it was present but unreadable.
    pub problem: Option<String>,
}

impl SloView {
    pub(crate) fn from_json(block: &Map<String, Value>) -> Self {
        let target = finite_f64(block.get("target")).filter(|t| *t > 0.0 && *t <= 1.0);
        match block.get("spec").and_then(Value::as_str) {
            Some(spec) => match spec.parse::<Slo>() {
                Ok(slo) => SloView {
                    slo: Some(slo),
                    target,
                    problem: None,
                },
                Err(error) => SloView {
                    slo: None,
                    target,
                    problem: Some(format!(
                        "its slo block's SLO {} cannot be read ({error}), so it was not restored",
                        quoted_preview(spec)
                    )),
                },
            },
            None => SloView {
                slo: None,
                target,
                problem: Some(
                    "its slo block names no SLO (slo.spec), so none was restored".to_owned(),
                ),
            },
        }
    }
}

/// strobe's `client` block (§12): how far the browser measurement itself can be trusted.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClientView {
    /// `client.name`, e.g. `strobe`.
    pub name: Option<CappedText>,
    /// `client.version`.
    pub version: Option<CappedText>,
    /// `client.user_agent`.
    pub user_agent: Option<CappedText>,
    /// `client.timer_resolution_ms`: measured `performance.now()` granularity.
    pub timer_resolution_ms: Option<f64>,
    /// `client.cross_origin_isolated`: finer timers were available.
    pub cross_origin_isolated: Option<bool>,
    /// `client.transport.connection_limit_suspected`: the browser may have queued requests.
    pub connection_limit_suspected: Option<bool>,
    /// `client.measurement_thread`: `worker` or `main`.
    pub measurement_thread: Option<CappedText>,
    /// `client.live_view`: `during` (the page showed progress meanwhile) or `end`.
    pub live_view: Option<CappedText>,
    /// `client.transport.endpoints`: base URLs the run used.
    pub endpoints: Option<u64>,
    /// `client.transport.max_in_flight_per_origin`.
    pub max_in_flight_per_origin: Option<u64>,
    /// `client.warmup.requests`: unmeasured warm-up requests before the run (absent: none, or
    /// a client that does not say).
    pub warmup_requests: Option<u64>,
    /// `client.warmup.connections`: the last warm-up check round's verdict, as written.
    pub warmup_connections: Option<CappedText>,
    /// `client.isolation_service_worker`: a service worker controlled the page.
    pub isolation_service_worker: Option<bool>,
    /// `client.sse.buffered_streams`: requests whose stream looks buffered on its way.
    pub buffered_streams: Option<u64>,
    /// `client.transport.http_protocols_seen` is an empty list: the browser said no request's
    /// protocol (the server sent no `Timing-Allow-Origin`).
    pub transport_hidden: bool,
    /// `client.context_calibration`: the server's characters per token and template tokens
    /// the prompts were sized by (both finite), when the run calibrated its context.
    pub context_calibration: Option<(f64, f64)>,
    /// `client.from_wire.unavailable`: why the run has no times from the wire.
    pub from_wire_unavailable: Option<CappedText>,
    /// `client.checkpoint`: the file is a checkpoint of a run that did not end on its page.
    pub checkpoint: Option<CheckpointView>,
}

/// `client.checkpoint` as read: how many requests had ended, and why the run stopped when the
/// page saw it fail.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckpointView {
    /// `finished_requests`.
    pub finished_requests: u64,
    /// `run_failed`: the reason, when the page saw the run fail.
    pub run_failed: Option<CappedText>,
}

impl ClientView {
    pub(crate) fn from_json(client: &Map<String, Value>) -> Self {
        let transport = |key: &str| {
            client
                .get("transport")
                .and_then(|transport| transport.get(key))
        };
        let warmup = |key: &str| client.get("warmup").and_then(|warmup| warmup.get(key));
        ClientView {
            name: capped_string(client.get("name")),
            version: capped_string(client.get("version")),
            user_agent: capped_string(client.get("user_agent")),
            timer_resolution_ms: finite_f64(client.get("timer_resolution_ms")),
            cross_origin_isolated: client.get("cross_origin_isolated").and_then(Value::as_bool),
            connection_limit_suspected: transport("connection_limit_suspected")
                .and_then(Value::as_bool),
            measurement_thread: capped_string(client.get("measurement_thread")),
            live_view: capped_string(client.get("live_view")),
            endpoints: transport("endpoints").and_then(Value::as_u64),
            max_in_flight_per_origin: transport("max_in_flight_per_origin").and_then(Value::as_u64),
            warmup_requests: warmup("requests").and_then(Value::as_u64),
            warmup_connections: capped_string(warmup("connections")),
            isolation_service_worker: client
                .get("isolation_service_worker")
                .and_then(Value::as_bool),
            buffered_streams: client
                .get("sse")
                .and_then(|sse| sse.get("buffered_streams"))
                .and_then(Value::as_u64),
            transport_hidden: transport("http_protocols_seen")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty),
            from_wire_unavailable: capped_string(
                client
                    .get("from_wire")
                    .and_then(|block| block.get("unavailable")),
            ),
            checkpoint: client.get("checkpoint").and_then(|block| {
                Some(CheckpointView {
                    finished_requests: block.get("finished_requests")?.as_u64()?,
                    run_failed: capped_string(block.get("run_failed")),
                })
            }),
            context_calibration: client.get("context_calibration").and_then(|calibration| {
                Some((
                    finite_f64(calibration.get("chars_per_token"))?,
                    finite_f64(calibration.get("overhead_tokens"))?,
                ))
            }),
        }
    }

    /// The view of a `client` block strobe itself just wrote.
    pub fn of_block(client: &ClientBlock) -> Self {
        match serde_json::to_value(client) {
            Ok(Value::Object(map)) => Self::from_json(&map),
            _ => Self::default(),
        }
    }

    /// What a reader should know about how the numbers were taken, one sentence each: who
    /// measured where with which timer, where the requests went, and whether the browser may
    /// have queued some of them.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let who = match (&self.name, &self.version) {
            (Some(name), Some(version)) => format!("{name} {version}"),
            (Some(name), None) => name.to_string(),
            _ => "an unnamed client".to_owned(),
        };
        let thread_name = self
            .measurement_thread
            .as_ref()
            .map(|thread| thread.as_str());
        let thread = match thread_name {
            Some("worker") => " in a dedicated worker",
            Some("main") => " on the page's main thread",
            _ => "",
        };
        let page = match (
            thread_name,
            self.live_view.as_ref().map(|view| view.as_str()),
        ) {
            (Some("main"), Some("during")) => {
                ", which also drew the live progress (reads arriving meanwhile could be \
                 stamped late)"
            }
            (_, Some("end")) => ", the page drawing nothing until the run ended",
            _ => "",
        };
        let timer = self
            .timer_resolution_ms
            .map(|ms| format!("; timer resolution {}", format_duration_ms(ms)))
            .unwrap_or_default();
        let isolation = match self.cross_origin_isolated {
            Some(true) => "; cross-origin isolated",
            Some(false) => "; not cross-origin isolated (coarser timer)",
            None => "",
        };
        notes.push(format!(
            "Measured by {who}{thread}{page}{timer}{isolation}."
        ));
        if let (Some(endpoints), Some(most)) = (self.endpoints, self.max_in_flight_per_origin) {
            notes.push(format!(
                "{}; at most {} in flight to one origin.",
                counted(endpoints, "endpoint", "endpoints"),
                counted(most, "request", "requests")
            ));
        }
        if let Some(note) = self.warmup_note() {
            notes.push(note);
        }
        if let Some((chars_per_token, overhead_tokens)) = self.context_calibration {
            notes.push(format!(
                "Prompts were sized in this server's own tokens (context calibration): two \
                 unmeasured probes before the run showed {chars_per_token:.2} characters per \
                 token on the benchmark's text (strobe's estimate is 3) plus {overhead_tokens:.0} \
                 tokens of chat template, and every prompt was rescaled to its planned context."
            ));
        }
        if self.isolation_service_worker == Some(true) {
            notes.push(match thread_name {
                Some("worker") => "A service worker gave the page its cross-origin isolation (the \
                    host sent no COOP/COEP): each request of the measuring worker passed its \
                    fetch event before it left, which is inside its TTFO. Send COOP/COEP from the \
                    host, or measure on the page's thread, whose requests bypass it."
                    .to_owned(),
                _ => "A service worker gave the page its cross-origin isolation (the host sent no \
                    COOP/COEP); the page's requests bypass it by static routing."
                    .to_owned(),
            });
        }
        if let Some(buffered) = self.buffered_streams.filter(|count| *count > 0) {
            notes.push(format!(
                "{} received many events in one or two network reads: something \
                 between the server and the browser held their streams back (a proxy that \
                 buffers or compresses the response, a CDN), so their TTFT and TPOT measure the \
                 buffer, not the server. Turn buffering and compression off for the API path \
                 (nginx: proxy_buffering off, no gzip on text/event-stream); their rows say \
                 buffered_stream: true.",
                counted(buffered, "request", "requests")
            ));
        }
        if let Some(checkpoint) = &self.checkpoint {
            notes.push(format!(
                "A checkpoint, not a finished run: the page saved it while the run measured, \
                 when {} had ended{}. Each request that had not is a failure saying so, and \
                 the transport facts the browser gives only after a run (connections, \
                 protocols, times from the wire) are not in it.",
                counted(checkpoint.finished_requests, "request", "requests"),
                match &checkpoint.run_failed {
                    Some(reason) => format!("; then the run failed ({reason})"),
                    None => "; the run did not end on its page (the tab was closed, reloaded or \
                             crashed)"
                        .to_owned(),
                }
            ));
        }
        if self.transport_hidden && self.checkpoint.is_none() {
            notes.push(
                "The browser reported no request's transport (the server sent no \
                 Timing-Allow-Origin header, or no request got an answer): new_connection, \
                 client_queue_ms and http_protocol are null, and browser queueing could not be \
                 checked. Send Timing-Allow-Origin: <page \
                 origin> from the server or a proxy in front of it (nginx: add_header \
                 Timing-Allow-Origin $http_origin always)."
                    .to_owned(),
            );
        }
        if self.connection_limit_suspected == Some(true) {
            notes.push(format!(
                "More requests were in flight to one origin than the browser's {} connections \
                 per HTTP/1.1 origin: some TTFO values include time spent waiting inside the \
                 browser. Use an endpoint pool (more ports of the same server) or HTTP/2.",
                BROWSER_HTTP1_CONNECTIONS_PER_HOST
            ));
        }
        notes
    }

    /// What the warm-up did and whether the connections were shown open when the run started.
    pub(crate) fn warmup_note(&self) -> Option<String> {
        let requests = self.warmup_requests?;
        let sent = format!(
            "Warm-up: {} before the run",
            counted(requests, "unmeasured request", "unmeasured requests")
        );
        let verdict = self
            .warmup_connections
            .as_ref()
            .map(|verdict| verdict.as_str());
        Some(match verdict {
            Some("ready") => format!(
                "{sent}; every connection the first wave needs was shown open when it started."
            ),
            Some("still_opening") => format!(
                "{sent}, but its last check still opened a connection: a first-wave row may \
                 include connecting (its new_connection says so)."
            ),
            Some("not_shown") => format!(
                "{sent}; its check answers ended too quickly to show that every slot had an \
                 open connection of its own (see the rows' new_connection)."
            ),
            Some("unknown") => format!(
                "{sent}; the endpoint withholds timing (no Timing-Allow-Origin), so whether \
                 the connections were open could not be checked."
            ),
            _ => format!("{sent}."),
        })
    }
}

/// A finite number (JSON numbers parsed by serde_json always are; this also rejects bools).
pub(crate) fn finite_f64(value: Option<&Value>) -> Option<f64> {
    value
        .and_then(Value::as_f64)
        .filter(|number| number.is_finite())
}
