//! One response body read by read: what a network read's bytes go through before the next read
//! can be stamped. The bytes are decoded as server-sent events ([`SseDecoder`]), each event is
//! read as a chat-completions chunk ([`ChunkEvent`]) and the read's events go to the stream's
//! [`StreamAccumulator`] stamped with the read's arrival time. This is the per-read path of a
//! measured request (the browser's transport only copies the bytes out of the read and calls
//! [`StreamReading::on_bytes`]), so its cost is measured natively by `benches/read_path.rs`.

use crate::core::observe::accumulate::{StreamAccumulator, StreamFlow, StreamResult};
use crate::core::observe::failure::RequestError;
use crate::core::stream::sse::{ChunkEvent, SseDecoder, SseEvent};

/// How a stream's reading ended.
#[derive(Clone, Debug, PartialEq)]
pub enum ReadOutcome {
    /// The event that ends the stream (`[DONE]`, or a server error or malformed chunk whose
    /// reason the accumulator keeps) arrived in the read stamped `ended_ms`; the body's end is
    /// still to be read.
    Done {
        /// The arrival of the read that carried that event.
        ended_ms: f64,
    },
    /// The body ended (without `[DONE]`, or right after it) at the read stamped `ended_ms`.
    BodyEnded {
        /// The arrival of the body's end.
        ended_ms: f64,
    },
    /// The bytes were not a valid event stream.
    Failed(RequestError),
}

/// The state of one stream being read: the SSE decoder, the accumulator, and buffers reused
/// for every read.
#[derive(Debug)]
pub struct StreamReading {
    decoder: SseDecoder,
    accumulator: StreamAccumulator,
    sse_events: Vec<SseEvent>,
    chunk_events: Vec<ChunkEvent>,
    outcome: Option<ReadOutcome>,
}

impl StreamReading {
    /// Reads a stream into `accumulator`.
    pub fn new(accumulator: StreamAccumulator) -> Self {
        Self {
            decoder: SseDecoder::new(),
            accumulator,
            sse_events: Vec::new(),
            chunk_events: Vec::new(),
            outcome: None,
        }
    }

    /// One read's bytes, arrived at `now_ms`. Returns whether reading should stop: `[DONE]`
    /// arrived, an event ended the stream (a server error, a malformed chunk: the accumulator
    /// keeps the reason), or the bytes broke the decoder. Once it has returned true, further
    /// reads are ignored.
    pub fn on_bytes(&mut self, bytes: &[u8], now_ms: f64) -> bool {
        if self.outcome.is_some() {
            return true;
        }
        if let Err(error) = self.decoder.push(bytes, &mut self.sse_events) {
            self.outcome = Some(ReadOutcome::Failed(RequestError::from(error)));
            return true;
        }
        if self.flush(now_ms) == StreamFlow::Stop {
            self.outcome = Some(ReadOutcome::Done { ended_ms: now_ms });
            return true;
        }
        false
    }

    /// The body ended, seen at `now_ms`: an event still waiting for its blank line is
    /// dispatched as part of this last read. Always returns true (reading stops).
    pub fn on_body_end(&mut self, now_ms: f64) -> bool {
        if self.outcome.is_some() {
            return true;
        }
        let outcome = match self.decoder.finish(&mut self.sse_events) {
            Ok(()) => {
                self.flush(now_ms);
                ReadOutcome::BodyEnded { ended_ms: now_ms }
            }
            Err(error) => ReadOutcome::Failed(RequestError::from(error)),
        };
        self.outcome = Some(outcome);
        true
    }

    /// How reading ended, once it has.
    pub fn outcome(&self) -> Option<&ReadOutcome> {
        self.outcome.as_ref()
    }

    /// The accumulator and how reading ended (`None` while it has not).
    pub fn into_parts(self) -> (StreamAccumulator, Option<ReadOutcome>) {
        (self.accumulator, self.outcome)
    }

    /// The stream's result once reading has ended. E2E ends at the arrival of the read that
    /// carried the stream's last byte (`[DONE]` or the end of the body), so what follows it
    /// (releasing the connection) is not counted as server time.
    pub fn finish(self) -> Result<StreamResult, RequestError> {
        match self.outcome {
            Some(ReadOutcome::Done { ended_ms } | ReadOutcome::BodyEnded { ended_ms }) => {
                self.accumulator.finish(ended_ms)
            }
            Some(ReadOutcome::Failed(error)) => Err(error),
            None => Err(RequestError::stream(
                "the body stream stopped without an end",
            )),
        }
    }

