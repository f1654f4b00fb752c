//! The time basis a loaded run is shown on: *as measured* (the artifact's standard fields, the
//! reference tool's definition: the clock starts just before the request is sent) or *from the
//! wire* (each time minus the request's `client_queue_ms`, the browser's time before the request
//! left it; docs/develop/accuracy.md, *From the wire*). [`OpenedArtifact::on_basis`] gives a copy
//! whose rows and headline numbers are on the chosen basis, so the charts, the comparison, the
//! exports and the SLO all read it the same way.

pub use crate::core::read::opened::metrics::TimeBasis;
use crate::core::read::opened::metrics::{KeyMetrics, MetricKind};
use crate::core::read::opened::views::RowView;
use crate::core::read::opened::OpenedArtifact;

/// The metrics the basis changes; the others (TPOT, decode, prefill rate) read the same.
pub const WIRE_METRICS: [MetricKind; 3] = [MetricKind::Ttfo, MetricKind::Ttft, MetricKind::E2e];

/// `rows` on `basis`: from the wire, each row's TTFO, TTFT and E2E are its times from the wire
/// (a row without them has none, so it drops out of those metrics rather than mixing bases).
pub fn rows_on_basis(rows: &[RowView], basis: TimeBasis) -> Vec<RowView> {
    let mut shown = rows.to_vec();
    if basis == TimeBasis::FromWire {
        for row in &mut shown {
            row.ttfo_ms = row.ttfo_from_wire_ms;
            row.ttft_ms = row.ttft_from_wire_ms;
            row.e2e_ms = row.e2e_from_wire_ms;
        }
    }
    shown
}

/// `metrics` with the basis's TTFO, TTFT and E2E: from the wire, `from_wire`'s statistics.
pub fn metrics_on_basis(
    metrics: &KeyMetrics,
    from_wire: Option<&KeyMetrics>,
    basis: TimeBasis,
) -> KeyMetrics {
    let mut shown = metrics.clone();
    if let (TimeBasis::FromWire, Some(from_wire)) = (basis, from_wire) {
        shown.ttfo = from_wire.ttfo;
        shown.ttft = from_wire.ttft;
        shown.e2e = from_wire.e2e;
    }
    shown
}

/// Whether a run has times from the wire: a row with `ttft_from_wire_ms` and the
/// `client.from_wire` statistics.
pub fn has_wire_times(rows: &[RowView], from_wire: Option<&KeyMetrics>) -> bool {
    from_wire.is_some() && rows.iter().any(|row| row.ttft_from_wire_ms.is_some())
}

impl OpenedArtifact {
    /// Whether the file has times from the wire: a row with `ttft_from_wire_ms` and the
    /// `client.from_wire` statistics.
    pub fn has_wire_times(&self) -> bool {
        has_wire_times(&self.rows, self.from_wire.as_ref())
    }

    /// This run on `basis`. From the wire, each row's TTFO, TTFT and E2E are its times from the
    /// wire (a row without them has none: it drops out of those metrics, never mixing bases)
    /// and the headline numbers are `client.from_wire`'s. A run without times from the wire
    /// stays as measured, and says so in [`Self::basis`]: the comparison flags runs shown on
    /// different bases.
    pub fn on_basis(&self, basis: TimeBasis) -> OpenedArtifact {
        let mut shown = self.clone();
        let basis = if self.has_wire_times() {
            basis
        } else {
            TimeBasis::Measured
        };
        shown.rows = rows_on_basis(&self.rows, basis);
        shown.metrics = metrics_on_basis(&self.metrics, self.from_wire.as_ref(), basis);
        shown.basis = basis;
        shown
    }

