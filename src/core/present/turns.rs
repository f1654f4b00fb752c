//! TTFT by turn and the history tokens per turn: where a conversation run shows the prefix
//! cache at work.
//!
//! A workload file played as sessions (docs/guide/workloads.md, *Conversations as sessions*) sends
//! turn k with the history of turns 0…k−1, so later turns carry longer prompts; a server that
//! caches the shared prefix answers them about as fast as the first, one that does not answers
//! them slower and slower. This module owns [`turns_table`]: from a run's rows and failures
//! carrying `workload.turn`, per turn index the requests, the failures, TTFT's nearest-rank
//! p50 and p90 (the artifact's percentiles) and the server's prompt and cached tokens
//! (`usage`, history included) at their nearest-rank p50. Only a run whose sessions have more
//! than one turn has a table. The page and `strobe-artifact summary` render [`TurnsTable::cells`].

use std::collections::BTreeMap;

use crate::core::format::{format_duration_ms, format_number};
use crate::core::python::stats::nearest_rank;
use crate::core::read::opened::OpenedArtifact;

/// One turn index of a conversation run.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnRow {
    /// The turn's place in its session, from 0.
    pub turn: u64,
    /// Requests of this turn: rows and failures (a turn not sent because an earlier turn of
    /// its session failed is a failure too).
    pub requests: u64,
    /// Of them, failed.
    pub failed: u64,
    /// Nearest-rank p50 of the successful rows' TTFT, ms.
    pub ttft_p50_ms: Option<f64>,
    /// Nearest-rank p90 of the successful rows' TTFT, ms.
    pub ttft_p90_ms: Option<f64>,
    /// Nearest-rank p50 of the server's prompt tokens (`usage.prompt_tokens`: the turn's text
    /// and the history before it, in the model's tokens); `None` when no row has them.
    pub prompt_tokens_p50: Option<u64>,
    /// Nearest-rank p50 of the prompt tokens the server served from its prefix cache; `None`
    /// when no row says.
    pub cached_tokens_p50: Option<u64>,
}

/// TTFT and prompt sizes by turn index, in turn order.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnsTable {
    /// One per turn index any request reached, from 0.
    pub turns: Vec<TurnRow>,
    /// Sessions seen (distinct `workload.session`).
    pub sessions: u64,
}

/// The table of a run whose rows or failures carry `workload.turn` with some turn above 0;
/// `None` for every other run (single-turn workloads, synthetic prompts, other tools' files).
pub fn turns_table(run: &OpenedArtifact) -> Option<TurnsTable> {
    #[derive(Default)]
    struct Gathered {
        requests: u64,
        failed: u64,
        ttfts: Vec<f64>,
        prompt_tokens: Vec<f64>,
        cached_tokens: Vec<f64>,
    }
    let mut by_turn: BTreeMap<u64, Gathered> = BTreeMap::new();
    let mut sessions: Vec<u64> = Vec::new();
    for row in &run.rows {
        let Some(origin) = row.origin else { continue };
        let Some(turn) = origin.turn else { continue };
        sessions.extend(origin.session);
        let gathered = by_turn.entry(turn).or_default();
        gathered.requests += 1;
        gathered.ttfts.extend(row.ttft_ms);
        gathered
            .prompt_tokens
            .extend(row.prompt_tokens.map(|tokens| tokens as f64));
        gathered
            .cached_tokens
            .extend(row.cached_tokens.map(|tokens| tokens as f64));
    }
    for failure in &run.failures {
        let Some(origin) = failure.origin else {
            continue;
        };
        let Some(turn) = origin.turn else { continue };
        sessions.extend(origin.session);
        let gathered = by_turn.entry(turn).or_default();
        gathered.requests += 1;
        gathered.failed += 1;
    }
    if by_turn.keys().all(|turn| *turn == 0) {
        return None;
    }
    sessions.sort_unstable();
    sessions.dedup();
    let p = |values: &mut Vec<f64>, percent: u32| {
        values.sort_by(f64::total_cmp);
        nearest_rank(values, percent)
    };
    let turns = by_turn
        .into_iter()
        .map(|(turn, mut gathered)| TurnRow {
            turn,
            requests: gathered.requests,
            failed: gathered.failed,
            ttft_p50_ms: p(&mut gathered.ttfts, 50),
            ttft_p90_ms: p(&mut gathered.ttfts, 90),
            prompt_tokens_p50: p(&mut gathered.prompt_tokens, 50).map(|tokens| tokens as u64),
            cached_tokens_p50: p(&mut gathered.cached_tokens, 50).map(|tokens| tokens as u64),
        })
        .collect();
    Some(TurnsTable {
        turns,
        sessions: sessions.len() as u64,
    })
}

impl TurnsTable {
    /// Whether any row says how much of its prompt the prefix cache served.
    pub fn has_cached_tokens(&self) -> bool {
        self.turns.iter().any(|row| row.cached_tokens_p50.is_some())
    }

