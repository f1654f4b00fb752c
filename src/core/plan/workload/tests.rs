//! Tests of planning a workload's requests: order, the requests cut, output lengths, positions,
//! trace times, and a plan's Debug that never shows a prompt.

use std::sync::Arc;

use super::*;
use crate::core::config::choices::{PromptCacheMode, WorkloadOrder};
use crate::core::plan::RunPlan;
use crate::core::workload::{SkipReason, Skipped, WorkloadFormat, WorkloadSummary};

fn summary(timed: bool, sessions: u64, turns: u64) -> WorkloadSummary {
    WorkloadSummary {
        format: WorkloadFormat::AiperfMultiTurn,
        name: Some("w.jsonl".into()),
        bytes: 100,
        sha256: format!("sha256:{}", "0".repeat(64)),
        records: sessions + 1,
        sessions,
        turns,
        skipped: vec![Skipped {
            reason: SkipReason::NoPrompt,
            count: 1,
            first: 2,
            field: None,
        }],
        timed,
        span_ms: None,
    }
}

fn text_turn(text: &str, output: Option<u64>) -> Turn {
    Turn {
        input: TurnInput::Text(text.into()),
        output_tokens: output,
        input_tokens: None,
        delay_ms: None,
        recorded_reply: None,
    }
}

/// Sessions of 1, 2 and 3 turns ("s0t0", "s1t0", "s1t1", …).
fn conversations() -> Workload {
    let sessions = (0..3)
        .map(|s| Session {
            id: Some(format!("session-{s}")),
            arrival_ms: None,
            turns: (0..=s)
                .map(|t| text_turn(&format!("s{s}t{t} secret words"), Some(10 + t as u64)))
                .collect(),
        })
        .collect();
    Workload {
        summary: summary(false, 3, 6),
        sessions,
        positions: Vec::new(),
    }
}

fn config(requests: u64) -> RunConfig {
    RunConfig {
        base_url: "http://127.0.0.1:8011/v1".into(),
        model: "m".into(),
        engine: Some("sim".into()),
        requests,
        max_tokens: 64,
        ..RunConfig::default()
    }
}

fn text_of(plan: &WorkloadRequests, index: u64) -> String {
    match &plan.turn(index).unwrap().input {
        PlannedInput::Text { text } => text.clone(),
        _ => panic!("request {index} is not text"),
    }
}

#[test]
fn requests_number_turns_across_sessions_and_the_cut_can_end_a_session() {
    let plan = WorkloadRequests::plan(&conversations(), &config(5)).unwrap();
    assert_eq!(plan.requests(), 5);
    assert_eq!(plan.sessions().len(), 3);
    assert_eq!(
        plan.sessions()[2].turns.len(),
        2,
        "the cut ends the last session early"
    );
    assert_eq!(plan.position(0), Some((0, 0)));
    assert_eq!(plan.position(1), Some((1, 0)));
    assert_eq!(plan.position(2), Some((1, 1)));
    assert_eq!(plan.position(4), Some((2, 1)));
    assert_eq!(plan.position(5), None);
    assert_eq!(plan.index_of(2, 1), Some(4));
    assert_eq!(plan.index_of(2, 2), None);
    assert_eq!(text_of(&plan, 2), "s1t1 secret words");
    assert!(plan.has_conversations());
}

#[test]
fn output_lengths_come_from_the_record_or_the_form() {
    let mut workload = conversations();
    workload.sessions[0].turns[0].output_tokens = None;
    let from_file = WorkloadRequests::plan(&workload, &config(6)).unwrap();
    assert_eq!(
        from_file.turn(0).unwrap().max_tokens,
        64,
        "no length: the form's"
    );
    assert_eq!(from_file.turn(2).unwrap().max_tokens, 11);
    let mut fixed = config(6);
    fixed.workload.output_lengths = OutputLengths::Fixed;
    let fixed = WorkloadRequests::plan(&workload, &fixed).unwrap();
    assert!((0..6).all(|i| fixed.turn(i).unwrap().max_tokens == 64));
    // "s0t0 secret words" is 17 characters: 6 tokens at 3 a token.
    assert_eq!(from_file.turn(0).unwrap().input_tokens, 6);
}

#[test]
fn a_shuffle_is_reproducible_from_its_seed_and_a_trace_refuses_it() {
    let mut workload = conversations();
    workload.sessions = (0..20)
        .map(|s| Session {
            id: None,
            arrival_ms: None,
            turns: vec![text_turn(&format!("prompt {s}"), None)],
        })
        .collect();
    workload.summary = summary(false, 20, 20);
    let mut shuffled = config(20);
    shuffled.workload.order = WorkloadOrder::Shuffle;
    shuffled.workload.seed = 7;
    let order = |plan: &WorkloadRequests| -> Vec<u64> {
        plan.sessions()
            .iter()
            .map(|session| session.record)
            .collect()
    };
    let first = WorkloadRequests::plan(&workload, &shuffled).unwrap();
    let again = WorkloadRequests::plan(&workload, &shuffled).unwrap();
    assert_eq!(order(&first), order(&again));
    // python3 -c "import random; x = list(range(20)); random.Random(7).shuffle(x); print(x[:3])"
    assert_eq!(order(&first)[..3], [17, 15, 11]);
    let mut sorted = order(&first);
    sorted.sort_unstable();
    assert_eq!(sorted, (0..20).collect::<Vec<_>>(), "a permutation");

    workload.summary.timed = true;
    for (s, session) in workload.sessions.iter_mut().enumerate() {
        session.arrival_ms = Some(1000.0 + 100.0 * s as f64);
    }
    assert_eq!(
        WorkloadRequests::plan(&workload, &shuffled),
        Err(WorkloadPlanError::ShuffledTrace)
    );
}

