//! Edge and hostile input: empty files, a byte-order mark, CRLF, one turn, missing fields, NaN,
//! a 10 MB line, bytes that are not UTF-8, nesting bombs, wrong types, and what the messages
//! say (the line and the field, never a prompt).

use super::*;
use crate::core::workload::{WorkloadFormat, MAX_WORKLOAD_BYTES};

/// A prompt that must never leak into a message or a `Debug` print.
const SECRET: &str = "my-secret-prompt-4242";

#[test]
fn empty_and_blank_files_say_what_to_choose() {
    for text in ["", "   \n\r\n\t", "\u{feff}", "\u{feff}\n\n"] {
        let error = refused(text.as_bytes());
        assert_eq!(error, WorkloadError::Empty, "{text:?}");
        assert!(error.to_string().contains("choose a file"), "{error}");
    }
}

#[test]
fn a_byte_order_mark_and_crlf_read_as_without() {
    let plain = r#"{"prompt": "p1", "output_tokens": 4}
{"prompt": "p2"}
"#;
    let marked = format!("\u{feff}{}", plain.replace('\n', "\r\n"));
    let (a, b) = (first(plain), first(&marked));
    assert_eq!(a.sessions, b.sessions);
    assert_eq!(b.summary.format, WorkloadFormat::PromptColumns);
    // The hash is of the bytes as read, mark and all.
    assert_ne!(a.summary.sha256, b.summary.sha256);
    let csv = first("\u{feff}prompt\r\nhello\r\n");
    assert_eq!(csv.summary.format, WorkloadFormat::Csv);
    assert_eq!(prompts(&csv), ["hello"]);
}

#[test]
fn leading_blank_lines_count_in_the_lines_named() {
    let workload = first("\n\n{\"prompt\": \"a\"}\n{\"prompt\": 5}\n");
    let bad = skipped(&workload, SkipReason::BadField);
    assert_eq!((bad.first, bad.field.as_deref()), (4, Some("prompt")));
}

#[test]
fn a_conversation_of_one_turn_has_no_reply_and_none_usable_is_an_error() {
    let text = r#"[{"conversations": [{"from": "human", "value": "only"}]}]"#;
    let error = refused(text.as_bytes());
    assert_eq!(
        error.to_string(),
        "no usable request in this ShareGPT file: 1 has no reply (first at line 1, `conversations`)"
    );
    // With every turn played, one turn is still a conversation without a reply.
    let options = ReadOptions {
        turns: WorkloadTurns::All,
        ..ReadOptions::default()
    };
    assert!(matches!(
        read(text.as_bytes(), None, &options),
        Err(WorkloadError::NothingUsable { .. })
    ));
}

#[test]
fn missing_fields_are_counted_by_reason_with_their_first_line() {
    let text = concat!(
        r#"{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}"#,
        "\n",
        r#"{"timestamp": 10, "output_length": 5}"#,
        "\n",
        r#"{"timestamp": 20, "input_length": 100}"#,
        "\n",
        r#"{"timestamp": 30, "input_length": 0}"#,
        "\n",
    );
    let workload = first(text);
    assert_eq!(workload.summary.format, WorkloadFormat::MooncakeTrace);
    let no_prompt = skipped(&workload, SkipReason::NoPrompt);
    assert_eq!((no_prompt.count, no_prompt.first), (2, 2));
    assert_eq!(no_prompt.field.as_deref(), Some("input_length"));
    // No output_length: the plan's own length applies.
    assert_eq!(workload.sessions[1].turns[0].output_tokens, None);
    assert_eq!(workload.summary.records, 4);
}

#[test]
fn nan_infinity_and_negative_numbers_are_bad_fields() {
    let text = concat!(
        r#"{"prompt": "ok", "output_tokens": 3}"#,
        "\n",
        r#"{"prompt": "x", "output_tokens": NaN}"#,
        "\n",
        r#"{"prompt": "x", "output_tokens": -Infinity}"#,
        "\n",
        r#"{"prompt": "x", "output_tokens": -3}"#,
        "\n",
        r#"{"prompt": "x", "output_tokens": 2.5}"#,
        "\n",
        r#"{"prompt": "x", "output_tokens": 0}"#,
        "\n",
    );
    let workload = first(text);
    let bad = skipped(&workload, SkipReason::BadField);
    assert_eq!((bad.count, bad.first), (5, 2));
    assert_eq!(workload.sessions.len(), 1);
    let csv = first("prompt,output_tokens\na,NaN\nb,inf\nc,-1\nd,4\n");
    assert_eq!(skipped(&csv, SkipReason::BadField).count, 3);
    assert_eq!(prompts(&csv), ["d"]);
    let trace = first(
        "{\"timestamp\": -5, \"input_length\": 10}\n{\"timestamp\": 5, \"input_length\": 10}\n",
    );
    assert_eq!(
        skipped(&trace, SkipReason::BadField).field.as_deref(),
        Some("timestamp")
    );
}

