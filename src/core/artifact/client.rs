//! Building the `client` block (ARTIFACT.md §12, types in [`crate::core::schema::client`])
//! from what a run observed: the warm-up's verdict on its check rounds and its failures, and
//! the stream read statistics summed over the requests.

use thiserror::Error;

use crate::core::observe::accumulate::ReadStats;
use crate::core::observe::conclude::RequestOutcome;
use crate::core::observe::failure::RequestError;
use crate::core::observe::transport::ResourceTimingEntry;
use crate::core::schema::client::{ClientSseCounts, ClientWarmup, WarmupConnections};

impl WarmupConnections {
    /// The verdict on one check round. `endpoints` holds, per endpoint, the Resource Timing
    /// entry of each of its check requests (`None`: the browser kept none). One new connection
    /// anywhere decides it; then missing timing; then, on HTTP/1.x, whether each endpoint's
    /// requests overlapped: one still waiting to be sent while another's response was still
    /// arriving (`max requestStart < min responseEnd`). Over HTTP/1.x a connection carries one
    /// request at a time, so overlapping requests on reused connections prove that many
    /// connections were open.
    pub fn of_round(endpoints: &[Vec<Option<&ResourceTimingEntry>>]) -> Self {
        let entries = || endpoints.iter().flatten();
        let opened = entries()
            .flatten()
            .any(|entry| !entry.timing_withheld() && entry.connect_end_ms > entry.fetch_start_ms);
        if opened {
            return Self::StillOpening;
        }
        if entries().any(|entry| entry.is_none_or(ResourceTimingEntry::timing_withheld)) {
            return Self::Unknown;
        }
        let overlapped = |requests: &Vec<Option<&ResourceTimingEntry>>| {
            let requests: Vec<&ResourceTimingEntry> = requests.iter().flatten().copied().collect();
            let multiplexed = requests
                .iter()
                .all(|entry| matches!(entry.next_hop_protocol.trim(), "h2" | "h3"));
            let last_sent = requests
                .iter()
                .map(|e| e.request_start_ms)
                .fold(f64::MIN, f64::max);
            let first_ended = requests
                .iter()
                .map(|e| e.response_end_ms)
                .fold(f64::MAX, f64::min);
            multiplexed || requests.len() < 2 || last_sent < first_ended
        };
        if endpoints.iter().all(overlapped) {
            Self::Ready
        } else {
            Self::NotShown
        }
    }
}

/// Why the warm-up stopped a run before its first measured request (then no artifact is
/// written: a run whose warm-up failed would only have recorded the same error on every row).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum WarmupError {
    /// Some warm-up requests failed; `first` is the first failure's error.
    #[error(
        "the warm-up failed, so no request was measured: {failed} of {requests} warm-up \
         requests failed, the first with {first}. The warm-up sends what the measured requests \
         send (same URL, headers and model, max_tokens 1): fix what the error names and run \
         again. Turning Warm-up off would not help; every measured request would fail the same \
         way."
    )]
    Failed {
        /// Warm-up requests that failed.
        failed: u64,
        /// Warm-up requests sent.
        requests: u64,
        /// The first failure, with its type and sanitized reason.
        first: RequestError,
    },
    /// The user cancelled during the warm-up.
    #[error("the run was cancelled during the warm-up, before any request was measured")]
    Cancelled,
}

impl WarmupError {
    /// The outcome of a warm-up of `requests` requests, given each one's error (if it failed).
    /// `duration_ms` goes into the [`ClientWarmup`] record when none failed.
    pub fn check(
        requests: u64,
        duration_ms: f64,
        errors: impl IntoIterator<Item = RequestError>,
    ) -> Result<ClientWarmup, Self> {
        let mut errors = errors.into_iter();
        match errors.next() {
            None => Ok(ClientWarmup {
                requests,
                duration_ms,
                failures: 0,
                check_rounds: None,
                connections: None,
            }),
            Some(first) => Err(Self::Failed {
                failed: 1 + errors.count() as u64,
                requests,
                first,
            }),
        }
    }
}

impl ClientSseCounts {
    /// Sums per-request read statistics.
    pub fn total<'a>(stats: impl IntoIterator<Item = &'a ReadStats>) -> Self {
        stats
            .into_iter()
            .fold(Self::default(), |total, stats| Self {
                reads: total.reads.saturating_add(stats.reads),
                events: total.events.saturating_add(stats.events),
                events_sharing_a_read: total
                    .events_sharing_a_read
                    .saturating_add(stats.events_sharing_a_read),
                buffered_streams: total.buffered_streams + u64::from(stats.looks_buffered()),
            })
    }

    /// Sums the read statistics of the completed requests among `outcomes` (failure records
    /// keep no read statistics).
    pub fn of_outcomes(outcomes: &[RequestOutcome]) -> Self {
        Self::total(outcomes.iter().filter_map(|outcome| match outcome {
            RequestOutcome::Completed(completed) => Some(&completed.read_stats),
            RequestOutcome::Failed(_) => None,
        }))
    }
}