    /// Hands the events decoded so far to the accumulator as one read's.
    fn flush(&mut self, now_ms: f64) -> StreamFlow {
        self.chunk_events.clear();
        self.chunk_events.extend(
            self.sse_events
                .drain(..)
                .map(|event| ChunkEvent::from_sse(&event)),
        );
        // A read that carried no complete event still counts as a read for the statistics.
        self.accumulator.on_read_events(now_ms, &self.chunk_events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::stream::sse::sample_stream_events;

    fn sample() -> Vec<String> {
        sample_stream_events(2, &["MARK-1".to_owned(), " hello".to_owned()])
    }

    #[test]
    fn done_stops_reading_at_its_read() {
        let mut reading = StreamReading::new(StreamAccumulator::new(100.0));
        let events = sample();
        let mut stopped_at = None;
        for (read, event) in events.iter().enumerate() {
            if reading.on_bytes(event.as_bytes(), 101.0 + read as f64) {
                stopped_at = Some(read);
                break;
            }
        }
        assert_eq!(stopped_at, Some(events.len() - 1));
        // Later reads change nothing.
        assert!(reading.on_bytes(b"data: {\"choices\":[]}\n\n", 500.0));
        assert!(reading.on_body_end(600.0));
        let (accumulator, outcome) = reading.into_parts();
        let ended_ms = 101.0 + (events.len() - 1) as f64;
        assert_eq!(outcome, Some(ReadOutcome::Done { ended_ms }));
        let result = accumulator.finish(ended_ms).expect("a complete stream");
        assert_eq!(result.visible_content, "MARK-1 hello");
        assert_eq!(result.reasoning_chunks, 2);
        assert_eq!(result.ttfo_s, Some(0.002));
        assert_eq!(result.read_stats.reads, events.len() as u64);
        assert_eq!(result.read_stats.events_sharing_a_read, 0);
    }

    #[test]
    fn a_stream_split_anywhere_reads_the_same() {
        let whole: String = sample().concat();
        let mut reading = StreamReading::new(StreamAccumulator::new(0.0));
        assert!(reading.on_bytes(whole.as_bytes(), 5.0));
        let (accumulator, outcome) = reading.into_parts();
        assert_eq!(outcome, Some(ReadOutcome::Done { ended_ms: 5.0 }));
        let one_read = accumulator.finish(5.0).expect("complete");
        assert_eq!(one_read.read_stats.reads, 1);
        assert_eq!(
            one_read.read_stats.events_sharing_a_read,
            sample().len() as u64
        );

        let mut reading = StreamReading::new(StreamAccumulator::new(0.0));
        let mut stopped = false;
        for (read, piece) in whole.as_bytes().chunks(7).enumerate() {
            stopped = reading.on_bytes(piece, read as f64);
            if stopped {
                break;
            }
        }
        assert!(stopped);
        let (accumulator, _) = reading.into_parts();
        let split = accumulator.finish(0.0).expect("complete");
        assert_eq!(split.visible_content, one_read.visible_content);
        assert_eq!(split.out_toks, one_read.out_toks);
        assert_eq!(split.usage, one_read.usage);
    }

    #[test]
    fn body_end_dispatches_a_last_event_and_ends_the_reading() {
        let mut reading = StreamReading::new(StreamAccumulator::new(0.0));
        let events = sample();
        for event in &events[..events.len() - 1] {
            assert!(!reading.on_bytes(event.as_bytes(), 1.0));
        }
        assert!(!reading.on_bytes(b"data: [DONE]", 2.0));
        assert!(reading.on_body_end(3.0));
        let (accumulator, outcome) = reading.into_parts();
        assert_eq!(outcome, Some(ReadOutcome::BodyEnded { ended_ms: 3.0 }));
        assert!(accumulator.finish(3.0).expect("complete").done_observed);
    }

    #[test]
    fn an_event_that_ends_the_stream_stops_with_its_reason() {
        let mut reading = StreamReading::new(StreamAccumulator::new(0.0));
        assert!(reading.on_bytes(b"data: {\"error\":{\"message\":\"overloaded\"}}\n\n", 1.0));
        let (accumulator, outcome) = reading.into_parts();
        assert_eq!(outcome, Some(ReadOutcome::Done { ended_ms: 1.0 }));
        let error = accumulator.finish(1.0).expect_err("a server error");
        assert!(error.message.contains("overloaded"), "{error:?}");
    }

    #[test]
    fn bytes_that_break_the_decoder_fail_the_reading() {
        let mut reading = StreamReading::new(StreamAccumulator::new(0.0));
        let line = vec![b'x'; crate::core::stream::sse::DEFAULT_MAX_LINE_BYTES + 1];
        assert!(reading.on_bytes(&line, 1.0));
        let (_, outcome) = reading.into_parts();
        match outcome {
            Some(ReadOutcome::Failed(error)) => assert!(error.message.contains("line exceeded")),
            other => panic!("expected a failure, got {other:?}"),
        }
    }
}
