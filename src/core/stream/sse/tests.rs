//! Tests of the SSE decoder and the chunk events, on transcripts split at every byte.

use super::*;
use serde_json::json;
use serde_json::Value;

#[test]
fn the_sample_stream_decodes_to_its_tokens_usage_and_done() {
    let content: Vec<String> = ["MARK_1", " code", " \"quoted\"", " code", " code"]
        .map(String::from)
        .to_vec();
    let events = sample_stream_events(3, &content);
    assert_eq!(events.len(), 3 + 5 + 4);
    let mut decoder = SseDecoder::new();
    let mut decoded = Vec::new();
    for event in &events {
        decoder
            .push(event.as_bytes(), &mut decoded)
            .expect("a valid stream");
    }
    decoder.finish(&mut decoded).expect("a valid end");
    let chunks: Vec<ChunkEvent> = decoded.iter().map(ChunkEvent::from_sse).collect();
    assert_eq!(chunks.len(), events.len());
    assert_eq!(chunks.last(), Some(&ChunkEvent::Done));
    let deltas: Vec<&ChoiceDelta> = chunks
        .iter()
        .filter_map(|chunk| match chunk {
            ChunkEvent::Chunk(chunk) => chunk.choices.first(),
            _ => None,
        })
        .collect();
    assert_eq!(deltas.iter().filter(|d| d.reasoning.is_some()).count(), 3);
    let text: String = deltas.iter().filter_map(|d| d.content.as_deref()).collect();
    assert_eq!(text, content.concat());
    assert_eq!(
        deltas.last().and_then(|d| d.finish_reason.as_deref()),
        Some("stop")
    );
    let usage = chunks.iter().find_map(|chunk| match chunk {
        ChunkEvent::Chunk(chunk) => chunk.usage.clone(),
        _ => None,
    });
    assert_eq!(usage.and_then(|u| u["completion_tokens"].as_u64()), Some(8));
}

// Transcripts written to match what the named servers send (see tests/fixtures/sse/README.md).
const VLLM: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sse/vllm-reasoning.sse"
));
const LLAMA_CPP: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sse/llamacpp.sse"
));
const REASONING_FIELD: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sse/reasoning-field.sse"
));
const CRLF_KEEPALIVE: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sse/crlf-keepalive.sse"
));
const UTF8: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sse/utf8-multibyte.sse"
));
const SERVER_ERROR: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sse/server-error.sse"
));
const VLLM_COMPLETIONS: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sse/vllm-completions.sse"
));

const ALL: [(&str, &[u8]); 7] = [
    ("vllm-reasoning", VLLM),
    ("llamacpp", LLAMA_CPP),
    ("reasoning-field", REASONING_FIELD),
    ("crlf-keepalive", CRLF_KEEPALIVE),
    ("utf8-multibyte", UTF8),
    ("server-error", SERVER_ERROR),
    ("vllm-completions", VLLM_COMPLETIONS),
];

fn decode_pieces<'a>(
    pieces: impl IntoIterator<Item = &'a [u8]>,
) -> (Vec<SseEvent>, SseDecoderStats) {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    for piece in pieces {
        decoder.push(piece, &mut events).expect("fixture decodes");
    }
    decoder.finish(&mut events).expect("fixture finishes");
    (events, decoder.stats())
}

fn decode_whole(bytes: &[u8]) -> Vec<SseEvent> {
    decode_pieces([bytes]).0
}

fn chunks(bytes: &[u8]) -> Vec<ChunkEvent> {
    decode_whole(bytes)
        .iter()
        .map(ChunkEvent::from_sse)
        .collect()
}

fn visible_text(events: &[ChunkEvent]) -> String {
    let mut text = String::new();
    for event in events {
        if let ChunkEvent::Chunk(chunk) = event {
            for choice in &chunk.choices {
                text.push_str(choice.content.as_deref().unwrap_or(""));
            }
        }
    }
    text
}

