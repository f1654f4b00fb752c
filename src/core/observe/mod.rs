//! Per-request observation: from timestamped stream events to a timing row or a failure record.
//!
//! This module owns ARTIFACT.md §4.2-§4.3 (what a stream yields and when it is valid), §5 (the
//! `request_timings[]` row), §6 (canary, controlled output, disposition, the `failures[]` object)
//! and the per-row additions of §12, including the transport accounting read from the browser's
//! Resource Timing entries ([`TransportFacts`](crate::core::observe::transport::TransportFacts), paired by [`match_resource_timings`](crate::core::observe::transport::match_resource_timings)) and the
//! optional per-read traces. It never reads a clock: the caller stamps each network read
//! with one `f64` millisecond reading ([`StreamAccumulator::on_read`](crate::core::observe::accumulate::StreamAccumulator::on_read)), and every event decoded
//! from that read carries that arrival time, so TTFO and TTFT are the arrival times of the reads
//! that carried the first reasoning or content delta (§12; a single read that carries both gives
//! TTFO == TTFT, where the reference's two clock reads differed by ~1 µs, §11.5).
//!
//! Times are kept in **seconds** internally, `(now_ms - start_ms) / 1000.0`, and every `_ms` field
//! is `seconds * 1000.0`, exactly as the reference producer did (§11.4), so derived values are
//! bit-identical to what it would have written for the same clock readings.

//!
//! In order: [`accumulate`] (events to a stream result, and its validity), [`contract`] (canary
//! and controlled output), [`row`] (the timing row), [`transport`] (Resource Timing facts),
//! [`failure`] (failure records and request errors), [`conclude`] (the one call per request),
//! [`dispatch`] (when an open-loop request went out against when it was due),
//! and [`reading`], which chains the SSE decoder, the chunk reader and the accumulator for one
//! network read. The row and failure *types* are the artifact's
//! ([`crate::core::schema::rows`]); this module builds them.

pub mod accumulate;
pub mod conclude;
pub mod contract;
pub mod dispatch;
pub mod failure;
pub mod reading;
pub mod row;
pub mod transport;

#[cfg(test)]
pub(crate) mod test_support;
