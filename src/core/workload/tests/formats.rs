//! Each format read from good input: what is sent, how many tokens are asked for, when.

use serde_json::json;

use super::*;
use crate::core::workload::WorkloadFormat;

#[test]
fn sharegpt_single_turn_takes_the_first_value_and_the_reply_length() {
    let text = r#"[
      {"id": "a", "conversations": [{"from": "human", "value": "Hi there"}, {"from": "gpt", "value": "Hello, friend"}]},
      {"id": 7, "conversation": [{"from": "human", "value": "Q2"}, {"from": "gpt", "value": "ab"}, {"from": "human", "value": "more"}]},
      {"id": "c", "conversations": [{"from": "human", "value": "lonely"}]}
    ]"#;
    let workload = first(text);
    assert_eq!(workload.summary.format, WorkloadFormat::Sharegpt);
    assert_eq!(prompts(&workload), ["Hi there", "Q2"]);
    let session = &workload.sessions[0];
    assert_eq!(session.id.as_deref(), Some("a"));
    // "Hello, friend" is 13 characters: ceil(13 / 3) = 5; "ab" is at least 1.
    assert_eq!(session.turns[0].output_tokens, Some(5));
    assert_eq!(workload.sessions[1].turns[0].output_tokens, Some(1));
    assert_eq!(workload.sessions[1].id.as_deref(), Some("7"));
    assert_eq!(workload.sessions[1].turns.len(), 1);
    let no_reply = skipped(&workload, SkipReason::NoReply);
    assert_eq!((no_reply.count, no_reply.first), (1, 4));
    assert_eq!(no_reply.field.as_deref(), Some("conversations"));
    assert_eq!(workload.summary.records, 3);
    assert_eq!((workload.summary.sessions, workload.summary.turns), (2, 2));
    assert!(!workload.summary.timed);
}

#[test]
fn sharegpt_all_turns_plays_human_turns_with_the_replies_recorded() {
    let text = r#"[{"id": "a", "conversations": [
        {"from": "system", "value": "be brief"},
        {"from": "human", "value": "one"}, {"from": "gpt", "value": "reply one!"},
        {"from": "human", "value": "two"}, {"from": "gpt", "value": "r2"},
        {"from": "human", "value": "three"}]}]"#;
    let workload = all(text);
    let turns = &workload.sessions[0].turns;
    assert_eq!(
        turns.iter().map(text_of).collect::<Vec<_>>(),
        ["one", "two", "three"]
    );
    assert_eq!(turns[0].recorded_reply.as_deref(), Some("reply one!"));
    assert_eq!(turns[0].output_tokens, Some(4));
    assert_eq!(turns[1].recorded_reply.as_deref(), Some("r2"));
    assert_eq!(turns[2].recorded_reply, None);
    assert_eq!(turns[2].output_tokens, None);
    assert_eq!((workload.summary.sessions, workload.summary.turns), (1, 3));
}

#[test]
fn sharegpt_without_from_alternates_human_first() {
    let text = r#"[{"conversations": [{"value": "q1"}, {"value": "a1"}, {"value": "q2"}, {"value": "a2"}]}]"#;
    let workload = all(text);
    let turns = &workload.sessions[0].turns;
    assert_eq!(turns.iter().map(text_of).collect::<Vec<_>>(), ["q1", "q2"]);
    assert_eq!(turns[1].recorded_reply.as_deref(), Some("a2"));
}

