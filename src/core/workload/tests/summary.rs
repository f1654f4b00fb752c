//! The summary sentence, and the samples the page offers read as the page reads them.

use super::*;
use crate::core::workload::{WorkloadFormat, WorkloadSummary};

fn summary(format: WorkloadFormat, records: u64, sessions: u64, turns: u64) -> WorkloadSummary {
    WorkloadSummary {
        format,
        name: None,
        bytes: 1,
        sha256: String::new(),
        records,
        sessions,
        turns,
        skipped: Vec::new(),
        timed: false,
        span_ms: None,
    }
}

#[test]
fn the_sentence_counts_usable_records_and_says_why_others_are_not() {
    let mut sharegpt = summary(WorkloadFormat::Sharegpt, 24, 21, 21);
    sharegpt.skipped.push(Skipped {
        reason: SkipReason::NoReply,
        count: 3,
        first: 9,
        field: None,
    });
    assert_eq!(
        sharegpt.sentence(),
        "ShareGPT: 21 of 24 conversations usable, 3 have no reply."
    );
    sharegpt.skipped.push(Skipped {
        reason: SkipReason::BadField,
        count: 1,
        first: 12,
        field: Some("id".into()),
    });
    sharegpt.records = 25;
    assert_eq!(
        sharegpt.sentence(),
        "ShareGPT: 21 of 25 conversations usable, 3 have no reply, 1 has a field of the wrong type."
    );
}

#[test]
fn the_sentence_gives_a_trace_its_length_and_sessions_their_turns() {
    let mut trace = summary(WorkloadFormat::MooncakeTrace, 40, 40, 40);
    trace.timed = true;
    trace.span_ms = Some(12_480);
    assert_eq!(trace.sentence(), "Mooncake trace: 40 requests over 12.5 s.");
    trace.span_ms = Some(3_600_000);
    assert_eq!(
        trace.sentence(),
        "Mooncake trace: 40 requests over 3,600 s."
    );
    let one = summary(WorkloadFormat::Text, 1, 1, 1);
    assert_eq!(one.sentence(), "plain text: 1 line.");
    let sessions = summary(WorkloadFormat::AiperfMultiTurn, 8, 8, 23);
    assert_eq!(
        sessions.sentence(),
        "AIPerf multi_turn: 8 sessions (23 turns)."
    );
    let rows = summary(WorkloadFormat::Csv, 5, 4, 4);
    assert_eq!(rows.sentence(), "CSV: 4 of 5 rows usable.");
}

#[test]
fn the_conversations_sample_is_eight_aiperf_sessions_with_delays() {
    let workload = first(include_str!(
        "../../../../public/samples/conversations.jsonl"
    ));
    assert_eq!(workload.summary.format, WorkloadFormat::AiperfMultiTurn);
    assert_eq!(
        workload.summary.sentence(),
        "AIPerf multi_turn: 8 sessions (23 turns)."
    );
    let sizes: Vec<usize> = workload.sessions.iter().map(|s| s.turns.len()).collect();
    assert!(
        sizes.iter().all(|&turns| (2..=4).contains(&turns)),
        "{sizes:?}"
    );
    let delays = workload
        .sessions
        .iter()
        .flat_map(|s| &s.turns)
        .filter(|turn| turn.delay_ms.is_some())
        .count();
    assert!(delays > 8, "{delays}");
    assert!(workload.summary.skipped.is_empty());
}

#[test]
fn the_trace_sample_is_forty_requests_over_ten_seconds_sharing_leading_blocks() {
    let workload = first(include_str!("../../../../public/samples/trace.jsonl"));
    assert_eq!(
        workload.summary.sentence(),
        "Mooncake trace: 40 requests over 9.6 s."
    );
    assert!(workload.summary.timed);
    let leading: Vec<u64> = workload
        .sessions
        .iter()
        .map(|session| match &session.turns[0].input {
            TurnInput::Synthetic { hash_ids, .. } => hash_ids[0],
            other => panic!("{other:?}"),
        })
        .collect();
    // Three families of shared prefixes, each used more than once.
    for family in [0, 10, 20] {
        assert!(
            leading.iter().filter(|&&id| id == family).count() > 1,
            "{leading:?}"
        );
    }
}

#[test]
fn the_prompts_sample_is_twenty_vllm_custom_prompts_of_mixed_lengths() {
    let workload = first(include_str!("../../../../public/samples/prompts.jsonl"));
    assert_eq!(workload.summary.sentence(), "prompts (JSON): 20 records.");
    let outputs: Vec<u64> = workload
        .sessions
        .iter()
        .filter_map(|s| s.turns[0].output_tokens)
        .collect();
    assert_eq!(outputs.len(), 20);
    assert!(outputs.iter().min() < Some(&20) && outputs.iter().max() > Some(&300));
}

#[test]
fn formats_and_skip_reasons_are_spelled_as_serde_writes_them() {
    use crate::core::workload::SkipReason;
    for format in WorkloadFormat::ALL {
        assert_eq!(
            serde_json::to_value(format).ok(),
            Some(serde_json::Value::from(format.as_str()))
        );
    }
    for reason in SkipReason::ALL {
        assert_eq!(
            serde_json::to_value(reason).ok(),
            Some(serde_json::Value::from(reason.as_str()))
        );
    }
}