    /// The column headers, matching [`Self::cells`].
    pub fn header(&self) -> Vec<&'static str> {
        let mut header = vec![
            "turn",
            "requests",
            "failed",
            "TTFT p50",
            "TTFT p90",
            "prompt tokens p50",
        ];
        if self.has_cached_tokens() {
            header.push("cached tokens p50");
        }
        header
    }

    /// Each turn's cells as text, `—` where there is no value.
    pub fn cells(&self) -> Vec<Vec<String>> {
        let dash = || "—".to_owned();
        let cached = self.has_cached_tokens();
        self.turns
            .iter()
            .map(|row| {
                let mut cells = vec![
                    row.turn.to_string(),
                    row.requests.to_string(),
                    row.failed.to_string(),
                    row.ttft_p50_ms.map_or_else(dash, format_duration_ms),
                    row.ttft_p90_ms.map_or_else(dash, format_duration_ms),
                    row.prompt_tokens_p50
                        .map_or_else(dash, |tokens| format_number(tokens as f64)),
                ];
                if cached {
                    cells.push(
                        row.cached_tokens_p50
                            .map_or_else(dash, |tokens| format_number(tokens as f64)),
                    );
                }
                cells
            })
            .collect()
    }

    /// One sentence under the table: what the columns are, and why prompt tokens may be
    /// missing.
    pub fn note(&self) -> String {
        let mut note = format!(
            "{} sessions; turn k was sent with the history of turns 0…k−1. Prompt tokens are \
             the server's own count (usage), history included: where TTFT stays flat while \
             they grow, the prefix cache is serving the history.",
            self.sessions
        );
        if self.turns.iter().all(|row| row.prompt_tokens_p50.is_none()) {
            note.push_str(" The server reported no usage, so prompt tokens are not known.");
        }
        note
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::read::opened::views::{FailureView, RowView};
    use crate::core::read::opened::workload::OriginView;

    fn origin(session: u64, turn: u64) -> Option<OriginView> {
        Some(OriginView {
            record: Some(session),
            session: Some(session),
            turn: Some(turn),
        })
    }

    fn row(session: u64, turn: u64, ttft: f64, prompt: Option<u64>) -> RowView {
        RowView {
            ttft_ms: Some(ttft),
            prompt_tokens: prompt,
            origin: origin(session, turn),
            ..RowView::default()
        }
    }

    fn run(rows: Vec<RowView>, failures: Vec<FailureView>) -> OpenedArtifact {
        let mut run = OpenedArtifact::from_text("run.json", "{}");
        run.rows = rows;
        run.failures = failures;
        run
    }

    #[test]
    fn turns_gather_ttft_and_the_servers_prompt_tokens() {
        let rows = vec![
            row(0, 0, 300.0, Some(40)),
            row(1, 0, 320.0, Some(44)),
            row(2, 0, 310.0, Some(42)),
            row(0, 1, 120.0, Some(190)),
            row(1, 1, 140.0, Some(200)),
            row(0, 2, 125.0, None),
        ];
        let failures = vec![FailureView {
            origin: origin(2, 1),
            ..FailureView::default()
        }];
        let table = turns_table(&run(rows, failures)).expect("a conversation run");
        assert_eq!(table.sessions, 3);
        assert_eq!(
            table.turns[0],
            TurnRow {
                turn: 0,
                requests: 3,
                failed: 0,
                ttft_p50_ms: Some(310.0),
                ttft_p90_ms: Some(320.0),
                prompt_tokens_p50: Some(42),
                cached_tokens_p50: None,
            }
        );
        let second = &table.turns[1];
        assert_eq!((second.requests, second.failed), (3, 1));
        assert_eq!(second.ttft_p50_ms, Some(120.0), "nearest rank of two");
        assert_eq!(second.prompt_tokens_p50, Some(190));
        assert_eq!(table.turns[2].prompt_tokens_p50, None);
        assert!(!table.has_cached_tokens());
        assert_eq!(table.header().len(), 6);
        assert_eq!(
            table.cells()[2],
            ["2", "1", "0", "125 ms", "125 ms", "—"].map(String::from)
        );
        assert!(table.note().starts_with("3 sessions"));
    }

    #[test]
    fn a_turn_of_only_failures_and_cached_tokens_show() {
        let mut cached = row(0, 1, 90.0, Some(500));
        cached.cached_tokens = Some(480);
        let rows = vec![row(0, 0, 300.0, Some(40)), cached];
        let failures = vec![FailureView {
            origin: origin(0, 2),
            ..FailureView::default()
        }];
        let table = turns_table(&run(rows, failures)).expect("a conversation run");
        assert_eq!(table.turns.len(), 3);
        assert_eq!(table.turns[2].ttft_p50_ms, None);
        assert_eq!(table.turns[1].cached_tokens_p50, Some(480));
        assert_eq!(table.header().last(), Some(&"cached tokens p50"));
        assert_eq!(table.cells()[0][6], "—");
        assert_eq!(table.cells()[2][3], "—");
    }

    #[test]
    fn single_turn_and_synthetic_runs_have_no_table() {
        assert_eq!(turns_table(&run(Vec::new(), Vec::new())), None);
        let first_turns = vec![row(0, 0, 300.0, Some(40)), row(1, 0, 310.0, Some(41))];
        assert_eq!(turns_table(&run(first_turns, Vec::new())), None);
        let synthetic = RowView {
            ttft_ms: Some(100.0),
            ..RowView::default()
        };
        assert_eq!(turns_table(&run(vec![synthetic], Vec::new())), None);
        let no_usage = turns_table(&run(
            vec![row(0, 0, 300.0, None), row(0, 1, 100.0, None)],
            Vec::new(),
        ))
        .expect("two turns");
        assert!(no_usage.note().ends_with("prompt tokens are not known."));
    }
}