fn count_reasoning(events: &[ChunkEvent]) -> usize {
    events
        .iter()
        .filter_map(|event| match event {
            ChunkEvent::Chunk(chunk) => Some(chunk),
            _ => None,
        })
        .flat_map(|chunk| &chunk.choices)
        .filter(|choice| choice.reasoning.is_some())
        .count()
}

#[test]
fn every_split_point_and_piece_size_gives_the_same_events() {
    for (name, bytes) in ALL {
        let (whole, whole_stats) = decode_pieces([bytes]);
        assert!(!whole.is_empty(), "{name}: no events");
        for split in 0..=bytes.len() {
            let (head, tail) = bytes.split_at(split);
            let (events, stats) = decode_pieces([head, tail]);
            assert_eq!(events, whole, "{name}: split at byte {split}");
            assert_eq!(stats, whole_stats, "{name}: stats, split at byte {split}");
        }
        for size in [1, 2, 3, 7] {
            let (events, stats) = decode_pieces(bytes.chunks(size));
            assert_eq!(events, whole, "{name}: {size}-byte pieces");
            assert_eq!(stats, whole_stats, "{name}: stats, {size}-byte pieces");
        }
    }
}

#[test]
fn line_ending_style_does_not_change_events() {
    for (name, bytes) in ALL {
        let text = std::str::from_utf8(bytes).expect("fixtures are UTF-8");
        let lf = text.replace("\r\n", "\n");
        let crlf = lf.replace('\n', "\r\n");
        let cr = lf.replace('\n', "\r");
        let expected = decode_whole(lf.as_bytes());
        assert_eq!(decode_whole(crlf.as_bytes()), expected, "{name}: CRLF");
        assert_eq!(decode_whole(cr.as_bytes()), expected, "{name}: lone CR");
        for size in [1, 3] {
            let (events, _) = decode_pieces(cr.as_bytes().chunks(size));
            assert_eq!(events, expected, "{name}: lone CR in {size}-byte pieces");
        }
    }
}

#[test]
fn crlf_fixture_really_uses_crlf() {
    // Guards against a checkout that rewrote line ends (see the fixture folder's .gitattributes).
    assert!(CRLF_KEEPALIVE.windows(2).any(|pair| pair == b"\r\n"));
    assert!(!CRLF_KEEPALIVE
        .windows(2)
        .any(|pair| pair[1] == b'\n' && pair[0] != b'\r'));
}

#[test]
fn vllm_transcript_reads_as_the_server_sent_it() {
    let events = chunks(VLLM);
    assert_eq!(events.last(), Some(&ChunkEvent::Done));
    assert_eq!(
        visible_text(&events),
        "ANVIL_REQ_1717_00000 The module defines helper functions that each return compute(n)."
    );
    assert_eq!(count_reasoning(&events), 6);
    let finish: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            ChunkEvent::Chunk(chunk) => Some(chunk),
            _ => None,
        })
        .flat_map(|chunk| &chunk.choices)
        .filter_map(|choice| choice.finish_reason.clone())
        .collect();
    assert_eq!(finish, ["stop"]);
    let usage = events
        .iter()
        .filter_map(|event| match event {
            ChunkEvent::Chunk(chunk) => chunk.usage.clone(),
            _ => None,
        })
        .next_back()
        .expect("usage chunk");
    assert_eq!(usage["prompt_tokens_details"]["cached_tokens"], 62320);
    assert_eq!(usage["completion_tokens"], 281);
}

#[test]
fn llamacpp_transcript_has_usage_on_the_finish_chunk() {
    let events = chunks(LLAMA_CPP);
    assert_eq!(events.last(), Some(&ChunkEvent::Done));
    assert_eq!(visible_text(&events), "Hello! How can I help you today?");
    assert_eq!(count_reasoning(&events), 0);
    let ChunkEvent::Chunk(finish) = &events[events.len() - 2] else {
        panic!("expected the finish chunk before [DONE]");
    };
    assert_eq!(finish.choices[0].finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        finish.usage.as_ref().map(|u| &u["completion_tokens"]),
        Some(&json!(10))
    );
}