#[test]
fn a_trace_is_due_at_its_times_over_the_speed_in_time_order() {
    let sessions = [300.0, 100.0, 100.0, 700.0]
        .iter()
        .enumerate()
        .map(|(s, &at)| Session {
            id: None,
            arrival_ms: Some(at),
            turns: vec![Turn {
                input: TurnInput::Synthetic {
                    tokens: 1000,
                    hash_ids: vec![0, 1],
                },
                output_tokens: Some(5 + s as u64),
                input_tokens: Some(1000),
                delay_ms: None,
                recorded_reply: None,
            }],
        })
        .collect();
    let workload = Workload {
        summary: summary(true, 4, 4),
        sessions,
        positions: Vec::new(),
    };
    let plan = WorkloadRequests::plan(&workload, &config(100)).unwrap();
    let records: Vec<u64> = plan.sessions().iter().map(|s| s.record).collect();
    assert_eq!(records, [1, 2, 0, 3], "time order, ties in file order");
    assert_eq!(
        plan.arrival_times_ms(2.0),
        Some(vec![0.0, 0.0, 100.0, 300.0])
    );
    let run = RunPlan::for_run(&config(100), Some(8192), Some(Arc::new(plan))).unwrap();
    assert_eq!(run.requests(), 4);
    assert_eq!(run.arrival_times_ms(), Some(&[0.0, 0.0, 200.0, 600.0][..]));
    assert_eq!(run.planned_context_tokens(), [1000, 1000, 1000, 1000]);
    assert_eq!(run.max_tokens_of(0), 6);
    assert_eq!(run.max_tokens_of(3), 8);
    assert_eq!(run.prompt_cache_mode(), PromptCacheMode::Unique);
    assert_eq!(run.shared_prefix_tokens(), 0);
}

#[test]
fn nothing_to_send_is_an_error_and_debug_never_shows_a_prompt() {
    let empty = Workload {
        summary: summary(false, 0, 0),
        sessions: Vec::new(),
        positions: Vec::new(),
    };
    assert_eq!(
        WorkloadRequests::plan(&empty, &config(10)),
        Err(WorkloadPlanError::Empty)
    );
    let plan = Arc::new(WorkloadRequests::plan(&conversations(), &config(6)).unwrap());
    let run = RunPlan::for_run(&config(6), None, Some(plan.clone())).unwrap();
    for shown in [
        format!("{plan:?}"),
        format!("{run:?}"),
        format!("{:?}", conversations()),
    ] {
        assert!(!shown.contains("secret"), "{shown}");
    }
    // The plan travels to the measuring thread as JSON and back unchanged.
    let json = serde_json::to_string(&*plan).unwrap();
    let back: WorkloadRequests = serde_json::from_str(&json).unwrap();
    assert!(back == *plan);
}

#[test]
fn a_duration_cuts_an_untimed_workload_at_rate_and_plans_only_what_is_sent() {
    let workload = Workload {
        summary: summary(false, 20, 20),
        sessions: (0..20)
            .map(|s| Session {
                id: None,
                arrival_ms: None,
                turns: vec![text_turn(&format!("prompt {s}"), None)],
            })
            .collect(),
        positions: Vec::new(),
    };
    let mut config = config(20);
    config.load.mode = crate::core::config::choices::LoadMode::Rate;
    config.load.rate = 10.0;
    config.load.arrivals = crate::core::config::choices::Arrivals::Constant;
    config.load.duration_s = Some(0.95);
    let plan = Arc::new(WorkloadRequests::plan(&workload, &config).unwrap());
    let run = RunPlan::for_run(&config, None, Some(plan)).unwrap();
    let due = run.arrival_times_ms().unwrap().len() as u64;
    assert!(due < 20, "{due} due within the duration");
    assert_eq!(run.requests(), due);
    assert_eq!(run.planned_context_tokens().len() as u64, due);
    assert_eq!(run.context_distribution().values().sum::<u64>(), due);
}

#[test]
fn a_file_larger_than_a_run_keeps_only_what_the_order_sends() {
    use crate::core::workload::read::{read, ReadOptions};
    let usable = MAX_REQUESTS + 50;
    let text: String = (0..usable).map(|i| format!("prompt {i}\n")).collect();
    let all = read(text.as_bytes(), None, &ReadOptions::default()).unwrap();
    for (order, seed) in [(WorkloadOrder::File, 0), (WorkloadOrder::Shuffle, 7)] {
        let mut config = config(MAX_REQUESTS);
        config.workload.order = order;
        config.workload.seed = seed;
        let keep = sessions_to_keep(usable, &config.workload);
        assert!(matches!(keep, Keep::First(_) | Keep::These(_)), "{keep:?}");
        let options = ReadOptions {
            keep,
            ..ReadOptions::default()
        };
        let kept = read(text.as_bytes(), None, &options).unwrap();
        assert_eq!(kept.sessions.len() as u64, MAX_REQUESTS);
        assert_eq!(kept.summary, all.summary);
        let whole = WorkloadRequests::plan(&all, &config).unwrap();
        let from_kept = WorkloadRequests::plan(&kept, &config).unwrap();
        assert_eq!(from_kept, whole, "{order:?}");
        // Another seed needs other sessions: the plan says so instead of sending others.
        if order == WorkloadOrder::Shuffle {
            config.workload.seed = 8;
            assert!(matches!(
                WorkloadRequests::plan(&kept, &config),
                Err(WorkloadPlanError::NotKept { .. })
            ));
        }
    }
    assert_eq!(
        sessions_to_keep(MAX_REQUESTS, &config(1).workload),
        Keep::All
    );
}
