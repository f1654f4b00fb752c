//! Tests of playing a session: turn order and waits, live and recorded history in the bodies,
//! what a failed turn or a cut reply leaves unsent, a cancel, and the bodies known ahead.

use std::sync::Arc;

use serde_json::{json, Value};

use super::*;
use crate::core::config::choices::{HistoryMode, LoadMode};
use crate::core::config::settings::RunConfig;
use crate::core::plan::workload::{WorkloadPlanError, WorkloadRequests};
use crate::core::workload::{Session, Turn, TurnInput, Workload, WorkloadFormat, WorkloadSummary};

fn turn(text: &str, delay_ms: Option<f64>, recorded: Option<&str>) -> Turn {
    Turn {
        input: TurnInput::Text(text.into()),
        output_tokens: Some(8),
        input_tokens: None,
        delay_ms,
        recorded_reply: recorded.map(str::to_owned),
    }
}

/// Session 0: one turn; session 1: three turns, the second with a delay of its own.
fn workload() -> Workload {
    let sessions = vec![
        Session {
            id: Some("solo".into()),
            arrival_ms: None,
            turns: vec![turn("only", None, Some("r-only"))],
        },
        Session {
            id: Some("chat".into()),
            arrival_ms: None,
            turns: vec![
                turn("first question", None, Some("recorded one")),
                turn("second question", Some(2000.0), Some("recorded two")),
                turn("third question", None, None),
            ],
        },
    ];
    Workload {
        summary: WorkloadSummary {
            format: WorkloadFormat::AiperfMultiTurn,
            name: None,
            bytes: 1,
            sha256: format!("sha256:{}", "0".repeat(64)),
            records: 2,
            sessions: 2,
            turns: 4,
            skipped: Vec::new(),
            timed: false,
            span_ms: None,
        },
        sessions,
        positions: Vec::new(),
    }
}

fn config(history: HistoryMode) -> RunConfig {
    let mut config = RunConfig {
        base_url: "http://127.0.0.1:8011/v1".into(),
        model: "m".into(),
        engine: Some("sim".into()),
        requests: 100,
        request_canaries: false,
        ..RunConfig::default()
    };
    config.workload.history = history;
    config.workload.think_time_ms = 500;
    config
}

fn plan(history: HistoryMode) -> RunPlan {
    let config = config(history);
    let requests = WorkloadRequests::plan(&workload(), &config).unwrap();
    RunPlan::for_run(&config, None, Some(Arc::new(requests))).unwrap()
}

fn reply(text: &str) -> CapturedReply {
    CapturedReply {
        text: text.into(),
        chars: text.chars().count(),
        limit: HISTORY_REPLY_LIMIT_CHARS,
        cut: false,
    }
}

fn messages(body: &str) -> Value {
    serde_json::from_str::<Value>(body).unwrap()["messages"].clone()
}

#[test]
fn turns_come_in_order_each_after_its_own_delay_or_the_think_time() {
    let plan = plan(HistoryMode::Live);
    let mut play = SessionPlay::new(&plan, 1).unwrap();
    let mut due = Vec::new();
    while let Some(next) = play.next_turn() {
        due.push(next);
        play.ended(TurnEnd::Replied(&reply("ok")));
    }
    assert_eq!(
        due,
        vec![
            DueTurn {
                index: 1,
                turn: 0,
                wait_ms: 0.0
            },
            DueTurn {
                index: 2,
                turn: 1,
                wait_ms: 2000.0
            },
            DueTurn {
                index: 3,
                turn: 2,
                wait_ms: 500.0
            },
        ]
    );
    assert!(play.abandon(false).is_empty());
    assert!(SessionPlay::new(&plan, 2).is_none());
}

#[test]
fn the_session_header_carries_the_files_id_or_the_sessions_position() {
    let mut config = config(HistoryMode::Live);
    let mut workload = workload();
    workload.sessions[0].id = None;
    let plan_with = |config: &RunConfig| {
        let requests = WorkloadRequests::plan(&workload, config).unwrap();
        RunPlan::for_run(config, None, Some(Arc::new(requests))).unwrap()
    };
    let plan = plan_with(&config);
    assert_eq!(SessionPlay::new(&plan, 1).unwrap().header(&plan), None);
    config.workload.session_header = Some("X-Session-ID".into());
    let plan = plan_with(&config);
    let header = |session| SessionPlay::new(&plan, session).unwrap().header(&plan);
    assert_eq!(header(0), Some(("X-Session-ID".into(), "session-1".into())));
    assert_eq!(header(1), Some(("X-Session-ID".into(), "chat".into())));
}

#[test]
fn live_history_sends_the_servers_own_replies_whole() {
    let plan = plan(HistoryMode::Live);
    let mut play = SessionPlay::new(&plan, 1).unwrap();
    assert_eq!(
        messages(&play.body(&plan).unwrap()),
        json!([{"role": "user", "content": "first question"}])
    );
    // A reply past the spec's 8,192-character capture is still sent back whole.
    let long = "é".repeat(9000);
    play.ended(TurnEnd::Replied(&reply(&long)));
    play.ended(TurnEnd::Replied(&reply("second answer")));
    assert_eq!(
        messages(&play.body(&plan).unwrap()),
        json!([
            {"role": "user", "content": "first question"},
            {"role": "assistant", "content": long},
            {"role": "user", "content": "second question"},
            {"role": "assistant", "content": "second answer"},
            {"role": "user", "content": "third question"},
        ])
    );
}