#[test]
fn openai_chat_first_sends_every_message_as_given() {
    let message = json!({"role": "user", "content": [
        {"type": "text", "text": "What is in this image?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    ], "name": "me"});
    let record =
        json!({"messages": [{"role": "system", "content": "sys"}, message], "max_tokens": 64});
    let workload = first(&format!("{record}\n"));
    assert_eq!(workload.summary.format, WorkloadFormat::OpenaiChat);
    let turn = &workload.sessions[0].turns[0];
    assert_eq!(turn.output_tokens, Some(64));
    match &turn.input {
        TurnInput::Messages(messages) => {
            assert_eq!(messages.len(), 2);
            assert_eq!(messages[1], message);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn openai_chat_all_splits_at_each_user_message() {
    let record = json!({"id": "s", "messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": "a1 reply"},
        {"role": "user", "content": "u2"},
        {"role": "assistant", "content": [{"type": "text", "text": "a2"}]},
        {"role": "tool", "content": "t"},
        {"role": "user", "content": "u3"}
    ]});
    let workload = all(&record.to_string());
    let turns = &workload.sessions[0].turns;
    assert_eq!(turns.len(), 3);
    let roles = |turn: &Turn| match &turn.input {
        TurnInput::Messages(messages) => messages
            .iter()
            .map(|m| m["content"].as_str().unwrap_or("parts").to_owned())
            .collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    assert_eq!(roles(&turns[0]), ["sys", "u1"]);
    assert_eq!(roles(&turns[1]), ["u2"]);
    assert_eq!(roles(&turns[2]), ["t", "u3"]);
    assert_eq!(turns[0].recorded_reply.as_deref(), Some("a1 reply"));
    assert_eq!(turns[0].output_tokens, Some(3));
    assert_eq!(turns[1].recorded_reply.as_deref(), Some("a2"));
    assert_eq!(turns[2].recorded_reply, None);
    // The same record with the default: one request of all seven messages.
    let single = first(&record.to_string());
    match &single.sessions[0].turns[0].input {
        TurnInput::Messages(messages) => assert_eq!(messages.len(), 7),
        other => panic!("{other:?}"),
    }
}

#[test]
fn prompt_columns_read_vllm_custom_and_guidellm_names() {
    let text = concat!(
        r#"{"prompt": "What is the capital of India?", "output_tokens": 10}"#,
        "\n",
        r#"{"instruction": "Summarise", "output_tokens_count": 5, "prompt_tokens_count": 3}"#,
        "\n",
        r#"{"question": "Why?", "completion_tokens_count": 2, "input_tokens_count": 1}"#,
        "\n",
        r#"{"text": "plain"}"#,
        "\n"
    );
    let workload = first(text);
    assert_eq!(workload.summary.format, WorkloadFormat::PromptColumns);
    assert_eq!(
        prompts(&workload),
        [
            "What is the capital of India?",
            "Summarise",
            "Why?",
            "plain"
        ]
    );
    let outputs: Vec<_> = workload
        .sessions
        .iter()
        .map(|s| (s.turns[0].output_tokens, s.turns[0].input_tokens))
        .collect();
    assert_eq!(
        outputs,
        [
            (Some(10), None),
            (Some(5), Some(3)),
            (Some(2), Some(1)),
            (None, None)
        ]
    );
}

#[test]
fn csv_with_a_header_reads_quoted_cells_and_new_lines_inside_quotes() {
    let text = "id,prompt,output_tokens\r\n\
                1,\"Hello, \"\"world\"\"\",7\r\n\
                2,\"two\nlines\",\r\n\
                3,plain,3\r\n";
    let workload = first(text);
    assert_eq!(workload.summary.format, WorkloadFormat::Csv);
    assert_eq!(
        prompts(&workload),
        ["Hello, \"world\"", "two\nlines", "plain"]
    );
    assert_eq!(workload.sessions[0].turns[0].output_tokens, Some(7));
    assert_eq!(workload.sessions[1].turns[0].output_tokens, None);
    assert_eq!(workload.sessions[2].id.as_deref(), Some("3"));
}

#[test]
fn csv_rows_of_the_wrong_width_are_counted_at_their_line() {
    let text = "prompt,output_tokens\n\"a\nb\",1\nc,2,3\nd,x\n";
    let workload = first(text);
    assert_eq!(prompts(&workload), ["a\nb"]);
    let bad_width = skipped(&workload, SkipReason::Unparsable);
    // The quoted new line makes the second row start on line 4.
    assert_eq!((bad_width.count, bad_width.first), (1, 4));
    let bad = skipped(&workload, SkipReason::BadField);
    assert_eq!(bad.first, 5);
    assert_eq!(bad.field.as_deref(), Some("output_tokens"));
}

#[test]
fn plain_text_is_one_prompt_a_non_empty_line() {
    let workload = first("Tell me a joke\r\n\r\n   \nWhat, then, is a CSV?\n");
    assert_eq!(workload.summary.format, WorkloadFormat::Text);
    assert_eq!(
        prompts(&workload),
        ["Tell me a joke", "What, then, is a CSV?"]
    );
    assert_eq!(workload.summary.records, 2);
}

#[test]
fn aiperf_single_turn_reads_text_texts_lengths_and_timestamps() {
    let text = concat!(
        r#"{"text": "Write a haiku.", "output_length": 50, "timestamp": 1000}"#,
        "\n",
        r#"{"texts": ["a", "b"], "timestamp": 1500, "session_id": "s2"}"#,
        "\n"
    );
    let workload = first(text);
    assert_eq!(workload.summary.format, WorkloadFormat::AiperfSingleTurn);
    assert_eq!(prompts(&workload), ["Write a haiku.", "a\nb"]);
    assert_eq!(workload.sessions[0].turns[0].output_tokens, Some(50));
    let arrivals: Vec<_> = workload.sessions.iter().map(|s| s.arrival_ms).collect();
    assert_eq!(arrivals, [Some(0.0), Some(500.0)]);
    assert_eq!(workload.sessions[1].id.as_deref(), Some("s2"));
    assert!(workload.summary.timed);
    assert_eq!(workload.summary.span_ms, Some(500));
}

#[test]
fn aiperf_single_turn_records_sharing_a_session_id_are_one_session_in_file_order() {
    let text = concat!(
        r#"{"text": "a1", "session_id": "a", "output_length": 5}"#,
        "\n",
        r#"{"text": "b1", "session_id": "b"}"#,
        "\n",
        r#"{"text": "lone"}"#,
        "\n",
        r#"{"text": "a2", "session_id": "a", "delay": 300}"#,
        "\n",
        r#"{"text": "b2", "session_id": "b", "output_length": 7}"#,
        "\n",
        r#"{"text": "a3", "session_id": "a"}"#,
        "\n",
    );
    // AIPerf groups by session_id whatever else is asked: the option does not cut a session.
    for workload in [first(text), all(text)] {
        assert_eq!(workload.summary.format, WorkloadFormat::AiperfSingleTurn);
        let sessions: Vec<(Option<&str>, Vec<&str>)> = workload
            .sessions
            .iter()
            .map(|session| {
                (
                    session.id.as_deref(),
                    session.turns.iter().map(text_of).collect(),
                )
            })
            .collect();
        assert_eq!(
            sessions,
            [
                (Some("a"), vec!["a1", "a2", "a3"]),
                (Some("b"), vec!["b1", "b2"]),
                (None, vec!["lone"]),
            ]
        );
        let a = &workload.sessions[0].turns;
        assert_eq!(a[0].output_tokens, Some(5));
        assert_eq!(a[1].delay_ms, Some(300.0));
        assert_eq!(workload.sessions[1].turns[1].output_tokens, Some(7));
        let summary = &workload.summary;
        assert_eq!(
            (summary.records, summary.sessions, summary.turns),
            (6, 3, 6)
        );
        assert_eq!(
            summary.sentence(),
            "AIPerf single_turn: 6 records in 3 sessions by session_id."
        );
    }
}

#[test]
fn grouped_aiperf_records_keep_the_first_arrival_and_skip_one_going_back_in_time() {
    let text = concat!(
        r#"{"text": "a1", "session_id": "a", "timestamp": 1000}"#,
        "\n",
        r#"{"text": "b1", "session_id": "b", "timestamp": 1500}"#,
        "\n",
        r#"{"text": "a2", "session_id": "a", "timestamp": 1200}"#,
        "\n",
        r#"{"text": "b2", "session_id": "b", "timestamp": 2000}"#,
        "\n",
        r#"{"text": "", "session_id": "c", "timestamp": 2100}"#,
        "\n",
        r#"{"text": "c2", "session_id": "c", "timestamp": 2200}"#,
        "\n",
    );
    let workload = first(text);
    let arrivals: Vec<_> = workload.sessions.iter().map(|s| s.arrival_ms).collect();
    // A skipped first record does not open its session: the next record of its id does.
    assert_eq!(arrivals, [Some(0.0), Some(500.0), Some(1200.0)]);
    let turns: Vec<usize> = workload.sessions.iter().map(|s| s.turns.len()).collect();
    assert_eq!(turns, [1, 2, 1]);
    assert_eq!(skipped(&workload, SkipReason::OutOfOrder).first, 3);
    assert_eq!(skipped(&workload, SkipReason::NoPrompt).first, 5);
    let summary = &workload.summary;
    assert_eq!(
        (summary.records, summary.sessions, summary.turns),
        (6, 3, 4)
    );
    assert!(summary.timed);
    assert_eq!(
        summary.sentence(),
        "AIPerf single_turn: 4 of 6 records usable in 3 sessions by session_id over 1.2 s, \
         1 goes back in time, 1 has no prompt."
    );
}

#[test]
fn aiperf_single_turn_delay_is_a_turn_delay_not_an_arrival() {
    let workload = first(r#"{"text": "x", "delay": 250}"#);
    assert_eq!(workload.sessions[0].turns[0].delay_ms, Some(250.0));
    assert_eq!(workload.sessions[0].arrival_ms, None);
    assert!(!workload.summary.timed);
}

#[test]
fn aiperf_multi_turn_is_a_session_with_delays_after_the_first_turn() {
    let text = r#"{"session_id": "chat_1", "turns": [{"text": "What is ML?", "delay": 9}, {"text": "Example?", "delay": 2000, "output_length": 20}]}"#;
    // The option does not cut a multi_turn session: it is a session either way.
    for workload in [first(text), all(text)] {
        assert_eq!(workload.summary.format, WorkloadFormat::AiperfMultiTurn);
        let session = &workload.sessions[0];
        assert_eq!(session.id.as_deref(), Some("chat_1"));
        let turns = &session.turns;
        assert_eq!(
            turns.iter().map(text_of).collect::<Vec<_>>(),
            ["What is ML?", "Example?"]
        );
        assert_eq!(turns[0].delay_ms, None);
        assert_eq!(turns[1].delay_ms, Some(2000.0));
        assert_eq!(turns[1].output_tokens, Some(20));
        assert_eq!((workload.summary.sessions, workload.summary.turns), (1, 2));
    }
}

#[test]
fn mooncake_records_are_synthetic_prompts_at_their_timestamps() {
    let text = concat!(
        r#"{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [0,1,2,3,4,5,6,7,8,9,10,11,12,13]}"#,
        "\n",
        r#"{"timestamp": 30535, "input_length": 1024, "output_length": 3, "hash_ids": [0, 46]}"#,
        "\n",
        r#"{"timestamp": 30600, "input_length": 1025, "output_length": 3, "hash_ids": [0, 46]}"#,
        "\n",
        r#"{"timestamp": 30000, "input_length": 10, "output_length": 3}"#,
        "\n",
    );
    let workload = first(text);
    assert_eq!(workload.summary.format, WorkloadFormat::MooncakeTrace);
    assert_eq!(workload.sessions.len(), 2);
    let turn = &workload.sessions[1].turns[0];
    assert_eq!(
        turn.input,
        TurnInput::Synthetic {
            tokens: 1024,
            hash_ids: vec![0, 46]
        }
    );
    assert_eq!(
        (turn.output_tokens, turn.input_tokens),
        (Some(3), Some(1024))
    );
    assert_eq!(workload.sessions[0].arrival_ms, Some(0.0));
    assert_eq!(workload.sessions[1].arrival_ms, Some(3053.0));
    // 1025 tokens need three 512-token blocks, not two.
    let mismatch = skipped(&workload, SkipReason::BlockMismatch);
    assert_eq!(
        (mismatch.first, mismatch.field.as_deref()),
        (3, Some("hash_ids"))
    );
    // 30000 comes after 30535: time does not run backwards in a replay.
    let backwards = skipped(&workload, SkipReason::OutOfOrder);
    assert_eq!(
        (backwards.first, backwards.field.as_deref()),
        (4, Some("timestamp"))
    );
    assert!(workload.summary.timed);
    assert_eq!(workload.summary.span_ms, Some(3053));
}

#[test]
fn burstgpt_rows_are_timed_requests_and_failures_are_skipped() {
    let text = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n\
                5,ChatGPT,472,18,490,Conversation log\n\
                45,ChatGPT,1087,0,1087,Conversation log\n\
                47.5,GPT-4,417,276,693,API log\n";
    let workload = first(text);
    assert_eq!(workload.summary.format, WorkloadFormat::Burstgpt);
    assert_eq!(workload.sessions.len(), 2);
    assert_eq!(workload.sessions[1].arrival_ms, Some(42_500.0));
    assert_eq!(
        workload.sessions[1].turns[0].input,
        TurnInput::Synthetic {
            tokens: 417,
            hash_ids: vec![]
        }
    );
    assert_eq!(workload.sessions[1].turns[0].output_tokens, Some(276));
    let failed = skipped(&workload, SkipReason::Failed);
    assert_eq!((failed.count, failed.first), (1, 3));
    assert_eq!(failed.field.as_deref(), Some("Response tokens"));
    assert_eq!(workload.summary.span_ms, Some(42_500));
}

#[test]
fn the_summary_carries_size_name_and_hash_of_the_bytes() {
    let workload = first("hello\n");
    assert_eq!(workload.summary.bytes, 6);
    assert_eq!(workload.summary.name.as_deref(), Some("file"));
    // printf 'hello\n' | sha256sum
    assert_eq!(
        workload.summary.sha256,
        "sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
    );
}
