//! The artifact library as a table: one row per loaded run with what tells runs apart (model,
//! engine, GPU, load, requests, TTFT p50, verdict), and the order a column sorts them in.

use std::cmp::Ordering;

use crate::core::format::{format_count, format_duration_ms, format_number, or_missing, MISSING};
use crate::core::read::opened::OpenedArtifact;
use crate::core::read::validate::report::Verdict;

/// A column the library sorts by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LibraryColumn {
    /// Load order (the default).
    Loaded,
    /// The file name or run id.
    Run,
    /// Valid, legacy, invalid.
    Verdict,
    /// `model`.
    Model,
    /// `engine`.
    Engine,
    /// `gpu`.
    Gpu,
    /// Concurrency, or the offered rate of an open-loop run.
    Load,
    /// Requests planned.
    Requests,
    /// TTFT p50.
    TtftP50,
}

impl LibraryColumn {
    /// The columns with a header, in display order.
    pub const SHOWN: [LibraryColumn; 8] = [
        LibraryColumn::Run,
        LibraryColumn::Verdict,
        LibraryColumn::Model,
        LibraryColumn::Engine,
        LibraryColumn::Gpu,
        LibraryColumn::Load,
        LibraryColumn::Requests,
        LibraryColumn::TtftP50,
    ];

    /// The header text.
    pub fn label(self) -> &'static str {
        match self {
            LibraryColumn::Loaded => "loaded",
            LibraryColumn::Run => "Run",
            LibraryColumn::Verdict => "Verdict",
            LibraryColumn::Model => "Model",
            LibraryColumn::Engine => "Engine",
            LibraryColumn::Gpu => "GPU",
            LibraryColumn::Load => "Load",
            LibraryColumn::Requests => "Requests",
            LibraryColumn::TtftP50 => "TTFT p50",
        }
    }

    /// A stable id for `data-testid`s.
    pub fn id(self) -> &'static str {
        match self {
            LibraryColumn::Loaded => "loaded",
            LibraryColumn::Run => "run",
            LibraryColumn::Verdict => "verdict",
            LibraryColumn::Model => "model",
            LibraryColumn::Engine => "engine",
            LibraryColumn::Gpu => "gpu",
            LibraryColumn::Load => "load",
            LibraryColumn::Requests => "requests",
            LibraryColumn::TtftP50 => "ttft",
        }
    }
}

/// What one run's row shows, and the keys it sorts by.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryRow {
    /// The cell texts of [`LibraryColumn::SHOWN`], in order ([`MISSING`] where the file says
    /// nothing).
    pub cells: Vec<String>,
    verdict_rank: u8,
    load: Option<f64>,
    requests: Option<u64>,
    ttft_p50_ms: Option<f64>,
}

impl LibraryRow {
    /// The row of `run`.
    pub fn of(run: &OpenedArtifact) -> Self {
        let text = or_missing;
        let rate = run
            .load
            .as_ref()
            .and_then(|load| load.offered_rate.or(load.rate));
        let (load_text, load) = match (rate, run.workload.concurrency) {
            (Some(rate), _) => (Some(format!("{} req/s", format_number(rate))), Some(rate)),
            (None, Some(concurrency)) => {
                (Some(format!("c = {concurrency}")), Some(concurrency as f64))
            }
            (None, None) => (None, None),
        };
        let verdict = run.verdict();
        let ttft = run.metrics.ttft.p50;
        LibraryRow {
            cells: vec![
                run.label(),
                run.verdict_label(),
                text(run.identity.model.as_ref().map(ToString::to_string)),
                text(run.identity.engine.as_ref().map(ToString::to_string)),
                text(run.identity.gpu.as_ref().map(ToString::to_string)),
                text(load_text),
                text(
                    run.workload
                        .requests
                        .map(|requests| format_count(requests as usize)),
                ),
                text(ttft.map(format_duration_ms)),
            ],
            verdict_rank: match verdict {
                Verdict::Valid => 0,
                Verdict::ValidLegacy(_) | Verdict::Foreign => 1,
                Verdict::Invalid => 2,
            },
            load,
            requests: run.workload.requests,
            ttft_p50_ms: ttft,
        }
    }

