//! Transport accounting (a strobe addition, ARTIFACT.md §12): what happened in the browser
//! before a request left it, read from Resource Timing entries paired with the request whose
//! `fetch()` made them.

use crate::core::schema::rows::RequestTiming;

/// A row whose [`RequestTiming::browser_wait_ms`] is above this has a TTFO that includes time
/// the browser held the request (waiting for a connection, opening one, a CORS preflight, or a
/// busy page) before sending it: time the server never saw. Measured in Chromium 156 against
/// strobe-sim on a loaded 2-core loopback machine, first waves of 16 runs each: after the
/// warm-up the wait was 2.6 ms median and 5.9 ms at most (2 of 64 rows above this bound);
/// without it 11 ms median and up to 46 ms (48 of 64 rows above).
pub const BROWSER_WAIT_FLAG_MS: f64 = 5.0;

/// The most ms between a request's start (read just before `fetch()`) and the `startTime` of
/// the browser's Resource Timing entry for it. The browser stamps the entry inside the
/// `fetch()` call (0.04–2.4 ms later in Chromium 156, 32 fetches in a burst), so the next
/// request's start bounds each entry; this bound matters for the last request alone. It is
/// wide because a busy machine can stop the measuring thread between the two: on a 2-core
/// machine with both cores otherwise busy, its reads stalled up to 170 ms. An entry further
/// from every start is no request of the run.
pub const MAX_FETCH_ENTRY_LAG_MS: f64 = 1_000.0;

/// The fields strobe reads from one `PerformanceResourceTiming` entry, in ms on the page's
/// clock (the one that stamps request starts).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResourceTimingEntry {
    /// `startTime`: when `fetch()` created the request.
    pub start_time_ms: f64,
    /// `fetchStart`.
    pub fetch_start_ms: f64,
    /// `connectStart`: 0 when timing is withheld; equals `fetchStart` on a reused connection.
    pub connect_start_ms: f64,
    /// `connectEnd`: 0 when timing is withheld; equals `fetchStart` on a reused connection.
    pub connect_end_ms: f64,
    /// `requestStart`: just before the browser sent the request; 0 when timing is withheld.
    pub request_start_ms: f64,
    /// `nextHopProtocol`; empty when timing is withheld or unknown.
    pub next_hop_protocol: String,
    /// `responseEnd`: when the response's last byte arrived (reported even when timing is
    /// withheld); 0 while the response has not ended.
    pub response_end_ms: f64,
}

impl ResourceTimingEntry {
    /// The server withheld detailed timing from this page (no `Timing-Allow-Origin` for its
    /// origin): the browser then reports 0 for `requestStart` and the connection times.
    pub fn timing_withheld(&self) -> bool {
        self.request_start_ms == 0.0
    }
}

/// What the browser's transport did for one request, as the row's `new_connection`,
/// `preflight`, `client_queue_ms` and `http_protocol` keys. Each is `None` (written as null)
/// when the browser did not say; nothing is guessed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TransportFacts {
    /// The request opened its own connection: `connectEnd > fetchStart` (on a reused
    /// connection the browser reports `connectStart == connectEnd == fetchStart`). A connection
    /// that the request's own CORS preflight opened looks reused, because the preflight is not
    /// reported separately; its cost shows in `client_queue_ms`.
    pub new_connection: Option<bool>,
    /// A CORS preflight preceded the request. Always `None`: Resource Timing folds the
    /// preflight into the request's own entry and reports no field for it, and the time it
    /// takes cannot be told apart from waiting for a connection or a busy page (both also
    /// delay `requestStart`), so strobe does not infer it. `client_queue_ms` carries the cost.
    pub preflight: Option<bool>,
    /// `requestStart` minus the row's start, in ms: everything the browser did before sending
    /// the request (queueing for a connection, connecting, preflight). Measured from the row's
    /// start (read just before `fetch()`, the origin of its TTFO) rather than from the entry's
    /// `startTime`, which the browser stamps 0.2–0.9 ms later inside `fetch()`, so that
    /// `TTFO − client_queue_ms` is the time from the request leaving the browser.
    pub client_queue_ms: Option<f64>,
    /// `nextHopProtocol`, e.g. `http/1.1` or `h2`.
    pub http_protocol: Option<String>,
}

