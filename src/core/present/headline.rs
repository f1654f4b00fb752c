//! The headline cards a finished run opens with — requests, TTFT, TPOT, E2E, output throughput
//! and, with an SLO, goodput — each one number written for people (units always, thousands
//! separators, a few significant digits), before the full table and the charts.

use crate::core::format::{
    counted, format_count, format_duration_ms, format_grouped_number, format_number, or_missing,
};
use crate::core::read::opened::metrics::{KeyMetrics, MetricKind, MetricSummary};
use crate::core::slo::SloOutcome;

/// One card: what it counts, its number, and a line under it.
#[derive(Clone, Debug, PartialEq)]
pub struct HeadlineCard {
    /// Stable id, for `data-testid`: `requests`, `ttft`, `tpot`, `e2e`, `throughput`, `goodput`.
    pub id: &'static str,
    /// What the card counts.
    pub label: &'static str,
    /// The number, with its unit.
    pub value: String,
    /// What qualifies it (the p95, failures, the SLO's attainment), when anything does.
    pub detail: Option<String>,
}

/// What the cards are made from.
#[derive(Clone, Copy, Debug)]
pub struct HeadlineInputs<'a> {
    /// Requests planned.
    pub requests: u64,
    /// Requests that succeeded.
    pub completed: u64,
    /// Requests that failed.
    pub failed: u64,
    /// The run's headline statistics (on the basis shown).
    pub metrics: &'a KeyMetrics,
    /// What the SLO in force says of the run, if one is set.
    pub slo: Option<&'a SloOutcome>,
}

/// The cards of a run, in display order.
pub fn headline_cards(inputs: HeadlineInputs<'_>) -> Vec<HeadlineCard> {
    let mut cards = vec![HeadlineCard {
        id: "requests",
        label: "Requests",
        value: format!("{} ok", format_count(inputs.completed as usize)),
        detail: Some(match inputs.failed {
            0 => format!("of {}", format_count(inputs.requests as usize)),
            failed => format!(
                "{} failed, of {}",
                format_count(failed as usize),
                format_count(inputs.requests as usize)
            ),
        }),
    }];
    for (kind, id, label) in [
        (MetricKind::Ttft, "ttft", "TTFT p50"),
        (MetricKind::Tpot, "tpot", "TPOT p50"),
        (MetricKind::E2e, "e2e", "E2E p50"),
    ] {
        cards.push(latency_card(id, label, inputs.metrics.get(kind)));
    }
    cards.push(HeadlineCard {
        id: "throughput",
        label: "Output",
        value: inputs
            .metrics
            .throughput_tok_s
            .map_or("withheld".to_owned(), |rate| {
                format!("{} tok/s", format_grouped_number(rate))
            }),
        detail: Some(match inputs.metrics.throughput_tok_s {
            Some(_) => "over the run's wall time".to_owned(),
            None => "a request failed, or the server did not count its tokens".to_owned(),
        }),
    });
    if let Some(slo) = inputs.slo {
        cards.push(HeadlineCard {
            id: "goodput",
            label: "Goodput",
            value: or_missing(
                slo.goodput_req_s
                    .map(|rate| format!("{} req/s", format_number(rate))),
            ),
            detail: slo.attainment.map(|attainment| {
                format!(
                    "{:.1} % met the SLO ({} of {})",
                    attainment * 100.0,
                    format_count(slo.met as usize),
                    counted(slo.sent, "request", "requests")
                )
            }),
        });
    }
    cards
}

/// A latency card: the p50, and the p95 under it.
fn latency_card(id: &'static str, label: &'static str, summary: &MetricSummary) -> HeadlineCard {
    HeadlineCard {
        id,
        label,
        value: or_missing(summary.p50.map(format_duration_ms)),
        detail: summary
            .p95
            .map(|p95| format!("p95 {}", format_duration_ms(p95))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metrics() -> KeyMetrics {
        let summary = |p50: f64, p95: f64| MetricSummary {
            p50: Some(p50),
            p95: Some(p95),
            ..MetricSummary::default()
        };
        KeyMetrics {
            ttft: summary(412.345, 1_523.0),
            tpot: summary(11.234, 14.5),
            e2e: summary(2_345.0, 4_010.0),
            throughput_tok_s: Some(12_345.6),
            ..KeyMetrics::default()
        }
    }

    #[test]
    fn the_cards_say_each_number_once_with_its_unit() {
        let metrics = metrics();
        let cards = headline_cards(HeadlineInputs {
            requests: 1_200,
            completed: 1_200,
            failed: 0,
            metrics: &metrics,
            slo: None,
        });
        let shown: Vec<(&str, &str, Option<&str>)> = cards
            .iter()
            .map(|card| (card.id, card.value.as_str(), card.detail.as_deref()))
            .collect();
        assert_eq!(
            shown,
            [
                ("requests", "1,200 ok", Some("of 1,200")),
                ("ttft", "412 ms", Some("p95 1.52 s")),
                ("tpot", "11.2 ms", Some("p95 14.5 ms")),
                ("e2e", "2.35 s", Some("p95 4.01 s")),
                (
                    "throughput",
                    "12,346 tok/s",
                    Some("over the run's wall time")
                ),
            ]
        );
    }

    #[test]
    fn failures_a_withheld_throughput_and_an_slo_show_on_their_cards() {
        let metrics = KeyMetrics {
            throughput_tok_s: None,
            ..metrics()
        };
        let slo = SloOutcome {
            sent: 24,
            failed: 2,
            met: 18,
            attainment: Some(0.75),
            goodput_req_s: Some(3.456),
            goodput_output_tok_s: Some(400.0),
            met_uncounted_tokens: 0,
            bounds: Vec::new(),
        };
        let cards = headline_cards(HeadlineInputs {
            requests: 24,
            completed: 22,
            failed: 2,
            metrics: &metrics,
            slo: Some(&slo),
        });
        assert_eq!(cards[0].detail.as_deref(), Some("2 failed, of 24"));
        assert_eq!(cards[4].value, "withheld");
        let goodput = cards.last().expect("a goodput card");
        assert_eq!(goodput.id, "goodput");
        assert_eq!(goodput.value, "3.46 req/s");
        assert_eq!(
            goodput.detail.as_deref(),
            Some("75.0 % met the SLO (18 of 24 requests)")
        );
        // No statistic, no number.
        let empty = KeyMetrics::default();
        let cards = headline_cards(HeadlineInputs {
            requests: 0,
            completed: 0,
            failed: 0,
            metrics: &empty,
            slo: None,
        });
        assert_eq!(cards[1].value, "–");
        assert_eq!(cards[1].detail, None);
    }
}