    /// How this row compares with `other` by `column`, rows without a value last.
    pub fn compare(&self, other: &Self, column: LibraryColumn) -> Ordering {
        fn numbers(a: Option<f64>, b: Option<f64>) -> Ordering {
            match (a, b) {
                (Some(a), Some(b)) => a.total_cmp(&b),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            }
        }
        let text = |position: usize| {
            let (a, b) = (&self.cells[position], &other.cells[position]);
            match (a.as_str() == MISSING, b.as_str() == MISSING) {
                (false, true) => Ordering::Less,
                (true, false) => Ordering::Greater,
                _ => a.to_lowercase().cmp(&b.to_lowercase()),
            }
        };
        match column {
            LibraryColumn::Loaded => Ordering::Equal,
            LibraryColumn::Run => text(0),
            LibraryColumn::Verdict => self.verdict_rank.cmp(&other.verdict_rank),
            LibraryColumn::Model => text(2),
            LibraryColumn::Engine => text(3),
            LibraryColumn::Gpu => text(4),
            LibraryColumn::Load => numbers(self.load, other.load),
            LibraryColumn::Requests => numbers(
                self.requests.map(|n| n as f64),
                other.requests.map(|n| n as f64),
            ),
            LibraryColumn::TtftP50 => numbers(self.ttft_p50_ms, other.ttft_p50_ms),
        }
    }
}

impl LibraryRow {
    /// Whether the row has a value in `column` (rows without one sort last either way).
    fn has(&self, column: LibraryColumn) -> bool {
        match column {
            LibraryColumn::Loaded | LibraryColumn::Run | LibraryColumn::Verdict => true,
            LibraryColumn::Model => self.cells[2] != MISSING,
            LibraryColumn::Engine => self.cells[3] != MISSING,
            LibraryColumn::Gpu => self.cells[4] != MISSING,
            LibraryColumn::Load => self.load.is_some(),
            LibraryColumn::Requests => self.requests.is_some(),
            LibraryColumn::TtftP50 => self.ttft_p50_ms.is_some(),
        }
    }
}

/// The order (indices into `rows`) in which `column` sorts them, ascending or not; rows
/// without a value come last either way, and ties and [`LibraryColumn::Loaded`] keep load
/// order.
pub fn sorted_order(rows: &[LibraryRow], column: LibraryColumn, ascending: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&rows[a], &rows[b]);
        match (a.has(column), b.has(column)) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ if ascending => a.compare(b, column),
            _ => a.compare(b, column).reverse(),
        }
    });
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(name: &str, model: &str, concurrency: u64, ttft_p50: Option<f64>) -> OpenedArtifact {
        let text = json!({
            "schema": "anvil-serving.benchmark/v1", "model": model, "engine": "vllm",
            "concurrency": concurrency, "requests": concurrency * 10,
            "metrics": {"ttft_p50_ms": ttft_p50, "ttft_samples": 1},
        });
        OpenedArtifact::from_text(name, &text.to_string())
    }

    #[test]
    fn a_row_says_what_tells_runs_apart() {
        let row = LibraryRow::of(&run("a.json", "llama-3", 16, Some(412.3)));
        assert_eq!(row.cells[0], "a.json");
        assert_eq!(
            &row.cells[2..],
            ["llama-3", "vllm", "–", "c = 16", "160", "412 ms"]
        );
    }

    #[test]
    fn columns_sort_both_ways_with_missing_values_last() {
        let rows: Vec<LibraryRow> = [
            run("b.json", "qwen", 4, Some(300.0)),
            run("a.json", "Llama", 64, None),
            run("c.json", "mistral", 16, Some(120.0)),
        ]
        .iter()
        .map(LibraryRow::of)
        .collect();
        assert_eq!(sorted_order(&rows, LibraryColumn::Loaded, true), [0, 1, 2]);
        assert_eq!(sorted_order(&rows, LibraryColumn::Run, true), [1, 0, 2]);
        assert_eq!(sorted_order(&rows, LibraryColumn::Model, true), [1, 2, 0]);
        assert_eq!(sorted_order(&rows, LibraryColumn::Load, false), [1, 2, 0]);
        assert_eq!(sorted_order(&rows, LibraryColumn::Verdict, true), [0, 1, 2]);
        assert_eq!(sorted_order(&rows, LibraryColumn::TtftP50, true), [2, 0, 1]);
        // Descending reverses the values; a run without one still sorts last.
        assert_eq!(
            sorted_order(&rows, LibraryColumn::TtftP50, false),
            [0, 2, 1]
        );
        assert_eq!(
            sorted_order(&rows, LibraryColumn::Requests, true),
            [0, 2, 1]
        );
    }
}
