//! What one network read costs before the next one can be stamped: the per-read path of a
//! measured request (`core::observe::reading::StreamReading::on_bytes`: SSE decoding, reading the event
//! as a chat-completions chunk, the stream accumulator), natively. In the browser the same code
//! runs compiled to wasm, between reads of up to 64 concurrent streams on one thread, so every
//! microsecond here can delay another stream's timestamp (docs/design/measurement.md, *Reading*).
//!
//! The streams are vLLM's shape (`tests/fixtures/sse/vllm-reasoning.sse`: role chunk, reasoning
//! and content deltas, finish, usage, `[DONE]`), one event per read, 64 streams at a time. It
//! prints, per stage, nanoseconds per read: the best and the median of the repeats.
//!
//! Run with `cargo bench --bench read_path`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Instant;

use strobe::core::observe::accumulate::StreamAccumulator;
use strobe::core::observe::reading::StreamReading;
use strobe::core::stream::sse::{ChunkEvent, SseDecoder};

const STREAMS: usize = 64;
/// Streams read per repeat (64 at a time, as at concurrency 64).
const ROUNDS: usize = 200;
const REPEATS: usize = 9;

/// The fixture's events, each with its blank line: one network read each.
fn events() -> Vec<String> {
    common::fixture_text("sse/vllm-reasoning.sse")
        .split_inclusive("\n\n")
        .filter(|event| event.starts_with("data:"))
        .map(str::to_owned)
        .collect()
}

/// Runs `stage` REPEATS times over STREAMS x ROUNDS streams of `events`; returns
/// (best, median) nanoseconds per read.
fn time_per_read(events: &[String], mut stage: impl FnMut(&[String])) -> (f64, f64) {
    let reads = (STREAMS * ROUNDS * events.len()) as f64;
    let mut samples: Vec<f64> = (0..REPEATS)
        .map(|_| {
            // A native benchmark times itself; nothing in the app reads this clock.
            #[allow(clippy::disallowed_methods)]
            let started = Instant::now();
            for _ in 0..ROUNDS {
                stage(events);
            }
            started.elapsed().as_nanos() as f64 / reads
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    (samples[0], samples[REPEATS / 2])
}

/// The SSE decoder alone, 64 streams interleaved read by read.
fn decode(events: &[String]) {
    let mut decoders: Vec<SseDecoder> = (0..STREAMS).map(|_| SseDecoder::new()).collect();
    let mut out = Vec::new();
    for event in events {
        for decoder in &mut decoders {
            let _ = decoder.push(event.as_bytes(), &mut out);
            black_box(&out);
            out.clear();
        }
    }
}

/// Reading decoded events' data as chat-completions chunks alone.
fn interpret(payloads: &[String]) {
    for payload in payloads {
        for _ in 0..STREAMS {
            black_box(ChunkEvent::from_sse_data(black_box(payload)));
        }
    }
}

/// The whole per-read path, 64 streams interleaved read by read, each concluded.
fn whole_read(events: &[String]) {
    let mut readings: Vec<StreamReading> = (0..STREAMS)
        .map(|_| StreamReading::new(StreamAccumulator::new(0.0)))
        .collect();
    for (read, event) in events.iter().enumerate() {
        for reading in &mut readings {
            black_box(reading.on_bytes(event.as_bytes(), read as f64));
        }
    }
    for reading in readings {
        let (accumulator, _) = reading.into_parts();
        black_box(accumulator.finish(events.len() as f64).ok());
    }
}

fn main() {
    let events = events();
    let payloads: Vec<String> = events
        .iter()
        .map(|event| {
            event
                .trim_end()
                .trim_start_matches("data:")
                .trim_start()
                .to_owned()
        })
        .collect();
    let bytes: usize = events.iter().map(String::len).sum();
    println!(
        "read path: {} events per stream ({} bytes, {:.0} per read), {STREAMS} streams at a time, \
         {ROUNDS} rounds, best / median of {REPEATS}",
        events.len(),
        bytes,
        bytes as f64 / events.len() as f64
    );
    for (stage, (best, median)) in [
        ("SSE decoding", time_per_read(&events, decode)),
        ("chunk reading", time_per_read(&payloads, interpret)),
        ("whole read", time_per_read(&events, whole_read)),
    ] {
        println!("  {stage:<14} {best:7.0} ns / read (median {median:.0})");
    }
}
