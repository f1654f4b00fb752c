use super::*;
use crate::core::live::ResultFacts;

/// The reference artifact's exact text: what a worker's `Finished` carries.
const ARTIFACT_TEXT: &str = include_str!("../../../../tests/fixtures/reference-artifact.json");

/// When the worker was created in these tests, page ms.
const T0: f64 = 5_000.0;

fn result(index: u64) -> FinishedRequest {
    FinishedRequest::Completed {
        out_toks: 16,
        row: None,
        facts: Box::new(ResultFacts {
            request_index: index,
            ..ResultFacts::default()
        }),
    }
}

fn counters(in_flight: u64) -> LiveProgress {
    LiveProgress {
        in_flight,
        ..LiveProgress::default()
    }
}

fn progress(finished: Vec<FinishedRequest>) -> Result<FromMeasurement, String> {
    Ok(FromMeasurement::Progress {
        progress: counters(2),
        finished,
    })
}

fn finish_and_terminate(end: WorkerEnd) -> Vec<WorkerAction> {
    vec![WorkerAction::Finish(end), WorkerAction::Terminate]
}

/// A session whose worker said it was ready at `T0 + 100`.
fn running() -> WorkerSession {
    let mut session = WorkerSession::new(T0);
    assert_eq!(
        session.on_message(Ok(FromMeasurement::Ready), T0 + 100.0),
        vec![WorkerAction::PostStart]
    );
    session
}

/// Every input a session could get after it ended: none does anything.
fn assert_inert(session: &mut WorkerSession, now_ms: f64) {
    assert!(session.is_ended());
    assert_eq!(
        session.on_message(Ok(FromMeasurement::Ready), now_ms),
        vec![]
    );
    assert_eq!(
        session.on_message(progress(vec![result(9)]), now_ms),
        vec![]
    );
    assert_eq!(
        session.on_message(
            Ok(FromMeasurement::Finished {
                progress: counters(0),
                finished: vec![],
                artifact_text: ARTIFACT_TEXT.to_owned(),
            }),
            now_ms
        ),
        vec![]
    );
    assert_eq!(
        session.on_message(
            Ok(FromMeasurement::Failed {
                progress: counters(0),
                finished: vec![],
                reason: "late".to_owned(),
            }),
            now_ms
        ),
        vec![]
    );
    assert_eq!(
        session.on_message(Err("garbled".to_owned()), now_ms),
        vec![]
    );
    assert_eq!(session.on_cancel(), vec![]);
    assert_eq!(session.on_worker_error("late".to_owned()), vec![]);
    assert_eq!(session.on_tick(now_ms + 1e6), vec![]);
    assert!(session.is_ended());
}

#[test]
fn start_is_posted_only_once_the_worker_is_ready() {
    let mut session = WorkerSession::new(T0);
    assert!(!session.is_ended());
    // Loading: the ticks before the start timeout do nothing, and nothing is posted.
    for second in 1..30 {
        assert_eq!(
            session.on_tick(T0 + f64::from(second) * 1000.0 - 1.0),
            vec![]
        );
    }
    assert_eq!(
        session.on_message(Ok(FromMeasurement::Ready), T0 + 29_500.0),
        vec![WorkerAction::PostStart]
    );
    assert!(!session.is_ended());
}

#[test]
fn a_second_ready_starts_nothing() {
    let mut session = running();
    assert_eq!(
        session.on_message(Ok(FromMeasurement::Ready), T0 + 200.0),
        vec![]
    );
    // Cancel after it is still a cancel of the running worker, not one before its start.
    assert_eq!(session.on_cancel(), vec![WorkerAction::PostCancel]);
    assert!(!session.is_ended());
}

#[test]
fn cancel_before_ready_ends_at_once_having_posted_nothing() {
    let mut session = WorkerSession::new(T0);
    assert_eq!(
        session.on_cancel(),
        finish_and_terminate(WorkerEnd::CancelledBeforeStart)
    );
    // The worker's Ready, should it still come, starts nothing.
    assert_inert(&mut session, T0 + 500.0);
}

