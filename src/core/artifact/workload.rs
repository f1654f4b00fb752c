//! The artifact's record of a workload run: the `workload` block from the plan, and each row's
//! and failure's place in the file (record, session, turn), never its text.

use crate::core::config::choices::ApiEndpoint;
use crate::core::plan::RunPlan;
use crate::core::schema::rows::{FailureRecord, RequestOrigin, RequestTiming};
use crate::core::schema::workload::{WorkloadBlock, WorkloadSending};

/// The `workload` block of a run of `plan`: `None` for synthetic prompts on the chat API.
pub fn workload_block(plan: &RunPlan) -> Option<WorkloadBlock> {
    let config = plan.config();
    let Some(workload) = plan.workload() else {
        return (config.endpoint != ApiEndpoint::Chat).then(|| WorkloadBlock {
            source: "synthetic".to_owned(),
            endpoint: config.endpoint,
            file: None,
            sending: None,
        });
    };
    let options = &config.workload;
    Some(WorkloadBlock {
        source: "file".to_owned(),
        endpoint: config.endpoint,
        file: Some(workload.file().clone()),
        sending: Some(WorkloadSending {
            turns: options.turns,
            order: options.order,
            seed: options.seed,
            output_lengths: options.output_lengths,
            history: options.history,
            think_time_ms: options.think_time_ms,
            session_header: options.session_header.clone(),
            trace_speed: workload.is_timed().then_some(options.trace_speed),
            sessions: workload.sessions().len() as u64,
            requests: workload.requests(),
            marker_lines: config.request_canaries,
        }),
    })
}

/// Request `index`'s place in the workload, if the run sent one.
pub fn origin_of(plan: &RunPlan, index: u64) -> Option<Box<RequestOrigin>> {
    let workload = plan.workload()?;
    let (session, turn) = workload.position(index)?;
    Some(Box::new(RequestOrigin {
        record: workload.sessions()[session].record,
        session: session as u64,
        turn: turn as u64,
    }))
}

/// Sets every row's and failure's `workload` from the plan (a failure's response row too).
pub fn set_origins(plan: &RunPlan, rows: &mut [RequestTiming], failures: &mut [FailureRecord]) {
    if plan.workload().is_none() {
        return;
    }
    for row in rows.iter_mut() {
        row.workload = origin_of(plan, row.request_index);
    }
    for failure in failures.iter_mut() {
        failure.workload = origin_of(plan, failure.request_index);
        if let Some(Some(row)) = failure.response_timing.as_mut() {
            row.workload = origin_of(plan, row.request_index);
        }
    }
}