#[test]
fn reasoning_field_is_read_when_reasoning_content_is_null_or_empty() {
    let events = chunks(REASONING_FIELD);
    assert_eq!(count_reasoning(&events), 3);
    assert_eq!(visible_text(&events), "4");
}

#[test]
fn keepalive_comments_are_counted_and_silent() {
    let (events, stats) = decode_pieces([CRLF_KEEPALIVE]);
    assert_eq!(stats.comment_lines, 3);
    assert!(events.iter().all(|event| !event.data.starts_with(':')));
    assert_eq!(visible_text(&chunks(CRLF_KEEPALIVE)), "pong");
}

#[test]
fn multibyte_text_survives_every_split() {
    assert_eq!(visible_text(&chunks(UTF8)), "héllo 世界 🎉");
}

#[test]
fn server_error_event_is_surfaced_with_its_message() {
    let events = chunks(SERVER_ERROR);
    assert!(events.contains(&ChunkEvent::ServerError {
        message: "The decoder prompt (length 70001) is longer than the maximum model length \
                  of 65536. (type BadRequestError, code 400)"
            .to_owned()
    }));
}

#[test]
fn data_field_spacing_and_joining_follow_the_standard() {
    let events = decode_whole(b"data:a\ndata:  b\ndata\n\ndata: c\n\n");
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].data, "a\n b\n");
    assert_eq!(events[1].data, "c");
}

#[test]
fn event_id_and_retry_fields_are_tolerated() {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    decoder
        .push(
            b"event: chunk\nid: 7\nretry: 3000\ndata: x\n\ndata: y\n\nretry: soon\n",
            &mut events,
        )
        .expect("valid stream");
    assert_eq!(events[0].event_type.as_deref(), Some("chunk"));
    assert_eq!(events[0].last_event_id.as_deref(), Some("7"));
    assert_eq!(events[1].event_type, None);
    assert_eq!(events[1].last_event_id.as_deref(), Some("7"));
    assert_eq!(decoder.retry_ms(), Some(3000));
}

#[test]
fn blank_lines_without_data_dispatch_nothing() {
    let (events, stats) = decode_pieces([&b"\n\n: ping\n\nevent: x\n\n"[..]]);
    assert!(events.is_empty());
    assert_eq!(stats.comment_lines, 1);
    assert_eq!(stats.events, 0);
}

#[test]
fn leading_byte_order_mark_is_dropped() {
    let events = decode_whole("\u{FEFF}data: x\n\n".as_bytes());
    assert_eq!(events[0].data, "x");
}

#[test]
fn unterminated_last_event_is_dispatched_at_finish() {
    assert_eq!(decode_whole(b"data: [DONE]")[0].data, "[DONE]");
    assert_eq!(decode_whole(b"data: [DONE]\n")[0].data, "[DONE]");
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    let events = decode_whole(b"data: a\xffb\xe4\xb8\n\n");
    assert_eq!(events[0].data, "a\u{FFFD}b\u{FFFD}");
}

#[test]
fn overlong_line_is_an_error_value_and_sticks() {
    let mut decoder = SseDecoder::with_max_bytes(16);
    let mut events = Vec::new();
    decoder
        .push(b"data: 0123456789", &mut events)
        .expect("16 bytes fit");
    let error = decoder
        .push(b"!", &mut events)
        .expect_err("17th byte overflows");
    assert_eq!(error, SseError::LineTooLong { limit_bytes: 16 });
    assert_eq!(decoder.push(b"\n\n", &mut events), Err(error.clone()));
    assert_eq!(decoder.finish(&mut events), Err(error));
    assert!(events.is_empty());

    // A whole line in one slice is read where it is, under the same bound.
    let mut decoder = SseDecoder::with_max_bytes(16);
    decoder
        .push(b"data: 0123456789\n\n", &mut events)
        .expect("a 16-byte line fits");
    assert_eq!(events.len(), 1);
    assert_eq!(
        decoder.push(b"data: 0123456789!\n\n", &mut events),
        Err(SseError::LineTooLong { limit_bytes: 16 })
    );
    assert_eq!(events.len(), 1);
}

