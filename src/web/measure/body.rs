//! What each request sends: its body, from its workload record or its synthetic prompt, built
//! ahead by [`prepare`](super::prepare) for every request it can hold, or when the request is
//! sent.

use crate::core::prompt::session::replies_known_ahead;
use crate::core::prompt::workload::workload_request_body;
use crate::core::prompt::{request_body, PromptSpec};

use crate::web::measure::live_run::RunSetup;

/// Request `index`'s body: its workload record's, or its synthetic prompt's. The error is the
/// request's failure (the reason its prompt or body cannot be built).
pub(super) fn planned_body(
    setup: &RunSetup,
    prompt_spec: &PromptSpec,
    index: u64,
) -> Result<String, String> {
    if setup.plan.workload().is_some() {
        // A session's later turns carry the server's replies: those are built when sent.
        let replies = replies_known_ahead(&setup.plan, index)
            .ok_or_else(|| format!("request {index} needs the replies of its session's turns"))?;
        return workload_request_body(&setup.plan, index, &replies)
            .map_err(|error| error.to_string());
    }
    let budget = setup.plan.prompt_budget_tokens(index as usize);
    prompt_spec
        .build(index as usize, budget)
        .map(|prompt| request_body(&setup.config, &prompt))
        .map_err(|error| error.to_string())
}

/// The body of a dry run's requests, which are never sent.
pub(super) const DRY_RUN_BODY: &str = "{}";
