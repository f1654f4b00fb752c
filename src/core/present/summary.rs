//! A finished run's summary in the results, as words and numbers ready to show
//! ([`RunSummaryView`]): the title line, the time basis shown and why, the key metrics' table
//! rows, the throughput and prefix-cache line, what the `load` and `client` blocks say of how
//! the numbers were taken, the failures with their reasons, and the plain inputs the headline
//! cards and the SLO are made from. The page's summary component renders it and judges the SLO
//! in force; it computes nothing itself.
//!
//! Every text here is plain text (a failure's message, a run id, a model name come from a
//! server or a file and are hostile): the page sets them as text, never as markup.

use crate::core::config::slo::Slo;
use crate::core::format::{counted, format_table_number};
use crate::core::present::headline::{headline_cards, HeadlineCard, HeadlineInputs};
use crate::core::read::opened::basis::{
    has_wire_times, metrics_on_basis, rows_on_basis, TimeBasis,
};
use crate::core::read::opened::load::LoadView;
use crate::core::read::opened::metrics::{KeyMetrics, MetricKind};
use crate::core::read::opened::views::{row_notes, ClientView, RowView};
use crate::core::schema::ArtifactV1;
use crate::core::slo::{judge_rows, SloOutcome};

/// What the throughput line says when the artifact withholds the throughput.
pub const THROUGHPUT_WITHHELD: &str =
    "withheld (a request failed, or the server did not count its tokens)";

/// What the throughput line says when the server reported no prefix-cache hits.
pub const PREFIX_CACHE_NOT_REPORTED: &str = "not reported";

/// One finished run as its summary shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummaryView {
    /// `run_id`, the title's first word.
    pub run_id: String,
    /// `model`.
    pub model: String,
    /// "3 of 4 completed".
    pub completion: String,
    /// `measurement_protocol` as the artifact spells it.
    pub protocol: String,
    /// The basis the times are shown on: the one asked for, or as measured when the run has no
    /// times from the wire.
    pub shown_basis: TimeBasis,
    /// What the summary says of its basis ([`basis_caption`]).
    pub basis_caption: String,
    /// The key metrics' rows, in [`MetricKind::ALL`]'s order, on [`Self::shown_basis`].
    pub metric_rows: Vec<SummaryMetricRow>,
    /// The output throughput ("13417.6 tok/s"), or why there is none.
    pub throughput: String,
    /// The prefix cache's mean hit rate ("42.0 %"), or that the server reported none.
    pub prefix_cache: String,
    /// What a reader must know before reading any latency: the client did not deliver the load
    /// it was asked for ([`LoadView::warnings`]); empty when it did or the run had no `load`.
    pub load_warnings: Vec<String>,
    /// How an open-loop run's load went ([`LoadView::notes`]); `None` without a `load` block.
    pub load_notes: Option<Vec<String>>,
    /// How the numbers were taken (the `client` block's notes, the rows' notes and the
    /// requests that waited inside the browser); `None` without a `client` block.
    pub client_notes: Option<Vec<String>>,
    /// Every failure with its reason, in the artifact's order.
    pub failures: Vec<SummaryFailureRow>,
    /// What the headline cards are made from.
    pub headline: SummaryHeadline,
    /// What the SLO in force is judged on.
    pub slo: SloInputs,
}

/// One row of the key metrics' table: p50, p95 and mean written for the table
/// ([`format_table_number`]: two decimals, thousands separators from 1,000 up, a dash for none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryMetricRow {
    /// The metric's short label (`TTFT`).
    pub label: &'static str,
    /// The median.
    pub p50: String,
    /// The 95th percentile.
    pub p95: String,
    /// The mean.
    pub mean: String,
    /// The unit (`ms`, `tok/s`).
    pub unit: &'static str,
}

/// One failure as the failures table shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SummaryFailureRow {
    /// The request's index.
    pub request_index: u64,
    /// The failure class as the artifact spells it (`http_error`).
    pub class: &'static str,
    /// The error's type (`HttpError`), as the file has it: plain text.
    pub error_type: String,
    /// The reason, as the file has it: plain text, never markup.
    pub message: String,
}

/// The numbers the headline cards show, on the summary's basis.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryHeadline {
    /// Requests planned.
    pub requests: u64,
    /// Requests that succeeded.
    pub completed: u64,
    /// Requests that failed (the larger of `failed` and the failures listed).
    pub failed: u64,
    /// The key metrics on the summary's basis.
    pub metrics: KeyMetrics,
}

impl SummaryHeadline {
    /// The cards, with the SLO's goodput card when `slo` says what the SLO in force found.
    pub fn cards(&self, slo: Option<&SloOutcome>) -> Vec<HeadlineCard> {
        headline_cards(HeadlineInputs {
            requests: self.requests,
            completed: self.completed,
            failed: self.failed,
            metrics: &self.metrics,
            slo,
        })
    }
}

/// What an SLO judges of a finished run: its rows on the summary's basis, its failures and its
/// wall time.
#[derive(Clone, Debug, PartialEq)]
pub struct SloInputs {
    /// The succeeded requests' rows, on the summary's basis.
    pub rows: Vec<RowView>,
    /// Requests that failed.
    pub failed: u64,
    /// The run's wall time, ms.
    pub wall_clock_ms: f64,
}

