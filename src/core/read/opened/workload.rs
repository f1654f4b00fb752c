//! What a run's traffic was, read back: strobe's `workload` block ([`WorkloadBlockView`]) and
//! each row's and failure's place in it ([`OriginView`]), tolerantly (the validator's
//! `workload-block` and `workload-origin` rules judge them). The comparison reads the block to
//! say when two runs sent different traffic; the turns table reads the origins.

use serde_json::{Map, Value};

use crate::core::read::opened::text::{capped_string, CappedText};

/// The `workload` block: where the requests came from and how they were sent. Every field is
/// `None` when absent or mistyped.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkloadBlockView {
    /// `source`: `file` or `synthetic`.
    pub source: Option<CappedText>,
    /// `endpoint`: `chat` or `completions`.
    pub endpoint: Option<CappedText>,
    /// `file.format`, e.g. `sharegpt`.
    pub format: Option<CappedText>,
    /// `file.name`, as the user gave it.
    pub name: Option<CappedText>,
    /// `file.sha256`: the same file gives the same hash.
    pub sha256: Option<CappedText>,
    /// `sending.turns`: `first` or `all`.
    pub turns: Option<CappedText>,
    /// `sending.order`: `file` or `shuffle`.
    pub order: Option<CappedText>,
    /// `sending.seed`: the shuffle's seed.
    pub seed: Option<i64>,
    /// `sending.output_lengths`: `file` or `fixed`.
    pub output_lengths: Option<CappedText>,
    /// `sending.history`: `live` or `recorded`.
    pub history: Option<CappedText>,
    /// `sending.trace_speed`, for a trace.
    pub trace_speed: Option<f64>,
    /// `sending.sessions`.
    pub sessions: Option<u64>,
    /// `sending.requests`.
    pub requests: Option<u64>,
}

impl WorkloadBlockView {
    /// Reads a `workload` object.
    pub fn from_json(block: &Map<String, Value>) -> Self {
        let file = |key: &str| block.get("file").and_then(|file| file.get(key));
        let sending = |key: &str| block.get("sending").and_then(|sending| sending.get(key));
        Self {
            source: capped_string(block.get("source")),
            endpoint: capped_string(block.get("endpoint")),
            format: capped_string(file("format")),
            name: capped_string(file("name")),
            sha256: capped_string(file("sha256")),
            turns: capped_string(sending("turns")),
            order: capped_string(sending("order")),
            seed: sending("seed").and_then(Value::as_i64),
            output_lengths: capped_string(sending("output_lengths")),
            history: capped_string(sending("history")),
            trace_speed: sending("trace_speed")
                .and_then(Value::as_f64)
                .filter(|speed| speed.is_finite()),
            sessions: sending("sessions").and_then(Value::as_u64),
            requests: sending("requests").and_then(Value::as_u64),
        }
    }

    /// The order as a comparison shows it: `file`, or `shuffle (seed 7)` (two shuffles by
    /// different seeds send the records in different orders).
    pub fn order_text(&self) -> Option<String> {
        let order = self.order.as_ref()?;
        Some(match (order.as_str(), self.seed) {
            ("shuffle", Some(seed)) => format!("shuffle (seed {seed})"),
            _ => order.to_string(),
        })
    }
}

/// A row's or failure's `workload`: the record, session and turn it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OriginView {
    /// `record`: the record's place among the file's usable records.
    pub record: Option<u64>,
    /// `session`: the session's place in the run.
    pub session: Option<u64>,
    /// `turn`: the turn's place in its session, from 0.
    pub turn: Option<u64>,
}

impl OriginView {
    /// Reads an entry's `workload` key, when it is an object.
    pub fn of_entry(entry: &Map<String, Value>) -> Option<Self> {
        let origin = entry.get("workload")?.as_object()?;
        let number = |key: &str| origin.get(key).and_then(Value::as_u64);
        Some(Self {
            record: number("record"),
            session: number("session"),
            turn: number("turn"),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_block_and_an_origin_read_tolerantly() {
        let block = json!({"source": "file", "endpoint": "chat",
            "file": {"format": "sharegpt", "name": "a.json", "sha256": "sha256:ab"},
            "sending": {"turns": "all", "order": "shuffle", "seed": 7, "trace_speed": null,
                        "sessions": "2", "requests": 9}});
        let view = WorkloadBlockView::from_json(block.as_object().expect("object"));
        assert_eq!(
            view.format.as_ref().map(CappedText::as_str),
            Some("sharegpt")
        );
        assert_eq!(view.order_text().as_deref(), Some("shuffle (seed 7)"));
        assert_eq!(view.sessions, None, "a string is not a count");
        assert_eq!(view.requests, Some(9));
        assert_eq!(view.trace_speed, None);
        assert_eq!(WorkloadBlockView::default().order_text(), None);

        let row = json!({"workload": {"record": 4, "session": 1, "turn": -1}});
        let origin = OriginView::of_entry(row.as_object().expect("object")).expect("origin");
        assert_eq!(
            (origin.record, origin.session, origin.turn),
            (Some(4), Some(1), None)
        );
        assert_eq!(OriginView::of_entry(&Map::new()), None);
    }
}