#[test]
fn cancel_after_ready_is_posted_and_the_workers_end_follows() {
    let mut session = running();
    assert_eq!(session.on_cancel(), vec![WorkerAction::PostCancel]);
    // Pressed twice: posted twice (the worker's cancel is idempotent).
    assert_eq!(session.on_cancel(), vec![WorkerAction::PostCancel]);
    assert!(!session.is_ended());
    let actions = session.on_message(
        Ok(FromMeasurement::Finished {
            progress: LiveProgress {
                cancelled: true,
                ..counters(0)
            },
            finished: vec![result(0)],
            artifact_text: ARTIFACT_TEXT.to_owned(),
        }),
        T0 + 900.0,
    );
    assert_eq!(actions.len(), 3);
    assert!(matches!(
        &actions[1],
        WorkerAction::Finish(WorkerEnd::Finished(_))
    ));
    assert_inert(&mut session, T0 + 1_000.0);
}

#[test]
fn progress_then_finished_updates_the_tally_then_ends_with_the_artifact() {
    let mut session = running();
    assert_eq!(
        session.on_message(progress(vec![result(0), result(1)]), T0 + 350.0),
        vec![WorkerAction::UpdateTally {
            finished: vec![result(0), result(1)],
            progress: counters(2),
        }]
    );
    // A report with nothing new still carries the counters.
    assert_eq!(
        session.on_message(progress(vec![]), T0 + 600.0),
        vec![WorkerAction::UpdateTally {
            finished: vec![],
            progress: counters(2),
        }]
    );
    let mut actions = session
        .on_message(
            Ok(FromMeasurement::Finished {
                progress: counters(0),
                finished: vec![result(2)],
                artifact_text: ARTIFACT_TEXT.to_owned(),
            }),
            T0 + 850.0,
        )
        .into_iter();
    assert_eq!(
        actions.next(),
        Some(WorkerAction::UpdateTally {
            finished: vec![result(2)],
            progress: counters(0),
        })
    );
    let expected: ArtifactV1 = serde_json::from_str(ARTIFACT_TEXT).expect("the reference");
    assert_eq!(
        actions.next(),
        Some(WorkerAction::Finish(WorkerEnd::Finished(Box::new(
            expected
        ))))
    );
    assert_eq!(actions.next(), Some(WorkerAction::Terminate));
    assert_eq!(actions.next(), None);
    assert_inert(&mut session, T0 + 900.0);
}

#[test]
fn an_artifact_that_does_not_read_ends_the_run_saying_why() {
    let mut session = running();
    let actions = session.on_message(
        Ok(FromMeasurement::Finished {
            progress: counters(0),
            finished: vec![result(0)],
            artifact_text: "{\"not\": \"an artifact\"}".to_owned(),
        }),
        T0 + 500.0,
    );
    assert_eq!(actions.len(), 3);
    assert!(
        matches!(&actions[0], WorkerAction::UpdateTally { finished, .. } if finished.len() == 1)
    );
    match &actions[1] {
        WorkerAction::Finish(WorkerEnd::UnreadableArtifact(reason)) => {
            assert!(reason.contains("missing field"), "{reason}");
        }
        other => panic!("expected an unreadable artifact, got {other:?}"),
    }
    assert_eq!(actions[2], WorkerAction::Terminate);
    assert_inert(&mut session, T0 + 600.0);
}

#[test]
fn failed_keeps_what_ended_and_the_workers_reason() {
    let mut session = running();
    session.on_message(progress(vec![result(0)]), T0 + 350.0);
    assert_eq!(
        session.on_message(
            Ok(FromMeasurement::Failed {
                progress: counters(0),
                finished: vec![result(1)],
                reason: "the warm-up failed: HTTP 500".to_owned(),
            }),
            T0 + 400.0,
        ),
        vec![
            WorkerAction::UpdateTally {
                finished: vec![result(1)],
                progress: counters(0),
            },
            WorkerAction::Finish(WorkerEnd::Failed("the warm-up failed: HTTP 500".to_owned())),
            WorkerAction::Terminate,
        ]
    );
    assert_inert(&mut session, T0 + 500.0);
}

#[test]
fn a_failure_to_load_before_ready_is_the_workers_reason() {
    // The bootstrap script reports a glue that would not load as `failed`, before any Ready.
    let mut session = WorkerSession::new(T0);
    let actions = session.on_message(
        Ok(FromMeasurement::Failed {
            progress: counters(0),
            finished: vec![],
            reason: "its code could not be loaded".to_owned(),
        }),
        T0 + 50.0,
    );
    assert_eq!(
        actions[1..],
        finish_and_terminate(WorkerEnd::Failed("its code could not be loaded".to_owned()))
    );
    assert_inert(&mut session, T0 + 60.0);
}

