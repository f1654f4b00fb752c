//! The sweep's table in the results (docs/guide/load.md), as text: its heading, how it ended,
//! and one row a finished run (a step, or each repeat of a step) with what it carried, its
//! latencies, its server's figures when it scraped them, and what to note of it. Pure: the page
//! hands in where its sweep is ([`SweepStatus`]) and its runs, and renders [`SweepTable`].

use crate::core::format::{format_tenths, or_missing};
use crate::core::present::capacity::CapacityPoint;
use crate::core::present::sweep_status::{SweepEnding, SweepStatus};
use crate::core::schema::ArtifactV1;

/// What a row says across its figures when its artifact has no wall time (so no point).
pub const NO_WALL_TIME: &str = "(no wall time in the artifact)";

/// The sweep's table, every cell as text.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepTable {
    /// `Sweep concurrency:1,2,4 · 2 of 3 steps`, or with repeats
    /// `Sweep … · 2 of 3 steps × 2 repeats (4 runs)`.
    pub heading: String,
    /// How it ended, once it has: `Every step ran.` or `Stopped: {reason}.`.
    pub ended: Option<String>,
    /// The first column's head: `step`, or `step · repeat` with repeats.
    pub step_heading: &'static str,
    /// Some run scraped its server: the table has a `server (peak)` column.
    pub server_column: bool,
    /// One row a finished run, in order.
    pub rows: Vec<SweepRow>,
    /// The sweep ended with at least one run: its `.zip` can be downloaded.
    pub downloadable: bool,
}

/// One finished run of the sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRow {
    /// The step from 1, and with repeats `3 · 2 of 4` (step 3, its second run of four).
    pub label: String,
    /// Its figures; `None` when its artifact has no wall time ([`NO_WALL_TIME`] spans them).
    pub figures: Option<SweepRowFigures>,
    /// What to note: the SLO's attainment, saturation, where the sweep stopped; `; `-joined,
    /// empty when nothing.
    pub note: String,
}

/// A row's figures, each formatted to a tenth or the dash when missing.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRowFigures {
    /// What the run carried: `c=8` or `20 req/s`.
    pub load: String,
    /// Completed requests per second of wall time.
    pub requests_per_s: String,
    /// Output tokens per second of wall time.
    pub output_tok_s: String,
    /// TTFT p95, ms.
    pub ttft_p95_ms: String,
    /// TPOT p95, ms.
    pub tpot_p95_ms: String,
    /// E2E p95, ms.
    pub e2e_p95_ms: String,
    /// The server's figures in a few words (shown only in a table with the server column).
    pub server: String,
}

impl SweepTable {
    /// The table of a sweep that is where `status` says, with its finished `runs` (each run's
    /// artifact and its point of the capacity curve, `None` without a wall time), in order.
    pub fn new<'a>(
        status: &SweepStatus<'_>,
        runs: impl IntoIterator<Item = (&'a ArtifactV1, Option<&'a CapacityPoint>)>,
    ) -> Self {
        let runs: Vec<(&ArtifactV1, Option<&CapacityPoint>)> = runs.into_iter().collect();
        let repeated = status.repeats > 1;
        let heading = if repeated {
            format!(
                "Sweep {} · {} of {} steps × {} repeats ({} runs)",
                status.spec,
                status.steps_reached,
                status.step_count,
                status.repeats,
                runs.len()
            )
        } else {
            format!(
                "Sweep {} · {} of {} steps",
                status.spec,
                runs.len(),
                status.step_count
            )
        };
        let ended = status.ended.map(|end| match end {
            SweepEnding::Complete => "Every step ran.".to_owned(),
            SweepEnding::Stopped(reason) => format!("Stopped: {reason}."),
        });
        Self {
            heading,
            downloadable: !runs.is_empty() && ended.is_some(),
            ended,
            step_heading: if repeated { "step · repeat" } else { "step" },
            server_column: runs
                .iter()
                .any(|(_, point)| point.is_some_and(|point| point.server.is_some())),
            rows: runs
                .iter()
                .enumerate()
                .map(|(index, (artifact, point))| SweepRow::new(index, artifact, *point))
                .collect(),
        }
    }

    /// The columns a row's figures take (from *load* to the last before *note*): what a row
    /// without figures spans.
    pub fn figure_columns(&self) -> usize {
        if self.server_column {
            7
        } else {
            6
        }
    }
}

impl SweepRow {
    /// The row of the sweep's run at `index` (from 0; its `sweep` block's step wins).
    fn new(index: usize, artifact: &ArtifactV1, point: Option<&CapacityPoint>) -> Self {
        let block = artifact.sweep.as_ref();
        let stop = block
            .and_then(|block| block.stop_reason)
            .map(|reason| format!("stopped here: {}", reason.describe()));
        let number = block.map_or(index as u64, |block| block.step_index) + 1;
        let label = match &artifact.repeat {
            Some(repeat) => format!("{number} · {} of {}", repeat.index + 1, repeat.count),
            None => number.to_string(),
        };
        let Some(point) = point else {
            return Self {
                label,
                figures: None,
                note: stop.unwrap_or_default(),
            };
        };
        let note = [
            point
                .slo
                .as_ref()
                .and_then(|outcome| outcome.attainment)
                .map(|attainment| format!("SLO met by {:.1} %", attainment * 100.0)),
            point
                .saturated
                .then(|| "saturated: below 90 % of the offered rate".to_owned()),
            stop,
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("; ");
        Self {
            label,
            figures: Some(SweepRowFigures {
                load: point.label.clone(),
                requests_per_s: format_tenths(point.requests_per_s, ""),
                output_tok_s: format_tenths(point.output_tok_s, ""),
                ttft_p95_ms: format_tenths(point.metrics.ttft.p95, ""),
                tpot_p95_ms: format_tenths(point.metrics.tpot.p95, ""),
                e2e_p95_ms: format_tenths(point.metrics.e2e.p95, ""),
                server: or_missing(point.server.map(|server| server.brief())),
            }),
            note,
        }
    }
}

#[cfg(test)]
mod tests;