impl TransportFacts {
    /// The facts one entry gives about the request started at `request_started_ms`.
    pub fn from_entry(entry: &ResourceTimingEntry, request_started_ms: f64) -> Self {
        let http_protocol =
            Some(entry.next_hop_protocol.trim()).filter(|protocol| !protocol.is_empty());
        if entry.timing_withheld() {
            return Self {
                http_protocol: http_protocol.map(str::to_owned),
                ..Self::default()
            };
        }
        let client_queue_ms = entry.request_start_ms - request_started_ms;
        Self {
            new_connection: Some(entry.connect_end_ms > entry.fetch_start_ms),
            preflight: None,
            // A negative wait would mean the two clocks disagree: say nothing rather than guess.
            client_queue_ms: Some(client_queue_ms)
                .filter(|queue_ms| queue_ms.is_finite() && *queue_ms >= 0.0),
            http_protocol: http_protocol.map(str::to_owned),
        }
    }
}

/// Pairs requests with the browser's Resource Timing entries for their URL: `result[i]` is the
/// index in `entries` of the entry of the request started at `request_started_ms[i]`, if any.
///
/// JavaScript runs one task at a time and each start is read immediately before its own
/// `fetch()` call, which stamps the entry's `startTime`, so a request's entry starts at or after
/// its start and at or before the next request's start. Taking requests in order of start, each
/// gets the earliest entry not yet taken in that window, if the entry is at most
/// [`MAX_FETCH_ENTRY_LAG_MS`] after the start. Entries before every start (the warm-up's) and
/// requests without an entry (some failed fetches) stay unpaired; requests started in the same
/// clock tick take their entries in order.
pub fn match_resource_timings(
    request_started_ms: &[f64],
    entries: &[ResourceTimingEntry],
) -> Vec<Option<usize>> {
    let mut by_start: Vec<usize> = (0..request_started_ms.len())
        .filter(|&request| request_started_ms[request].is_finite())
        .collect();
    by_start.sort_by(|&a, &b| request_started_ms[a].total_cmp(&request_started_ms[b]));
    let mut by_entry_start: Vec<usize> = (0..entries.len())
        .filter(|&entry| entries[entry].start_time_ms.is_finite())
        .collect();
    by_entry_start.sort_by(|&a, &b| {
        entries[a]
            .start_time_ms
            .total_cmp(&entries[b].start_time_ms)
    });

    let mut paired: Vec<Option<usize>> = vec![None; request_started_ms.len()];
    let mut next_entry = by_entry_start.iter().peekable();
    for (position, &request) in by_start.iter().enumerate() {
        let start_ms = request_started_ms[request];
        let next_start_ms = by_start
            .get(position + 1)
            .map_or(f64::INFINITY, |&next| request_started_ms[next]);
        let window_end_ms = next_start_ms.min(start_ms + MAX_FETCH_ENTRY_LAG_MS);
        while next_entry
            .next_if(|&&entry| entries[entry].start_time_ms < start_ms)
            .is_some()
        {}
        if let Some(&entry) =
            next_entry.next_if(|&&entry| entries[entry].start_time_ms <= window_end_ms)
        {
            paired[request] = Some(entry);
        }
    }
    paired
}

impl RequestTiming {
    /// Writes the row's transport keys (all four, null where the browser did not say) and its
    /// times from the wire: each measured time minus `client_queue_ms`, null without it. The
    /// measured times stay as they are (docs/develop/accuracy.md, *From the wire*).
    pub fn set_transport(&mut self, facts: &TransportFacts) {
        self.new_connection = Some(facts.new_connection);
        self.preflight = Some(facts.preflight);
        self.client_queue_ms = Some(facts.client_queue_ms);
        self.http_protocol = Some(facts.http_protocol.clone());
        let from_wire =
            |measured_ms: f64| facts.client_queue_ms.map(|queue_ms| measured_ms - queue_ms);
        self.ttfo_from_wire_ms = Some(from_wire(self.time_to_first_output_ms));
        self.ttft_from_wire_ms = Some(from_wire(self.ttft_ms));
        self.e2e_from_wire_ms = Some(from_wire(self.e2e_ms));
    }

    /// The ms of this row's TTFO that passed in the browser before the request was sent
    /// (`client_queue_ms`), when the browser reported it.
    pub fn browser_wait_ms(&self) -> Option<f64> {
        self.client_queue_ms.flatten()
    }