#[test]
fn an_unreadable_message_ends_the_run_before_or_after_ready() {
    let mut loading = WorkerSession::new(T0);
    assert_eq!(
        loading.on_message(Err("not text".to_owned()), T0 + 10.0),
        finish_and_terminate(WorkerEnd::UnreadableMessage("not text".to_owned()))
    );
    assert_inert(&mut loading, T0 + 20.0);

    let mut session = running();
    assert_eq!(
        session.on_message(Err("expected value at line 1".to_owned()), T0 + 300.0),
        finish_and_terminate(WorkerEnd::UnreadableMessage(
            "expected value at line 1".to_owned()
        ))
    );
    assert_inert(&mut session, T0 + 400.0);
}

#[test]
fn the_workers_error_event_ends_the_run_before_or_after_ready() {
    let mut loading = WorkerSession::new(T0);
    assert_eq!(
        loading.on_worker_error("its code could not be loaded".to_owned()),
        finish_and_terminate(WorkerEnd::WorkerFailed(
            "its code could not be loaded".to_owned()
        ))
    );
    assert_inert(&mut loading, T0 + 100.0);

    let mut session = running();
    session.on_message(progress(vec![result(0)]), T0 + 350.0);
    assert_eq!(
        session.on_worker_error("Uncaught RuntimeError: unreachable".to_owned()),
        finish_and_terminate(WorkerEnd::WorkerFailed(
            "Uncaught RuntimeError: unreachable".to_owned()
        ))
    );
    assert_inert(&mut session, T0 + 400.0);
}

#[test]
fn a_worker_never_ready_times_out_at_the_start_limit() {
    let mut session = WorkerSession::new(T0);
    assert_eq!(session.on_tick(T0 + WORKER_START_TIMEOUT_MS - 1.0), vec![]);
    assert_eq!(
        session.on_tick(T0 + WORKER_START_TIMEOUT_MS),
        finish_and_terminate(WorkerEnd::StartTimedOut { limit_s: 30.0 })
    );
    assert_inert(&mut session, T0 + WORKER_START_TIMEOUT_MS + 1.0);
}

#[test]
fn messages_before_ready_do_not_make_it_ready() {
    let mut session = WorkerSession::new(T0);
    assert_eq!(session.on_message(progress(vec![]), T0 + 29_000.0).len(), 1);
    // Heard from, yet never ready: the start timeout still ends it.
    assert_eq!(
        session.on_tick(T0 + WORKER_START_TIMEOUT_MS),
        finish_and_terminate(WorkerEnd::StartTimedOut { limit_s: 30.0 })
    );
}

#[test]
fn a_silent_worker_is_given_up_with_what_it_reported() {
    let mut session = running();
    session.on_message(progress(vec![result(0), result(1)]), T0 + 20_000.0);
    session.on_message(progress(vec![result(2)]), T0 + 25_000.0);
    // Silent from 25 s: still within the limit at 35 s.
    assert_eq!(session.on_tick(T0 + 35_000.0), vec![]);
    assert_eq!(
        session.on_tick(T0 + 35_001.0),
        finish_and_terminate(WorkerEnd::Silent {
            silence_s: 10.0,
            reported: 3,
        })
    );
    assert_inert(&mut session, T0 + 36_000.0);
}

#[test]
fn each_message_resets_the_silence_watchdog() {
    let mut session = running();
    let mut now = T0 + WORKER_START_TIMEOUT_MS;
    for _ in 0..10 {
        now += WORKER_SILENCE_LIMIT_MS - 1.0;
        session.on_message(progress(vec![]), now);
        assert_eq!(session.on_tick(now + WORKER_SILENCE_LIMIT_MS), vec![]);
    }
    assert!(!session.is_ended());
    assert_eq!(
        session.on_tick(now + WORKER_SILENCE_LIMIT_MS + 1.0),
        finish_and_terminate(WorkerEnd::Silent {
            silence_s: 10.0,
            reported: 0,
        })
    );
}

#[test]
fn silence_is_judged_only_after_the_start_grace_period() {
    // Ready at 0.1 s and then busy (planning a large run): not given up before 30 s.
    let mut session = running();
    assert_eq!(session.on_tick(T0 + 20_000.0), vec![]);
    assert_eq!(session.on_tick(T0 + WORKER_START_TIMEOUT_MS - 1.0), vec![]);
    assert_eq!(
        session.on_tick(T0 + WORKER_START_TIMEOUT_MS),
        finish_and_terminate(WorkerEnd::Silent {
            silence_s: 10.0,
            reported: 0,
        })
    );
}