    /// Why this run cannot be shown from the wire, when it cannot.
    pub fn why_no_wire_times(&self) -> Option<String> {
        if self.has_wire_times() {
            return None;
        }
        Some(
            match self
                .client
                .as_ref()
                .and_then(|client| client.from_wire_unavailable.as_ref())
            {
                Some(reason) => format!("{}: {reason}", self.label()),
                None => format!(
                    "{}: the file has no times from the wire (written by another client or an \
                     older strobe)",
                    self.label()
                ),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::present::compare::compare;
    use crate::core::present::export::{rows_csv_with_slo, summary_markdown};
    use serde_json::json;

    /// A two-row strobe artifact with times from the wire (or without, with `wire: false`).
    fn artifact(wire: bool) -> OpenedArtifact {
        let row = |index: u64, ttft: f64, queue: f64| {
            let mut row = json!({
                "request_index": index, "planned_context_tokens": 1024, "prompt_tokens": 1000,
                "output_tokens": 10, "output_token_source": "usage",
                "time_to_first_output_ms": ttft, "ttft_ms": ttft, "e2e_ms": ttft + 100.0,
                "generation_ms": 100.0, "tpot_ms": 11.0,
            });
            if wire {
                row["client_queue_ms"] = json!(queue);
                row["ttfo_from_wire_ms"] = json!(ttft - queue);
                row["ttft_from_wire_ms"] = json!(ttft - queue);
                row["e2e_from_wire_ms"] = json!(ttft + 100.0 - queue);
            }
            row
        };
        let from_wire = if wire {
            json!({"rows": 2, "rows_with_wire_time": 2, "ttft_samples": 2, "ttft_p50_ms": 8.5,
                   "ttft_p95_ms": 17.5, "ttft_mean_ms": 13.0, "e2e_samples": 2, "e2e_p50_ms": 108.5,
                   "time_to_first_output_samples": 2, "time_to_first_output_p50_ms": 8.5})
        } else {
            json!({"rows": 2, "rows_with_wire_time": 0, "unavailable": "no Timing-Allow-Origin",
                   "ttft_samples": 0, "ttft_p50_ms": null})
        };
        let text = json!({
            "schema": "anvil-serving.benchmark/v1", "run_id": if wire { "wire" } else { "plain" },
            "request_timings": [row(0, 10.0, 1.5), row(1, 20.0, 2.5)],
            "metrics": {"ttft_samples": 2, "ttft_p50_ms": 10.0, "ttft_p95_ms": 20.0,
                        "e2e_samples": 2, "e2e_p50_ms": 110.0, "tpot_p50_ms": 11.0},
            "client": {"name": "strobe", "from_wire": from_wire},
        });
        OpenedArtifact::from_text(&format!("{wire}.json"), &text.to_string())
    }

    #[test]
    fn from_the_wire_a_run_reads_its_wire_times_and_keeps_the_rest() {
        let run = artifact(true);
        assert!(run.has_wire_times());
        assert_eq!(run.why_no_wire_times(), None);
        let shown = run.on_basis(TimeBasis::FromWire);
        assert_eq!(shown.basis, TimeBasis::FromWire);
        assert_eq!(shown.rows[0].ttft_ms, Some(8.5));
        assert_eq!(shown.rows[1].e2e_ms, Some(117.5));
        assert_eq!(
            shown.rows[1].tpot_ms,
            Some(11.0),
            "TPOT is the same on either basis"
        );
        assert_eq!(shown.metrics.ttft.p50, Some(8.5));
        assert_eq!(shown.metrics.e2e.p50, Some(108.5));
        assert_eq!(shown.metrics.tpot.p50, Some(11.0));
        // As measured is the file as it is.
        let measured = run.on_basis(TimeBasis::Measured);
        assert_eq!(measured, run);
        assert_eq!(measured.metrics.ttft.p50, Some(10.0));
        // The exports name the basis.
        let csv = rows_csv_with_slo(&shown, None);
        assert!(
            csv.lines()
                .next()
                .unwrap_or_default()
                .contains(",ttft_from_wire_ms,"),
            "{csv}"
        );
        assert!(csv.contains(",8.5,"), "{csv}");
        assert!(rows_csv_with_slo(&run, None)
            .lines()
            .next()
            .unwrap_or_default()
            .contains(",ttft_ms,"));
        let runs = [&shown];
        let markdown = summary_markdown(&runs, &compare(&runs));
        assert!(
            markdown.contains("Times (TTFO, TTFT, E2E): from the wire"),
            "{markdown}"
        );
    }

    #[test]
    fn a_run_without_wire_times_stays_as_measured_and_the_comparison_says_so() {
        let plain = artifact(false);
        assert!(!plain.has_wire_times());
        let shown = plain.on_basis(TimeBasis::FromWire);
        assert_eq!(shown.basis, TimeBasis::Measured);
        assert_eq!(shown.metrics.ttft.p50, Some(10.0));
        assert_eq!(
            plain.why_no_wire_times().as_deref(),
            Some("false.json: no Timing-Allow-Origin")
        );
        let wire = artifact(true).on_basis(TimeBasis::FromWire);
        let comparison = compare(&[&wire, &shown]);
        let basis = comparison
            .mismatches
            .iter()
            .find(|mismatch| mismatch.field == "time basis")
            .expect("the bases differ");
        assert_eq!(basis.values, ["from the wire", "as measured"]);
        // On one basis, nothing to flag.
        let alike = compare(&[&artifact(true), &plain]);
        assert!(alike
            .mismatches
            .iter()
            .all(|mismatch| mismatch.field != "time basis"));
    }

    #[test]
    fn the_basis_has_an_id_and_a_label() {
        for basis in TimeBasis::ALL {
            assert_eq!(TimeBasis::named(basis.id()), Some(basis));
        }
        assert_eq!(TimeBasis::named("wire"), None);
        assert_eq!(TimeBasis::FromWire.to_string(), "from the wire");
    }
}
