//! Building `client.from_wire` (type in [`crate::core::schema::from_wire`]): the run's TTFO,
//! TTFT and E2E counted from the moment each request left the browser, summarized over the
//! successful rows that carry a wire time.

use serde_json::Map;

use crate::core::artifact::metrics::write_distribution_family;
use crate::core::schema::from_wire::FromWireBlock;
use crate::core::schema::rows::RequestTiming;

/// Why a run has no time from the wire, when none of its rows has one.
pub const NO_WIRE_TIME_REASON: &str = "the browser reported no request's client_queue_ms: the \
    server sent no Timing-Allow-Origin header for the page's origin (a proxy can add it, e.g. \
    nginx: add_header Timing-Allow-Origin $http_origin always)";

/// Reads one row's value of a family.
type RowValue = fn(&RequestTiming) -> Option<f64>;

/// The families the block holds: (`metrics` key prefix, the row's value on the wire basis).
const FAMILIES: [(&str, RowValue); 4] = [
    ("time_to_first_output", |row| {
        row.ttfo_from_wire_ms.flatten()
    }),
    ("ttft", |row| row.ttft_from_wire_ms.flatten()),
    ("e2e", |row| row.e2e_from_wire_ms.flatten()),
    ("client_queue", |row| row.client_queue_ms.flatten()),
];

impl FromWireBlock {
    /// The block of a run's successful rows.
    pub fn of_rows(rows: &[RequestTiming]) -> Self {
        let with_wire_time = rows
            .iter()
            .filter(|row| row.client_queue_ms.flatten().is_some())
            .count() as u64;
        let mut statistics = Map::new();
        for (prefix, value) in FAMILIES {
            let values: Vec<f64> = rows.iter().filter_map(value).collect();
            write_distribution_family(&mut statistics, prefix, "_ms", &values);
        }
        let unavailable = (with_wire_time == 0).then(|| {
            if rows.is_empty() {
                "no request succeeded".to_owned()
            } else {
                NO_WIRE_TIME_REASON.to_owned()
            }
        });
        Self {
            rows: rows.len() as u64,
            rows_with_wire_time: with_wire_time,
            unavailable,
            statistics,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::observe::test_support::{entry, row_inputs};
    use crate::core::observe::transport::TransportFacts;
    use serde_json::Value;

    fn row(index: u64, ttft_s: f64, queue_ms: Option<f64>) -> RequestTiming {
        let mut inputs = row_inputs();
        inputs.request_index = index;
        inputs.ttfo_s = Some(ttft_s);
        inputs.ttft_s = Some(ttft_s);
        inputs.e2e_s = ttft_s + 1.0;
        let mut row = RequestTiming::from_seconds(inputs).expect("valid times");
        let facts = match queue_ms {
            // Started at 100 ms; the request left the browser `queue_ms` later.
            Some(queue_ms) => {
                TransportFacts::from_entry(&entry(100.1, 100.0 + queue_ms, None), 100.0)
            }
            None => TransportFacts::default(),
        };
        row.set_transport(&facts);
        row
    }

    #[test]
    fn the_block_summarizes_the_rows_that_have_a_wire_time() {
        let rows = [
            row(0, 0.010, Some(1.5)),
            row(1, 0.020, Some(2.5)),
            row(2, 0.030, None),
        ];
        let block = FromWireBlock::of_rows(&rows);
        assert_eq!(block.rows, 3);
        assert_eq!(block.rows_with_wire_time, 2);
        assert_eq!(block.unavailable, None);
        assert_eq!(block.statistic("ttft_samples"), Some(2.0));
        // TTFT 10 − 1.5 and 20 − 2.5 ms; nearest-rank median of two is the first.
        assert_eq!(block.statistic("ttft_p50_ms"), Some(8.5));
        assert_eq!(block.statistic("ttft_max_ms"), Some(17.5));
        assert_eq!(block.statistic("time_to_first_output_mean_ms"), Some(13.0));
        assert_eq!(block.statistic("e2e_min_ms"), Some(1_008.5));
        assert_eq!(block.statistic("client_queue_p95_ms"), Some(2.5));
        let value = serde_json::to_value(&block).expect("serializable");
        assert_eq!(value["rows_with_wire_time"], 2);
        assert!(value.get("unavailable").is_none());
        assert_eq!(value["ttft_p50_ms"], 8.5);
        let back: FromWireBlock = serde_json::from_value(value).expect("deserializable");
        assert_eq!(back, block);
    }

    #[test]
    fn without_timing_the_block_says_why_and_holds_nulls() {
        let block = FromWireBlock::of_rows(&[row(0, 0.010, None)]);
        assert_eq!(block.rows_with_wire_time, 0);
        assert!(block
            .unavailable
            .as_deref()
            .is_some_and(|reason| reason.contains("Timing-Allow-Origin")));
        assert_eq!(block.statistic("ttft_samples"), Some(0.0));
        assert_eq!(block.statistics.get("ttft_p50_ms"), Some(&Value::Null));
        let empty = FromWireBlock::of_rows(&[]);
        assert_eq!(empty.unavailable.as_deref(), Some("no request succeeded"));
    }
}
