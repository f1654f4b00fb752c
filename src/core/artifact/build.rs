//! Building an artifact (ARTIFACT.md §1.3 step 5): from a plan, one outcome per planned request
//! and the caller's [`RunTiming`] to an [`ArtifactV1`]. Like the rest
//! of the core it never reads a clock: the caller supplies the run's timing.

use crate::core::artifact::load::load_block;
use crate::core::artifact::metrics::compute_metrics;
use crate::core::artifact::metrics::ResultTotals;
use crate::core::artifact::workload::{set_origins, workload_block};
use crate::core::config::settings::RunConfig;
use crate::core::observe::conclude::{CompletedRequest, RequestOutcome};
use crate::core::plan::RunPlan;
use crate::core::python::time::UtcSecond;
use crate::core::schema::browser_clock;
use crate::core::schema::check_finite;
use crate::core::schema::client::ClientBlock;
use crate::core::schema::error::ArtifactError;
use crate::core::schema::failure_floats;
use crate::core::schema::from_wire::FromWireBlock;
use crate::core::schema::generation::SCHEMA;
use crate::core::schema::row_floats;
use crate::core::schema::rows::{FailureRecord, RequestTiming};
use crate::core::schema::ArtifactV1;
use crate::core::schema::MeasurementProtocol;
use crate::core::schema::MetricPopulation;
use crate::core::schema::TimingMethodology;
use crate::core::schema::REFERENCE_CLOCK;
use crate::core::schema::TIMESTAMP_PRECISION;

/// When the run happened, as the caller measured it; the core never reads a clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunTiming {
    /// Wall-clock epoch ns read just before the first request (browser:
    /// `performance.timeOrigin + performance.now()`, in ns).
    pub started_at_unix_ns: i64,
    /// Wall-clock epoch ns read after the last request ended.
    pub finished_at_unix_ns: i64,
    /// Monotonic seconds from the run's start to its end (browser: the difference of two
    /// `performance.now()` readings, divided by 1000).
    pub wall_seconds: f64,
}

/// Assembles the artifact of a finished run.
///
/// `config` must be the settings `plan` was made from. `outcomes` must hold **exactly one**
/// outcome per planned request index, in any order: a run that was cancelled or cut short must
/// first turn every request it never started (or abandoned) into a failure record, e.g.
/// [`FailureRecord::request_error`] with `RequestError::cancelled()`. `timing` is what the
/// caller measured; `client` (strobe's measurement context) also sets
/// `timing_methodology.clock` to [`browser_clock`], and without it the reference string
/// [`REFERENCE_CLOCK`] is written.
///
/// Rows and failures are sorted by request index; only successful results feed `metrics`. The
/// ns/wall consistency that readers check (§9) is the caller's to keep: it is not enforced here,
/// because refusing to write a finished run's results would lose them.
pub fn build_artifact(
    config: &RunConfig,
    plan: &RunPlan,
    outcomes: Vec<RequestOutcome>,
    timing: RunTiming,
    client: Option<ClientBlock>,
) -> Result<ArtifactV1, ArtifactError> {
    if plan.config() != config {
        return Err(ArtifactError::ConfigDoesNotMatchPlan);
    }
    check_run_timing(&timing)?;
    let load = load_block(config, plan, &outcomes, timing.wall_seconds);
    let (mut results, mut failures) = sort_outcomes(plan, outcomes)?;
    results.sort_by_key(|result| result.request_index);
    failures.sort_by_key(|failure| failure.request_index);

    let requests = plan.requests();
    let completed = results.len() as u64;
    let failed = failures.len() as u64;
    let performance_eligible = completed == requests && failures.is_empty();
    let mut rows: Vec<RequestTiming> = results
        .iter()
        .filter_map(|result| result.row.clone())
        .collect();
    set_origins(plan, &mut rows, &mut failures);
    let totals = ResultTotals::of_results(&results)?;
    let metrics = compute_metrics(&rows, &totals, performance_eligible, timing.wall_seconds)?;
    let metric_population = MetricPopulation::from_metrics(requests, completed, failed, &metrics);
    let client = client.map(|client| ClientBlock {
        from_wire: Some(FromWireBlock::of_rows(&rows)),
        ..client
    });
    let clock = match &client {
        Some(client) => browser_clock(client.timer_resolution_ms, client.cross_origin_isolated)?,
        None => REFERENCE_CLOCK.to_owned(),
    };
    let responses_received = completed
        + failures
            .iter()
            .filter(|failure| failure.response_received)
            .count() as u64;
    let started = UtcSecond::from_unix_ns(timing.started_at_unix_ns);

    Ok(ArtifactV1 {
        schema: SCHEMA.to_owned(),
        measurement_protocol: MeasurementProtocol::for_reasoning_chunks(totals.reasoning_chunks),
        run_id: started.run_id(),
        started_at: started.iso_label(),
        finished_at: UtcSecond::from_unix_ns(timing.finished_at_unix_ns).iso_label(),
        started_at_unix_ns: timing.started_at_unix_ns,
        finished_at_unix_ns: timing.finished_at_unix_ns,
        timestamp_precision: TIMESTAMP_PRECISION.to_owned(),
        clock_domain_id: config.clock_domain_id.clone(),
        configuration_fingerprint: config.configuration_fingerprint.clone(),
        wall_clock_ms: timing.wall_seconds * 1000.0,
        base_url: config.base_url.clone(),
        model: config.model.clone(),
        engine: config.engine.clone(),
        gpu: config.gpu.clone(),
        tier: config.tier.clone(),
        manifest: None,
        source_recipe: None,
        requests,
        completed,
        failed,
        failures,
        responses_received,
        concurrency: plan.concurrency(),
        context_tokens: plan.context_tokens_field(),
        context_seed: plan.context_seed(),
        context_distribution: plan.context_distribution(),
        max_context_tokens: plan.max_context_tokens(),
        max_tokens: config.max_tokens,
        response_words: config.response_words,
        prompt_cache_mode: plan.prompt_cache_mode(),
        shared_prefix_tokens: plan.shared_prefix_tokens(),
        request_canaries: config.request_canaries,
        controlled_output_policy: config.controlled_output_policy,
        performance_eligible,
        metric_population,
        serve_flags: plan.serve_flags(),
        sampling: plan.sampling_block(),
        timing_methodology: TimingMethodology::with_clock(clock),
        request_timings: rows,
        metrics,
        client,
        load,
        sweep: None,
        repeat: None,
        server_metrics: None,
        prefix_cache_reset: None,
        slo: None,
        workload: workload_block(plan),
    })
}

