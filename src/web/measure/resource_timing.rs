//! The browser's Resource Timing entries of the measured requests, paired with the request
//! whose `fetch()` made them and written into the rows as transport facts
//! (docs/design/measurement.md, *Transport facts per request*).

use std::collections::{BTreeMap, BTreeSet};

use crate::core::observe::conclude::RequestOutcome;
use crate::core::observe::transport::{
    match_resource_timings, ResourceTimingEntry, TransportFacts,
};

use crate::web::measure::live_run::{ENTRY_WAIT_ROUNDS, ENTRY_WAIT_STEP_MS};
use crate::web::platform::clock::resource_timing_entries;
use crate::web::platform::scope;
use crate::web::platform::timers::sleep_ms;

/// Pairs every measured request with the browser's Resource Timing entry for it and writes the
/// transport facts into its row (null facts when the browser kept no entry). `sent` says, per
/// request index, which endpoint of `urls` it went to and when its `fetch()` was called.
pub(super) async fn account_transport(
    outcomes: &mut [RequestOutcome],
    sent: &BTreeMap<u64, (usize, f64)>,
    urls: &[String],
) {
    let rows: BTreeSet<u64> = outcomes
        .iter()
        .filter(|outcome| outcome.row().is_some())
        .map(RequestOutcome::request_index)
        .collect();
    let entries = resource_entries(sent, urls, &rows).await;
    for outcome in outcomes.iter_mut() {
        let index = outcome.request_index();
        if let Some((_, sent_ms)) = sent.get(&index) {
            let facts = entries
                .get(&index)
                .and_then(Option::as_ref)
                .map(|entry| TransportFacts::from_entry(entry, *sent_ms))
                .unwrap_or_default();
            outcome.set_transport(&facts);
        }
    }
}

/// The browser's Resource Timing entry of every request in `sent` (request index → endpoint
/// of `urls` and when its `fetch()` was called); `None` when the browser kept none. Entries
/// still missing for the `awaited` requests are waited for a little, once for all endpoints:
/// the browser adds an entry when the response ends, which can be a moment after the
/// stream's last read.
pub(super) async fn resource_entries(
    sent: &BTreeMap<u64, (usize, f64)>,
    urls: &[String],
    awaited: &BTreeSet<u64>,
) -> BTreeMap<u64, Option<ResourceTimingEntry>> {
    let groups: Vec<EndpointRequests> = urls
        .iter()
        .enumerate()
        .map(|(endpoint, url)| EndpointRequests::new(url, endpoint, sent, awaited))
        .filter(|group| !group.indices.is_empty())
        .collect();
    let mut rounds = 0;
    let mut paired = pair_entries(&groups);
    while rounds < ENTRY_WAIT_ROUNDS
        && !groups
            .iter()
            .zip(&paired)
            .all(|(group, (_, pairs))| group.complete(pairs))
    {
        sleep_ms(ENTRY_WAIT_STEP_MS).await;
        paired = pair_entries(&groups);
        rounds += 1;
    }
    let mut found = BTreeMap::new();
    for (group, (entries, pairs)) in groups.iter().zip(&paired) {
        for (index, pair) in group.indices.iter().zip(pairs) {
            found.insert(*index, pair.and_then(|entry| entries.get(entry)).cloned());
        }
    }
    found
}

/// The requests sent to one endpoint's URL, in index order.
pub(super) struct EndpointRequests<'a> {
    url: &'a str,
    indices: Vec<u64>,
    /// When each one's `fetch()` was called.
    starts: Vec<f64>,
    /// Whether each one's entry is worth waiting for (a measured request's only if it has a
    /// row: a failed fetch may leave none).
    awaited: Vec<bool>,
}

impl<'a> EndpointRequests<'a> {
    fn new(
        url: &'a str,
        endpoint: usize,
        sent: &BTreeMap<u64, (usize, f64)>,
        awaited: &BTreeSet<u64>,
    ) -> Self {
        let (indices, starts): (Vec<u64>, Vec<f64>) = sent
            .iter()
            .filter(|(_, (to, _))| *to == endpoint)
            .map(|(index, (_, sent_ms))| (*index, *sent_ms))
            .unzip();
        let awaited = indices
            .iter()
            .map(|index| awaited.contains(index))
            .collect();
        Self {
            url,
            indices,
            starts,
            awaited,
        }
    }

    /// Whether every awaited request found its entry.
    fn complete(&self, pairs: &[Option<usize>]) -> bool {
        pairs
            .iter()
            .zip(&self.awaited)
            .all(|(pair, awaited)| pair.is_some() || !awaited)
    }
}

/// Each endpoint's Resource Timing entries now, and which entry each of its requests matches.
pub(super) fn pair_entries(
    groups: &[EndpointRequests<'_>],
) -> Vec<(Vec<ResourceTimingEntry>, Vec<Option<usize>>)> {
    let urls: Vec<&str> = groups.iter().map(|group| group.url).collect();
    groups
        .iter()
        .zip(resource_timing_entries(&urls))
        .map(|(group, entries)| {
            let pairs = match_resource_timings(&group.starts, &entries);
            (entries, pairs)
        })
        .collect()
}

/// Makes sure the browser keeps a Resource Timing entry for every request of the run, warm-up
/// included (the default buffer holds 250), so protocols and transport facts are not silently
/// lost.
pub(super) fn prepare_resource_timing(requests: u64) {
    if let Some(performance) = scope::performance() {
        performance.clear_resource_timings();
        let size = (requests + 64).min(u32::MAX as u64) as u32;
        performance.set_resource_timing_buffer_size(size);
    }
}