#[test]
fn nan_in_a_json_list_names_the_line_and_column() {
    let text = "[\n{\"prompt\": \"a\"},\n{\"prompt\": \"b\", \"output_tokens\": NaN}\n]";
    let error = refused(text.as_bytes());
    let WorkloadError::Broken { line, reason, .. } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(*line, 3);
    assert!(reason.contains("NaN and Infinity"), "{reason}");
    assert!(error
        .to_string()
        .starts_with("the workload file's JSON breaks at line 3, column"));
}

#[test]
fn a_ten_megabyte_line_reads_whole() {
    let long = "w".repeat(10 * 1024 * 1024);
    let text = format!("{{\"prompt\": \"{long}\", \"output_tokens\": 1}}\n{{\"prompt\": \"b\"}}\n");
    let workload = first(&text);
    assert_eq!(workload.sessions.len(), 2);
    assert_eq!(text_of(&workload.sessions[0].turns[0]).len(), long.len());
    let plain = first(&format!("{long}\nshort\n"));
    assert_eq!(plain.summary.format, WorkloadFormat::Text);
    assert_eq!(text_of(&plain.sessions[0].turns[0]).len(), long.len());
}

#[test]
fn bytes_that_are_not_utf8_name_the_first_bad_offset() {
    let error = refused(b"prompt\nabc\xff\xfe\n");
    assert_eq!(error, WorkloadError::NotText { offset: 10 });
    assert!(error.to_string().contains("save it as UTF-8"), "{error}");
}

#[test]
fn a_nesting_bomb_is_refused_not_followed() {
    let depth = 100_000;
    let bomb = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    // A list of one entry nested 100,000 deep: cut out whole, it is no record.
    let error = refused(bomb.as_bytes());
    assert!(
        error
            .to_string()
            .starts_with("line 1: the list's entries are not JSON objects"),
        "{error}"
    );
    // Nested inside a key strobe does not read: passed over without recursing, the record used.
    let nest = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let unknown = format!("[{{\"prompt\": \"a\", \"x\": {}}}]", nest(depth));
    assert_eq!(prompts(&first(&unknown)), ["a"]);
    // Nested inside messages that are kept: refused past 128 levels, the record a bad field.
    let deep = format!(
        "{{\"messages\": [{{\"role\": \"user\", \"content\": \"ok\"}}]}}\n\
         {{\"messages\": [{{\"role\": \"user\", \"content\": {}}}]}}\n",
        nest(depth)
    );
    let workload = first(&deep);
    assert_eq!(workload.sessions.len(), 1);
    let bad = skipped(&workload, SkipReason::BadField);
    assert_eq!((bad.first, bad.field.as_deref()), (2, Some("messages")));
}

#[test]
fn wrong_types_are_bad_fields_named_by_path() {
    let text = r#"[
      {"conversations": [{"from": "human", "value": "fine"}, {"from": "gpt", "value": "yes"}]},
      {"conversations": "not a list"},
      {"conversations": [{"from": "human", "value": 42}, {"from": "gpt", "value": "x"}]},
      {"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": ["x"]}]},
      "a string entry",
      {"id": {"no": 1}, "conversations": [{"value": "q"}, {"value": "a"}]}
    ]"#;
    let workload = first(text);
    assert_eq!(prompts(&workload), ["fine"]);
    let bad = skipped(&workload, SkipReason::BadField);
    assert_eq!((bad.count, bad.first), (4, 3));
    assert_eq!(bad.field.as_deref(), Some("conversations"));
    assert_eq!(skipped(&workload, SkipReason::Unparsable).first, 6);
    let chat = first("{\"messages\": [{\"content\": \"no role\"}]}\n{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}");
    let bad = skipped(&chat, SkipReason::BadField);
    assert_eq!(bad.field.as_deref(), Some("messages[0].role"));
    let turns = first(concat!(
        r#"{"session_id": "s", "turns": [{"text": "a"}, {"text": 1}]}"#,
        "\n",
        r#"{"session_id": 2, "turns": [{"text": "b"}]}"#
    ));
    assert_eq!(
        skipped(&turns, SkipReason::BadField).field.as_deref(),
        Some("turns[1].text")
    );
    assert_eq!(turns.sessions[0].id.as_deref(), Some("2"));
}