fn check_run_timing(timing: &RunTiming) -> Result<(), ArtifactError> {
    check_finite(vec![("wall_seconds".to_owned(), timing.wall_seconds)])?;
    if timing.wall_seconds < 0.0 {
        return Err(ArtifactError::NegativeWallTime {
            wall_seconds: timing.wall_seconds,
        });
    }
    if timing.finished_at_unix_ns < timing.started_at_unix_ns {
        return Err(ArtifactError::FinishedBeforeStarted {
            started_at_unix_ns: timing.started_at_unix_ns,
            finished_at_unix_ns: timing.finished_at_unix_ns,
        });
    }
    Ok(())
}

/// Splits outcomes into results and failures, checking that they cover the plan exactly once
/// and agree with it.
fn sort_outcomes(
    plan: &RunPlan,
    outcomes: Vec<RequestOutcome>,
) -> Result<(Vec<CompletedRequest>, Vec<FailureRecord>), ArtifactError> {
    let planned = plan.planned_context_tokens();
    let mut seen = vec![false; planned.len()];
    let mut results = Vec::new();
    let mut failures = Vec::new();
    for outcome in outcomes {
        let request_index = match &outcome {
            RequestOutcome::Completed(result) => result.request_index,
            RequestOutcome::Failed(failure) => failure.request_index,
        };
        let slot = usize::try_from(request_index)
            .ok()
            .filter(|&slot| slot < planned.len())
            .ok_or(ArtifactError::OutcomeOutsidePlan {
                request_index,
                requests: plan.requests(),
            })?;
        if std::mem::replace(&mut seen[slot], true) {
            return Err(ArtifactError::DuplicateOutcome { request_index });
        }
        let planned_context = planned[slot];
        let check_planned = |recorded: u64| {
            if recorded == planned_context {
                Ok(())
            } else {
                Err(ArtifactError::PlannedContextMismatch {
                    request_index,
                    planned: planned_context,
                    recorded,
                })
            }
        };
        match outcome {
            RequestOutcome::Completed(result) => {
                if let Some(row) = &result.row {
                    if row.request_index != request_index {
                        return Err(ArtifactError::RowIndexMismatch {
                            request_index,
                            row_index: row.request_index,
                        });
                    }
                    check_planned(row.planned_context_tokens)?;
                    check_finite(row_floats(&format!("request {request_index}"), row))?;
                }
                results.push(result);
            }
            RequestOutcome::Failed(failure) => {
                if let Some(recorded) = failure.planned_context_tokens {
                    check_planned(recorded)?;
                }
                check_finite(failure_floats(
                    &format!("failure of request {request_index}"),
                    &failure,
                ))?;
                failures.push(failure);
            }
        }
    }
    let missing: Vec<u64> = seen
        .iter()
        .enumerate()
        .filter(|(_, seen)| !**seen)
        .map(|(slot, _)| slot as u64)
        .collect();
    if !missing.is_empty() {
        return Err(ArtifactError::MissingOutcomes {
            missing: missing.len(),
            first: missing.into_iter().take(5).collect(),
        });
    }
    Ok((results, failures))
}