#[test]
fn overlong_event_is_an_error_value() {
    let mut decoder = SseDecoder::with_max_bytes(16);
    let mut events = Vec::new();
    let error = decoder
        .push(b"data: 01234567\ndata: 01234567\n", &mut events)
        .expect_err("joined data exceeds 16 bytes");
    assert_eq!(error, SseError::EventTooLarge { limit_bytes: 16 });
}

#[test]
fn done_sentinel_tolerates_surrounding_whitespace() {
    assert_eq!(
        ChunkEvent::from_sse_data(" [DONE] \u{1f}"),
        ChunkEvent::Done
    );
    assert_eq!(ChunkEvent::from_sse_data("[done]"), ChunkEvent::Ignored);
}

#[test]
fn non_json_payloads_are_ignored() {
    for data in ["", "hello", "{\"choices\": [", "NaN"] {
        assert_eq!(
            ChunkEvent::from_sse_data(data),
            ChunkEvent::Ignored,
            "{data:?}"
        );
    }
}

#[test]
fn null_choices_delta_and_non_object_payloads_are_malformed() {
    for (data, reason) in [
        (r#"{"choices": null}"#, "choices is null"),
        (r#"{"choices": {}}"#, "choices is not a list"),
        (r#"{"choices": [{"delta": null}]}"#, "delta is null"),
        (r#"{"choices": [{"delta": "x"}]}"#, "delta is not an object"),
        (r#"{"choices": [3]}"#, "a choice is not an object"),
        (
            r#"{"choices": [{"delta": {"content": 5}}]}"#,
            "delta.content is not a string",
        ),
        ("[1, 2]", "the data payload is JSON but not an object"),
        ("42", "the data payload is JSON but not an object"),
    ] {
        assert_eq!(
            ChunkEvent::from_sse_data(data),
            ChunkEvent::Malformed {
                reason: reason.to_owned()
            },
            "{data}"
        );
    }
}

#[test]
fn missing_choices_and_missing_delta_are_empty_not_malformed() {
    assert_eq!(
        ChunkEvent::from_sse_data("{}"),
        ChunkEvent::Chunk(ChatChunk::default())
    );
    assert_eq!(
        ChunkEvent::from_sse_data(r#"{"choices": [{"index": 0}]}"#),
        ChunkEvent::Chunk(ChatChunk {
            choices: vec![ChoiceDelta::default()],
            usage: None
        })
    );
}

#[test]
fn reasoning_prefers_a_truthy_reasoning_content() {
    let reasoning = |data: &str| match ChunkEvent::from_sse_data(data) {
        ChunkEvent::Chunk(chunk) => chunk.choices[0].reasoning.clone(),
        other => panic!("not a chunk: {other:?}"),
    };
    let both = r#"{"choices":[{"delta":{"reasoning_content":"a","reasoning":"b"}}]}"#;
    let empty_first = r#"{"choices":[{"delta":{"reasoning_content":"","reasoning":"b"}}]}"#;
    let neither = r#"{"choices":[{"delta":{"reasoning_content":null,"reasoning":""}}]}"#;
    assert_eq!(reasoning(both).as_deref(), Some("a"));
    assert_eq!(reasoning(empty_first).as_deref(), Some("b"));
    assert_eq!(reasoning(neither), None);
}

#[test]
fn finish_reason_is_stringified_and_cut_to_128_characters() {
    let finish = |reason: Value| {
        let data = json!({"choices": [{"delta": {}, "finish_reason": reason}]}).to_string();
        match ChunkEvent::from_sse_data(&data) {
            ChunkEvent::Chunk(chunk) => chunk.choices[0].finish_reason.clone(),
            other => panic!("not a chunk: {other:?}"),
        }
    };
    let long = "é".repeat(200);
    assert_eq!(finish(json!(long)), Some("é".repeat(128)));
    assert_eq!(finish(json!(true)).as_deref(), Some("True"));
    assert_eq!(finish(json!(7)).as_deref(), Some("7"));
    assert_eq!(finish(json!("")).as_deref(), Some(""));
    assert_eq!(finish(Value::Null), None);
}

#[test]
fn empty_usage_is_not_usage() {
    let usage = |data: &str| match ChunkEvent::from_sse_data(data) {
        ChunkEvent::Chunk(chunk) => chunk.usage,
        other => panic!("not a chunk: {other:?}"),
    };
    assert_eq!(usage(r#"{"choices":[],"usage":{}}"#), None);
    assert_eq!(usage(r#"{"choices":[],"usage":null}"#), None);
    assert_eq!(
        usage(r#"{"choices":[],"usage":{"completion_tokens":3}}"#),
        Some(json!({"completion_tokens": 3}))
    );
}

#[test]
fn server_error_shapes() {
    let message = |data: &str| match ChunkEvent::from_sse_data(data) {
        ChunkEvent::ServerError { message } => message,
        other => panic!("not a server error: {other:?}"),
    };
    assert_eq!(message(r#"{"error":"overloaded"}"#), "overloaded");
    assert_eq!(
        message(r#"{"error":{"message":"bad\nthing\u0007","code":500}}"#),
        "bad thing (code 500)"
    );
    let long = format!(r#"{{"error":"{}"}}"#, "x".repeat(1000));
    assert_eq!(message(&long).chars().count(), SERVER_ERROR_MAX_CHARS + 1);
    assert_eq!(
        ChunkEvent::from_sse_data(r#"{"error":null,"choices":[]}"#),
        ChunkEvent::Chunk(ChatChunk::default())
    );
}

#[test]
fn sanitize_excerpt_strips_controls_and_bounds_length() {
    assert_eq!(sanitize_excerpt("  a\r\n\tb\u{0}c  ", 100), "a b c");
    assert_eq!(sanitize_excerpt("abcdef", 3), "abc…");
    assert_eq!(sanitize_excerpt("abc", 3), "abc");
    assert_eq!(sanitize_excerpt("", 3), "");
}

#[test]
fn python_space_matches_python_isspace_exactly() {
    // Generated with: [hex(c) for c in range(0x110000) if chr(c).isspace()] (CPython 3.11.7).
    let python: [u32; 29] = [
        0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001,
        0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029,
        0x202f, 0x205f, 0x3000,
    ];
    let ours: Vec<u32> = (0..=0x10FFFF_u32)
        .filter_map(char::from_u32)
        .filter(|&c| is_python_space(c))
        .map(u32::from)
        .collect();
    assert_eq!(ours, python);
}

#[test]
fn truthiness_follows_python() {
    for (value, truthy) in [
        (json!(null), false),
        (json!(false), false),
        (json!(0), false),
        (json!(0.0), false),
        (json!(""), false),
        (json!([]), false),
        (json!({}), false),
        (json!(true), true),
        (json!(-1), true),
        (json!(" "), true),
        (json!([0]), true),
        (json!({"a": null}), true),
    ] {
        assert_eq!(is_truthy(&value), truthy, "{value}");
    }
}

// -----------------------------------------------------------------------------------------
// The chunk reader against the interpretation it replaced, which built a `serde_json::Value`
// of the whole payload first: both must read every payload alike.
// -----------------------------------------------------------------------------------------

/// The interpretation over a whole-payload `Value`, as strobe read chunks before
/// `chunk_json` (kept as the oracle).
fn value_oracle(data: &str) -> ChunkEvent {
    use serde_json::Map;
    fn choice(choice: &Value) -> Result<ChoiceDelta, &'static str> {
        let Value::Object(choice) = choice else {
            return Err("a choice is not an object");
        };
        let finish_reason = match choice.get("finish_reason") {
            None | Some(Value::Null) => None,
            Some(reason) => Some(
                python_str(reason.clone())
                    .chars()
                    .take(FINISH_REASON_MAX_CHARS)
                    .collect(),
            ),
        };
        let empty = Map::new();
        let delta = match choice.get("delta") {
            None => &empty,
            Some(Value::Object(delta)) => delta,
            Some(Value::Null) => return Err("delta is null"),
            Some(_) => return Err("delta is not an object"),
        };
        let reasoning = delta
            .get("reasoning_content")
            .filter(|v| is_truthy(v))
            .or_else(|| delta.get("reasoning"))
            .filter(|v| is_truthy(v))
            .cloned()
            .map(python_str);
        let content = match delta.get("content").filter(|v| is_truthy(v)) {
            Some(Value::String(text)) => Some(text.clone()),
            Some(_) => return Err("delta.content is not a string"),
            None => match choice.get("text").filter(|v| is_truthy(v)) {
                None => None,
                Some(Value::String(text)) => Some(text.clone()),
                Some(_) => return Err("choices[].text is not a string"),
            },
        };
        Ok(ChoiceDelta {
            finish_reason,
            reasoning,
            content,
        })
    }
    let payload = data.trim_matches(is_python_space);
    if payload == "[DONE]" {
        return ChunkEvent::Done;
    }
    let Ok(parsed) = serde_json::from_str::<Value>(payload) else {
        return ChunkEvent::Ignored;
    };
    let Value::Object(chunk) = parsed else {
        return ChunkEvent::malformed("the data payload is JSON but not an object");
    };
    if let Some(error) = chunk.get("error").filter(|error| is_truthy(error)) {
        return ChunkEvent::ServerError {
            message: server_error_message(error),
        };
    }
    let usage = chunk.get("usage").filter(|usage| is_truthy(usage)).cloned();
    let choices = match chunk.get("choices") {
        None => Vec::new(),
        Some(Value::Array(choices)) => {
            let mut deltas = Vec::new();
            for item in choices {
                match choice(item) {
                    Ok(delta) => deltas.push(delta),
                    Err(reason) => return ChunkEvent::malformed(reason),
                }
            }
            deltas
        }
        Some(Value::Null) => return ChunkEvent::malformed("choices is null"),
        Some(_) => return ChunkEvent::malformed("choices is not a list"),
    };
    ChunkEvent::Chunk(ChatChunk { choices, usage })
}

/// Every fixture's event payloads.
fn fixture_payloads() -> Vec<String> {
    [
        VLLM,
        LLAMA_CPP,
        REASONING_FIELD,
        CRLF_KEEPALIVE,
        UTF8,
        SERVER_ERROR,
        VLLM_COMPLETIONS,
    ]
    .iter()
    .flat_map(|bytes| decode_whole(bytes))
    .map(|event| event.data)
    .collect()
}

/// JSON values of every shape (and truthiness) a member could take.
const SHAPES: &[&str] = &[
    "null",
    "true",
    "false",
    "0",
    "1",
    "-2.5",
    "1e3",
    "\"\"",
    "\"x\"",
    "\"stop\"",
    "[]",
    "[1]",
    "[{}]",
    "{}",
    "{\"a\":1}",
    "{\"message\":\"m\",\"type\":\"t\",\"code\":3}",
    "18446744073709551616",
];

/// Variants of a chunk payload: each member the reader reads (at every level) given every
/// shape, given twice (first or last wins), spelled with an escape, and the payload cut at
/// every byte.
fn payload_variants(payload: &str) -> Vec<String> {
    let mut variants = vec![payload.to_owned()];
    for name in [
        "error",
        "usage",
        "choices",
        "finish_reason",
        "delta",
        "reasoning_content",
        "reasoning",
        "content",
        "text",
        "role",
        "id",
    ] {
        let key = format!("\"{name}\":");
        let Some(at) = payload.find(&key) else {
            // Add the member at the top level.
            for shape in SHAPES {
                variants.push(format!("{{{key}{shape},{}", &payload[1..]));
            }
            continue;
        };
        let value_start = at + key.len();
        for shape in SHAPES {
            // Insert a member of this shape just before the real one: the real one wins.
            variants.push(format!("{}{key}{shape},{}", &payload[..at], &payload[at..]));
            // And right after its name, pushing the real value into a skipped position.
            variants.push(format!(
                "{}{shape},\"skipped\":{}",
                &payload[..value_start],
                &payload[value_start..]
            ));
        }
        // The name spelled with an escape.
        let escaped = format!("\"\\u{:04x}{}\":", name.as_bytes()[0], &name[1..]);
        variants.push(payload.replacen(&key, &escaped, 1));
    }
    variants.extend((0..payload.len()).filter_map(|cut| payload.get(..cut).map(str::to_owned)));
    variants
}

#[test]
fn the_chunk_reader_reads_every_payload_as_the_value_interpretation_did() {
    let mut payloads = fixture_payloads();
    payloads.extend(
        [
            "[DONE]",
            " [DONE] ",
            "[1,2]",
            "\"text\"",
            "3",
            "null",
            "true",
            "{}",
            "{ }",
            "{\"choices\":[null]}",
            "{\"choices\":[1]}",
            "{\"choices\":[[]]}",
            "{\"choices\":[{\"delta\":[]}]}",
            "{\"choices\":[{\"delta\":\"x\"}]}",
            "{\"choices\":[{\"delta\":{\"content\":5}}]}",
            "{\"choices\":[{\"delta\":{\"content\":0}}]}",
            "{\"choices\":[{\"delta\":{\"reasoning\":{\"a\":1}}}]}",
            "{\"choices\":[{\"finish_reason\":false}]}",
            "{\"choices\":[{\"finish_reason\":1.0}]}",
            "{\"choices\":{}}",
            "{\"error\":\"\",\"choices\":[]}",
            "{\"error\":{},\"usage\":{}}",
            "{\"a\":{\"b\":[{\"c\":null}]},\"choices\":[]}",
            "{\"choices\":[]} x",
            "{\"choices\":[],}",
            "{'choices':[]}",
            "{\"choices\":[]}",
            "{\"choices\":[{\"delta\":{\"content\":\"a\\u00e9\\n\\\"\"}}]}",
            "{\"choices\":[{\"index\":0,\"text\":\" code\",\"logprobs\":null,\"finish_reason\":null}]}",
            "{\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}]}",
            "{\"choices\":[{\"text\":7}]}",
            "{\"choices\":[{\"delta\":{\"content\":\"\"},\"text\":\"t\"}]}",
            "{\"choices\":[{\"delta\":{\"content\":\"c\"},\"text\":\"t\"}]}",
        ]
        .map(String::from),
    );
    let mut checked = 0;
    for payload in payloads.clone() {
        for variant in payload_variants(&payload) {
            assert_eq!(
                ChunkEvent::from_sse_data(&variant),
                value_oracle(&variant),
                "payload {variant}"
            );
            checked += 1;
        }
    }
    assert!(checked > 10_000, "only {checked} payloads checked");
}

#[test]
fn a_completions_transcript_reads_its_text_as_content() {
    let events = chunks(VLLM_COMPLETIONS);
    assert_eq!(events.len(), 11);
    assert_eq!(events.last(), Some(&ChunkEvent::Done));
    assert_eq!(
        visible_text(&events),
        "ANVIL_REQ_1717_00001 The module defines helper functions that each return"
    );
    assert_eq!(count_reasoning(&events), 0);
    let choices: Vec<&ChoiceDelta> = events
        .iter()
        .filter_map(|event| match event {
            ChunkEvent::Chunk(chunk) => Some(chunk),
            _ => None,
        })
        .flat_map(|chunk| &chunk.choices)
        .collect();
    // One content piece per token chunk, the first being the canary marker on its own.
    assert_eq!(choices.len(), 9);
    assert!(choices.iter().all(|choice| choice.content.is_some()));
    assert_eq!(choices[0].content.as_deref(), Some("ANVIL_REQ_1717_00001"));
    let finish: Vec<_> = choices
        .iter()
        .filter_map(|choice| choice.finish_reason.as_deref())
        .collect();
    assert_eq!(finish, ["length"], "the last token's chunk carries it");
    assert!(choices[8].finish_reason.is_some() && choices[8].content.is_some());
    let ChunkEvent::Chunk(usage) = &events[9] else {
        panic!("expected the usage chunk, got {:?}", events[9]);
    };
    assert!(usage.choices.is_empty());
    assert_eq!(
        usage.usage.as_ref().map(|u| &u["completion_tokens"]),
        Some(&json!(9))
    );
}

#[test]
fn completions_text_counts_as_chat_content_does() {
    let read = |data: &str| match ChunkEvent::from_sse_data(data) {
        ChunkEvent::Chunk(chunk) => chunk.choices[0].content.clone(),
        other => panic!("not a chunk: {other:?}"),
    };
    let chat = r#"{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" code"},"logprobs":null,"finish_reason":null}]}"#;
    let completions = r#"{"object":"text_completion","choices":[{"index":0,"text":" code","logprobs":null,"finish_reason":null,"stop_reason":null}]}"#;
    assert_eq!(read(chat), read(completions));
    assert_eq!(read(completions).as_deref(), Some(" code"));
    // An empty text is no content, as an empty delta.content is not: no first token yet.
    assert_eq!(
        read(r#"{"choices":[{"index":0,"text":"","finish_reason":"stop"}]}"#),
        None
    );
    assert_eq!(read(r#"{"choices":[{"index":0,"text":null}]}"#), None);
    // A chunk with both reads the delta, as for chat.
    assert_eq!(
        read(r#"{"choices":[{"delta":{"content":"d"},"text":"t"}]}"#).as_deref(),
        Some("d")
    );
    assert_eq!(
        ChunkEvent::from_sse_data(r#"{"choices":[{"index":0,"text":["a"]}]}"#),
        ChunkEvent::malformed("choices[].text is not a string")
    );
}

#[test]
fn a_later_duplicate_member_wins_as_in_python() {
    let event = ChunkEvent::from_sse_data(
        r#"{"choices":null,"choices":[{"delta":null,"delta":{"content":"a","content":"b"}}]}"#,
    );
    let ChunkEvent::Chunk(chunk) = event else {
        panic!("expected a chunk, got {event:?}");
    };
    assert_eq!(chunk.choices[0].content.as_deref(), Some("b"));
    assert_eq!(
        ChunkEvent::from_sse_data(r#"{"choices":[],"choices":7}"#),
        ChunkEvent::malformed("choices is not a list")
    );
}

#[test]
fn skipped_members_python_reads_do_not_hide_the_chunk() {
    // Python's json.loads reads 1e400 as infinity, keeps lone surrogates and nests deeper
    // than serde_json's 128 levels; none of these members is read by the measurement.
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    for skipped in ["1e400", "\"\\ud800\"", deep.as_str()] {
        let payload =
            format!(r#"{{"created":{skipped},"choices":[{{"delta":{{"content":"x"}}}}]}}"#);
        let event = ChunkEvent::from_sse_data(&payload);
        assert!(
            matches!(&event, ChunkEvent::Chunk(chunk) if chunk.choices[0].content.as_deref() == Some("x")),
            "{skipped}: {event:?}"
        );
        assert_eq!(value_oracle(&payload), ChunkEvent::Ignored, "{skipped}");
    }
}