#[test]
fn unknown_json_names_the_line_and_the_keys_expected() {
    let error = refused(b"\n{\"foo\": 1}\n{\"prompt\": \"x\"}\n");
    let message = error.to_string();
    assert!(
        message.starts_with("line 2: a JSON record with none of the keys"),
        "{message}"
    );
    assert!(message.contains("`conversations` (ShareGPT)"), "{message}");
    let lines = "not json {\n".repeat(12);
    let error = refused(format!("{{{lines}").as_bytes());
    assert!(
        error.to_string().starts_with("line 1 is not a JSON object"),
        "{error}"
    );
}

#[test]
fn a_broken_jsonl_line_is_skipped_after_the_format_is_known() {
    let workload = first("{\"prompt\": \"a\"}\n{\"prompt\": \"b\"\n{\"prompt\": \"c\"}\n");
    assert_eq!(prompts(&workload), ["a", "c"]);
    assert_eq!(skipped(&workload, SkipReason::Unparsable).first, 2);
    // And before: the first record that parses tells the format.
    let late = first("{oops\n{\"prompt\": \"a\"}\n");
    assert_eq!(late.summary.format, WorkloadFormat::PromptColumns);
    assert_eq!(skipped(&late, SkipReason::Unparsable).first, 1);
}

#[test]
fn a_cut_json_list_says_it_ends_inside_a_value() {
    let error = refused(b"[{\"prompt\": \"a\"}, {\"prompt\": \"b");
    assert!(error.to_string().contains("cut short"), "{error}");
}

#[test]
fn an_unterminated_csv_quote_is_one_unparsable_row() {
    let workload = first("prompt\nok\n\"never closed\nmore\n");
    assert_eq!(prompts(&workload), ["ok"]);
    assert_eq!(skipped(&workload, SkipReason::Unparsable).first, 3);
}

#[test]
fn too_large_is_refused_before_reading() {
    assert_eq!(MAX_WORKLOAD_BYTES, 1 << 30);
    let error = WorkloadError::TooLarge {
        bytes: MAX_WORKLOAD_BYTES + 1,
        limit: MAX_WORKLOAD_BYTES,
    };
    assert!(error.to_string().contains("split it"), "{error}");
    // The page's refusal before it reads a file at all.
    assert_eq!(
        super::super::too_large("big.json", MAX_WORKLOAD_BYTES),
        None
    );
    let why = super::super::too_large("big.json", MAX_WORKLOAD_BYTES + 1).expect("too large");
    assert_eq!(
        why,
        "big.json is 1,073,741,825 bytes; strobe reads workload files of at most 1,073,741,824 \
         bytes: split it"
    );
}

#[test]
fn prompts_never_appear_in_debug_or_in_messages() {
    let files = [
        format!("[{{\"conversations\": [{{\"from\": \"human\", \"value\": \"{SECRET}\"}}, {{\"from\": \"gpt\", \"value\": \"{SECRET}\"}}]}}]"),
        format!("{{\"messages\": [{{\"role\": \"user\", \"content\": \"{SECRET}\"}}, {{\"role\": \"assistant\", \"content\": \"{SECRET}\"}}]}}"),
        format!("{{\"prompt\": \"{SECRET}\", \"output_tokens\": \"{SECRET}\"}}\n{{\"prompt\": \"{SECRET}\"}}"),
        format!("prompt,output_tokens\n{SECRET},{SECRET}\n{SECRET},3\n"),
        format!("{SECRET}\n"),
    ];
    for file in &files {
        for turns in [WorkloadTurns::First, WorkloadTurns::All] {
            let workload = read(
                file.as_bytes(),
                None,
                &ReadOptions {
                    turns,
                    ..ReadOptions::default()
                },
            )
            .expect("usable");
            let shown = format!(
                "{workload:?} {:?} {:?}",
                workload.sessions, workload.summary
            );
            assert!(!shown.contains(SECRET), "{shown}");
            assert!(!workload.summary.sentence().contains(SECRET));
        }
    }
    let refusals = [
        format!("[{{\"conversations\": [{{\"value\": \"{SECRET}\"}}]}}]"),
        format!("{{\"{SECRET}\": \"{SECRET}\"}}"),
        format!("[{{\"prompt\": \"{SECRET}\"}}, {SECRET}]"),
        format!("[{{\"prompt\": \"{SECRET}\", \"output_tokens\": \"{SECRET}\"}}]"),
    ];
    for file in &refusals {
        let error = refused(file.as_bytes());
        let shown = format!("{error} {error:?}");
        assert!(!shown.contains(SECRET), "{shown}");
    }
}