    /// Whether the row's TTFO includes browser-side waiting above [`BROWSER_WAIT_FLAG_MS`];
    /// `None` when the browser did not report the wait.
    pub fn ttfo_includes_browser_wait(&self) -> Option<bool> {
        self.browser_wait_ms()
            .map(|wait_ms| wait_ms > BROWSER_WAIT_FLAG_MS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::choices::ControlledOutputPolicy;
    use crate::core::observe::conclude::conclude_request;
    use crate::core::observe::conclude::RequestOutcome;
    use crate::core::observe::failure::RequestError;
    use crate::core::observe::test_support::*;
    use serde_json::json;
    use serde_json::Value;

    #[test]
    fn transport_facts_from_chromium_entries() {
        // Values from a Chromium 156 run against strobe-sim: a warm request...
        let warm = TransportFacts::from_entry(&entry(630.25, 632.15, None), 629.855);
        assert_eq!(warm.new_connection, Some(false));
        assert_eq!(warm.preflight, None);
        assert_eq!(warm.client_queue_ms, Some(632.15 - 629.855));
        assert_eq!(warm.http_protocol.as_deref(), Some("http/1.1"));
        // ...and a cold one that opened its own connection after its preflight.
        let cold =
            TransportFacts::from_entry(&entry(506.375, 542.495, Some((525.37, 528.435))), 505.475);
        assert_eq!(cold.new_connection, Some(true));
        assert_eq!(cold.client_queue_ms, Some(542.495 - 505.475));
    }

    #[test]
    fn withheld_timing_gives_nulls_never_guesses() {
        let withheld = ResourceTimingEntry {
            start_time_ms: 10.0,
            fetch_start_ms: 10.0,
            next_hop_protocol: String::new(),
            ..ResourceTimingEntry::default()
        };
        assert!(withheld.timing_withheld());
        assert_eq!(
            TransportFacts::from_entry(&withheld, 9.5),
            TransportFacts::default()
        );
        // A protocol the browser did name is kept even when the times are withheld.
        let named = ResourceTimingEntry {
            next_hop_protocol: "h2".to_owned(),
            ..withheld
        };
        assert_eq!(
            TransportFacts::from_entry(&named, 9.5)
                .http_protocol
                .as_deref(),
            Some("h2")
        );
        // A request that seems to leave before it started means the clocks disagree.
        let inconsistent = TransportFacts::from_entry(&entry(10.0, 11.0, None), 12.0);
        assert_eq!(inconsistent.client_queue_ms, None);
        assert_eq!(inconsistent.new_connection, Some(false));
    }

    #[test]
    fn entries_pair_with_the_request_whose_fetch_made_them() {
        let starts = [100.0, 101.0, 102.0, 150.0, 400.0, 700.0];
        let entries = [
            // The warm-up's, before the run: nobody's.
            entry(20.0, 21.0, None),
            // Out of completion order, as the browser lists them.
            entry(150.3, 151.0, None),
            entry(100.4, 101.5, None),
            // Request 1 (101.0) failed without an entry; 102's entry must not go to it.
            entry(102.2, 103.0, None),
            // The thread stopped for 120 ms between request 4's start and its fetch(): the
            // entry is still before the next start, so it is request 4's.
            entry(520.0, 530.0, None),
            // Far after the last start: no request's.
            entry(700.0 + MAX_FETCH_ENTRY_LAG_MS + 1.0, 1_760.0, None),
        ];
        assert_eq!(
            match_resource_timings(&starts, &entries),
            vec![Some(2), None, Some(3), Some(1), Some(4), None]
        );
    }

    #[test]
    fn requests_started_in_one_tick_take_entries_in_order() {
        let starts = [5.0, 5.0, f64::NAN];
        let entries = [
            entry(5.0, 6.0, None),
            entry(5.0, 6.5, None),
            entry(5.0, 7.0, None),
        ];
        // Two requests, three entries in their tick: the third entry is nobody's.
        assert_eq!(
            match_resource_timings(&starts, &entries),
            vec![Some(0), Some(1), None]
        );
        assert_eq!(
            match_resource_timings(&[], &entries),
            Vec::<Option<usize>>::new()
        );
        // An entry stamped in the tick the next request starts in is still the earlier one's.
        let starts = [10.0, 10.5];
        let entries = [entry(10.5, 11.0, None), entry(10.9, 11.5, None)];
        assert_eq!(
            match_resource_timings(&starts, &entries),
            vec![Some(0), Some(1)]
        );
    }

    #[test]
    fn transport_keys_are_written_only_when_set_and_null_when_unknown() {
        let plain = RequestTiming::from_seconds(row_inputs()).expect("valid times");
        let value = serde_json::to_value(&plain).expect("serializable");
        for key in [
            "new_connection",
            "preflight",
            "client_queue_ms",
            "http_protocol",
            "ttfo_from_wire_ms",
            "ttft_from_wire_ms",
            "e2e_from_wire_ms",
        ] {
            assert!(value.get(key).is_none(), "{key}");
        }
        assert_eq!(plain.browser_wait_ms(), None);
        assert_eq!(plain.ttfo_includes_browser_wait(), None);

        let mut accounted = plain.clone();
        accounted.set_transport(&TransportFacts::from_entry(&entry(10.0, 17.5, None), 9.5));
        let value = serde_json::to_value(&accounted).expect("serializable");
        assert_eq!(value["new_connection"], json!(false));
        assert_eq!(value["preflight"], Value::Null);
        assert_eq!(value["client_queue_ms"], json!(8.0));
        assert_eq!(value["http_protocol"], json!("http/1.1"));
        // TTFO 500, TTFT 1000 and E2E 2000 ms, 8 of them before the request left the browser;
        // the measured times stay.
        assert_eq!(value["ttfo_from_wire_ms"], json!(492.0));
        assert_eq!(value["ttft_from_wire_ms"], json!(992.0));
        assert_eq!(value["e2e_from_wire_ms"], json!(1992.0));
        assert_eq!(value["time_to_first_output_ms"], json!(500.0));
        assert_eq!(value["ttft_ms"], json!(1000.0));
        assert_eq!(value["e2e_ms"], json!(2000.0));
        assert_eq!(accounted.browser_wait_ms(), Some(8.0));
        assert_eq!(accounted.ttfo_includes_browser_wait(), Some(true));
        let back: RequestTiming = serde_json::from_value(value).expect("deserializable");
        assert_eq!(back, accounted);
        assert_eq!(back.preflight, Some(None));

        let mut unknown = plain.clone();
        unknown.set_transport(&TransportFacts::default());
        let value = serde_json::to_value(&unknown).expect("serializable");
        for key in [
            "new_connection",
            "preflight",
            "client_queue_ms",
            "http_protocol",
            "ttfo_from_wire_ms",
            "ttft_from_wire_ms",
            "e2e_from_wire_ms",
        ] {
            assert_eq!(value[key], Value::Null, "{key}");
        }
        // Timing withheld (no Timing-Allow-Origin): the browser reports requestStart 0.
        let mut withheld = plain.clone();
        withheld.set_transport(&TransportFacts::from_entry(&entry(10.0, 0.0, None), 9.5));
        assert_eq!(withheld.ttft_from_wire_ms, Some(None));

        let mut quick = plain;
        quick.set_transport(&TransportFacts::from_entry(&entry(10.0, 11.0, None), 9.5));
        assert_eq!(quick.ttfo_includes_browser_wait(), Some(false));
    }

    #[test]
    fn outcomes_take_transport_facts_into_whichever_row_they_carry() {
        let facts = TransportFacts::from_entry(&entry(10.0, 12.0, None), 9.0);
        let mut completed = conclude_request(
            &plan(None, 0, ControlledOutputPolicy::Observe),
            990.0,
            Ok(good_stream("hi")),
            1400.0,
        );
        completed.set_transport(&facts);
        assert_eq!(completed.request_index(), 3);
        assert_eq!(
            completed.row().and_then(RequestTiming::browser_wait_ms),
            Some(3.0)
        );
        let RequestOutcome::Completed(done) = completed else {
            panic!("completes");
        };
        assert_eq!(
            done.row.and_then(|row| row.client_queue_ms),
            Some(Some(3.0))
        );

        let mut invalid = conclude_request(
            &plan(
                Some("ANVIL_REQ_1_00003"),
                0,
                ControlledOutputPolicy::Observe,
            ),
            990.0,
            Ok(good_stream("no marker")),
            1400.0,
        );
        invalid.set_transport(&facts);
        assert!(invalid.row().is_some());
        let record = failed(invalid);
        let row = record
            .response_timing
            .flatten()
            .expect("a row was possible");
        assert_eq!(row.new_connection, Some(Some(false)));

        let mut errored = conclude_request(
            &plan(None, 0, ControlledOutputPolicy::Observe),
            990.0,
            Err(RequestError::cancelled()),
            1400.0,
        );
        let before = errored.clone();
        assert_eq!(errored.row(), None);
        errored.set_transport(&facts);
        assert_eq!(errored, before, "no row, nothing to write");
    }
}
