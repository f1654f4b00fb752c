//! The sentence the page (and `strobe-artifact workload`) shows about a workload file before
//! anything is sent: the format, how many records are usable and why the others are not, and a
//! trace's length. Counts and reasons only, never a prompt's text.

use crate::core::format::{counted, format_count};

use super::{WorkloadFormat, WorkloadSummary};

impl WorkloadSummary {
    /// E.g. "ShareGPT: 21 of 24 conversations usable, 3 have no reply." or "Mooncake trace:
    /// 40 requests over 12.5 s."
    pub fn sentence(&self) -> String {
        let (one, many) = record_unit(self.format);
        let mut text = format!("{}: ", self.format.label());
        // An AIPerf single_turn record is a turn: records sharing a session_id are one session.
        let by_turn = self.format == WorkloadFormat::AiperfSingleTurn;
        let usable = if by_turn { self.turns } else { self.sessions };
        if usable == self.records {
            text.push_str(&counted(self.records, one, many));
        } else {
            text.push_str(&format!(
                "{usable} of {} usable",
                counted(self.records, one, many)
            ));
        }
        if by_turn && self.turns > self.sessions {
            text.push_str(&format!(
                " in {} by session_id",
                counted(self.sessions, "session", "sessions")
            ));
        } else if self.turns > self.sessions {
            text.push_str(&format!(" ({})", counted(self.turns, "turn", "turns")));
        }
        if let Some(span_ms) = self.span_ms {
            text.push_str(&format!(" over {}", seconds(span_ms)));
        }
        for skipped in &self.skipped {
            text.push_str(&format!(
                ", {} {}",
                skipped.count,
                skipped.reason.words_for(skipped.count)
            ));
        }
        text.push('.');
        text
    }
}

/// What a record of `format` is called, singular and plural.
fn record_unit(format: WorkloadFormat) -> (&'static str, &'static str) {
    match format {
        WorkloadFormat::Sharegpt => ("conversation", "conversations"),
        WorkloadFormat::OpenaiChat
        | WorkloadFormat::PromptColumns
        | WorkloadFormat::AiperfSingleTurn => ("record", "records"),
        WorkloadFormat::Csv => ("row", "rows"),
        WorkloadFormat::Text => ("line", "lines"),
        WorkloadFormat::AiperfMultiTurn => ("session", "sessions"),
        WorkloadFormat::MooncakeTrace | WorkloadFormat::Burstgpt => ("request", "requests"),
    }
}

/// Whole milliseconds as seconds for people: "12.5 s", "0 s", "3,600 s".
fn seconds(ms: u64) -> String {
    let tenths = (ms + 50) / 100;
    let whole = format_count(usize::try_from(tenths / 10).unwrap_or(usize::MAX));
    match tenths % 10 {
        0 => format!("{whole} s"),
        fraction => format!("{whole}.{fraction} s"),
    }
}