impl SloInputs {
    /// What `slo` says of the run.
    pub fn judge(&self, slo: &Slo) -> SloOutcome {
        judge_rows(slo, &self.rows, self.failed, Some(self.wall_clock_ms))
    }
}

impl RunSummaryView {
    /// The summary of `artifact` with its times on `asked` (as measured when the run has no
    /// times from the wire; the caption then says why).
    pub fn of(artifact: &ArtifactV1, asked: TimeBasis) -> Self {
        let client_view = artifact.client.as_ref().map(ClientView::of_block);
        let from_wire = artifact
            .client
            .as_ref()
            .and_then(|client| client.from_wire.as_ref())
            .and_then(|block| KeyMetrics::of_from_wire(&block.statistics));
        let measured_rows = RowView::of_timings(&artifact.request_timings);
        let shown_basis = if has_wire_times(&measured_rows, from_wire.as_ref()) {
            asked
        } else {
            TimeBasis::Measured
        };
        let caption = basis_caption(
            asked,
            shown_basis,
            client_view
                .as_ref()
                .and_then(|client| client.from_wire_unavailable.as_ref())
                .map(ToString::to_string),
        );
        let slo_rows = rows_on_basis(&measured_rows, shown_basis);
        let failed = artifact.failed.max(artifact.failures.len() as u64);
        // The same families, fallbacks and labels as the charts and `strobe-artifact summary`.
        let metrics = metrics_on_basis(
            &KeyMetrics::from_metrics(&artifact.metrics),
            from_wire.as_ref(),
            shown_basis,
        );
        let metric_rows = MetricKind::ALL
            .into_iter()
            .map(|kind| {
                let summary = metrics.get(kind);
                SummaryMetricRow {
                    label: kind.short_label(),
                    p50: format_table_number(summary.p50),
                    p95: format_table_number(summary.p95),
                    mean: format_table_number(summary.mean),
                    unit: kind.unit(),
                }
            })
            .collect();
        let throughput = metrics.throughput_tok_s.map_or_else(
            || THROUGHPUT_WITHHELD.to_owned(),
            |rate| format!("{rate:.1} tok/s"),
        );
        let prefix_cache = metrics.prefix_cache_hit_avg.map_or_else(
            || PREFIX_CACHE_NOT_REPORTED.to_owned(),
            |hit| format!("{:.1} %", hit * 100.0),
        );
        let client_notes = client_view.as_ref().map(|client| {
            let mut notes = client.notes();
            notes.extend(row_notes(&slo_rows));
            notes.extend(browser_wait_note(artifact));
            notes
        });
        let load = artifact.load.as_ref().map(LoadView::of_block);
        Self {
            run_id: artifact.run_id.clone(),
            model: artifact.model.clone(),
            completion: format!("{} of {} completed", artifact.completed, artifact.requests),
            protocol: artifact.measurement_protocol.to_string(),
            shown_basis,
            basis_caption: caption,
            metric_rows,
            throughput,
            prefix_cache,
            load_warnings: load.as_ref().map(LoadView::warnings).unwrap_or_default(),
            load_notes: load.as_ref().map(LoadView::notes),
            client_notes,
            failures: artifact
                .failures
                .iter()
                .map(|failure| SummaryFailureRow {
                    request_index: failure.request_index,
                    class: failure.failure_class.as_str(),
                    error_type: failure.error_type.clone(),
                    message: failure.error_message.clone(),
                })
                .collect(),
            headline: SummaryHeadline {
                requests: artifact.requests,
                completed: artifact.completed,
                failed,
                metrics,
            },
            slo: SloInputs {
                rows: slo_rows,
                failed,
                wall_clock_ms: artifact.wall_clock_ms,
            },
        }
    }

    /// The failures table's heading ("Failures (3)").
    pub fn failures_heading(&self) -> String {
        format!("Failures ({})", self.failures.len())
    }
}

/// What the summary says about its time basis: the one shown, or why a run asked to be shown
/// from the wire is shown as measured (`why_not`, the file's `client.from_wire.unavailable`).
pub fn basis_caption(asked: TimeBasis, shown: TimeBasis, why_not: Option<String>) -> String {
    match (asked, shown) {
        (TimeBasis::FromWire, TimeBasis::Measured) => format!(
            "Times as measured: this run has no times from the wire ({}).",
            why_not.unwrap_or_else(|| "the browser reported no client_queue_ms".to_owned())
        ),
        (_, TimeBasis::FromWire) => "Times from the wire: each TTFO, TTFT and E2E minus the \
            time the request spent in the browser before it left (client_queue_ms)."
            .to_owned(),
        _ => "Times as measured, from just before each request was sent.".to_owned(),
    }
}

/// How many requests waited inside the browser before they left it, when any did: their TTFO
/// includes that wait.
fn browser_wait_note(artifact: &ArtifactV1) -> Option<String> {
    let waited = artifact
        .request_timings
        .iter()
        .filter(|row| row.ttfo_includes_browser_wait() == Some(true))
        .count();
    (waited > 0).then(|| {
        format!(
            "{} waited inside the browser before leaving it (client_queue_ms in their rows): \
             their TTFO includes that wait.",
            counted(waited as u64, "request", "requests")
        )
    })
}

#[cfg(test)]
mod tests;