#[test]
fn recorded_history_sends_the_files_replies_and_survives_a_failed_turn() {
    let plan_of = |history| {
        let mut config = config(history);
        config.workload.history = history;
        let mut workload = workload();
        workload.sessions[1].turns[2].recorded_reply = None;
        let requests = WorkloadRequests::plan(&workload, &config).unwrap();
        RunPlan::for_run(&config, None, Some(Arc::new(requests))).unwrap()
    };
    let plan = plan_of(HistoryMode::Recorded);
    let mut play = SessionPlay::new(&plan, 1).unwrap();
    play.ended(TurnEnd::Failed);
    play.ended(TurnEnd::Replied(&reply("the server's, not sent")));
    assert_eq!(play.next_turn().map(|due| due.index), Some(3));
    assert_eq!(
        messages(&play.body(&plan).unwrap()),
        json!([
            {"role": "user", "content": "first question"},
            {"role": "assistant", "content": "recorded one"},
            {"role": "user", "content": "second question"},
            {"role": "assistant", "content": "recorded two"},
            {"role": "user", "content": "third question"},
        ])
    );
    // Known before anything is sent: every body of a recorded session, only first turns live.
    assert_eq!(
        replies_known_ahead(&plan, 3),
        Some(vec!["recorded one", "recorded two"])
    );
    let live = plan_of(HistoryMode::Live);
    assert_eq!(replies_known_ahead(&live, 1), Some(Vec::new()));
    assert_eq!(replies_known_ahead(&live, 2), None);
    assert_eq!(replies_known_ahead(&live, 9), None);
}

#[test]
fn a_failed_turn_with_live_history_leaves_the_rest_unsent_with_the_reason() {
    let plan = plan(HistoryMode::Live);
    let mut play = SessionPlay::new(&plan, 1).unwrap();
    play.ended(TurnEnd::Failed);
    assert_eq!(play.next_turn(), None);
    let rest = play.abandon(false);
    assert_eq!(
        rest.iter().map(|(index, _)| *index).collect::<Vec<_>>(),
        vec![2, 3]
    );
    assert_eq!(rest[0].1.error_type, SESSION_ERROR_TYPE);
    assert!(rest[0].1.message.contains("turn 1 of this session failed"));
    assert!(play.abandon(false).is_empty(), "abandoned once");

    // The last turn's failure leaves nothing behind.
    let mut play = SessionPlay::new(&plan, 0).unwrap();
    play.ended(TurnEnd::Failed);
    assert!(play.abandon(false).is_empty());
}

#[test]
fn a_reply_cut_at_the_bound_cannot_be_history() {
    let plan = plan(HistoryMode::Live);
    let mut play = SessionPlay::new(&plan, 1).unwrap();
    let cut = CapturedReply {
        cut: true,
        ..reply("partial")
    };
    play.ended(TurnEnd::Replied(&cut));
    let rest = play.abandon(false);
    assert_eq!(rest.len(), 2);
    assert!(
        rest[1].1.message.contains("longer than"),
        "{}",
        rest[1].1.message
    );

    // A break's reason stands when the run is cancelled after it too.
    let mut play = SessionPlay::new(&plan, 1).unwrap();
    play.ended(TurnEnd::Failed);
    let rest = play.abandon(true);
    assert!(rest
        .iter()
        .all(|(_, error)| error.error_type == SESSION_ERROR_TYPE));
}

#[test]
fn a_cancel_abandons_every_turn_not_yet_sent() {
    let plan = plan(HistoryMode::Live);
    let mut play = SessionPlay::new(&plan, 1).unwrap();
    play.ended(TurnEnd::Replied(&reply("one")));
    let rest = play.abandon(true);
    assert_eq!(
        rest.iter().map(|(index, _)| *index).collect::<Vec<_>>(),
        vec![2, 3]
    );
    assert!(rest
        .iter()
        .all(|(_, error)| error.error_type == "AbortError"));
    assert_eq!(play.next_turn(), None);
}

#[test]
fn conversations_refuse_a_rate_schedule_and_recorded_history_without_replies() {
    let mut at_rate = config(HistoryMode::Live);
    at_rate.load.mode = LoadMode::Rate;
    assert_eq!(
        WorkloadRequests::plan(&workload(), &at_rate),
        Err(WorkloadPlanError::SessionsAtRate)
    );
    let mut missing = workload();
    missing.sessions[1].turns[1].recorded_reply = None;
    let error = WorkloadRequests::plan(&missing, &config(HistoryMode::Recorded)).unwrap_err();
    assert_eq!(
        error,
        WorkloadPlanError::NoRecordedReplies {
            turns: 1,
            first_session: 2,
            first_turn: 2,
        }
    );
    assert!(error.to_string().contains("set history=live"));
    // The last turn's reply is never history: none is needed.
    assert!(WorkloadRequests::plan(&workload(), &config(HistoryMode::Recorded)).is_ok());
}
