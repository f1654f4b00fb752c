//! Records to an artifact: the files are checked to be one whole run of one plan (every worker
//! once, every request once), the plan is made again from its link (and, for a workload file,
//! from the workload's shape the workers copied from the plan: no prompt), each request's
//! reads go through [`StreamReading`] and [`conclude_request`] exactly as a page's reads do,
//! and the run's timeline is put on one clock (docs/operate/locust.md, *Clocks*).

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::core::artifact::build::{build_artifact, RunTiming};
use crate::core::config::form::RunForm;
use crate::core::config::settings::RunConfig;
use crate::core::format::{counted, format_duration_ms};
use crate::core::observe::accumulate::{StreamAccumulator, StreamResult};
use crate::core::observe::conclude::{conclude_request, RequestOutcome, RequestPlanFacts};
use crate::core::observe::dispatch::DispatchFacts;
use crate::core::observe::failure::{RequestError, ERROR_MESSAGE_MAX_CHARS};
use crate::core::observe::reading::StreamReading;
use crate::core::plan::workload::shape::WorkloadShape;
use crate::core::plan::workload::WorkloadRequests;
use crate::core::plan::RunPlan;
use crate::core::prompt::export::settings_plan;
use crate::core::python::json::python_float_repr;
use crate::core::read::opened::locust::records::{
    read_worker_file, RequestEnd, RequestRecord, WorkerFile,
};
use crate::core::read::opened::locust::LocustError;
use crate::core::schema::client::{ClientBlock, ClientSseCounts, ClientTransport};
use crate::core::schema::distributed::{
    DistributedBlock, WorkerProcess, LOCUST_ENGINE, MASTER_WALL_CLOCK, ONE_HOST_CLOCK,
};
use crate::core::schema::{ArtifactV1, TimingMethodology};
use crate::core::stream::sse::sanitize_excerpt;

/// Workers whose starts lie further apart than this did not run together: the files come from
/// different runs (the locustfile starts every worker at one agreed instant).
pub const MAX_START_SPREAD_NS: i64 = 60_000_000_000;

/// A clock offset uncertainty above this, in ms, gets a warning: request starts across hosts
/// are then placed less exactly than a page's run places them.
pub const OFFSET_UNCERTAINTY_WARNING_MS: f64 = 1.0;

/// Turns the records files of one run into its artifact, its `client` block naming Locust.
/// `files` are `(name, text)`, in any order; every worker's file must be among them.
pub fn import_records(files: &[(String, String)]) -> Result<ArtifactV1, LocustError> {
    let workers: Vec<WorkerFile> = files
        .iter()
        .map(|(name, text)| read_worker_file(name, text))
        .collect::<Result<_, _>>()?;
    let workers = one_run(workers)?;
    let plan = plan_of(&workers)?;
    let config = plan.config().clone();
    check_coverage(&workers, &plan, &config)?;
    let clock = RunClock::of(&workers);

    let mut outcomes = Vec::with_capacity(plan.requests() as usize);
    let mut last_end_ns = clock.run_start_ns;
    for (position, worker) in workers.iter().enumerate() {
        for record in &worker.requests {
            let end_ns = clock.on_run_clock(position, record.end_ns);
            last_end_ns = last_end_ns.max(end_ns);
            outcomes.push(conclude(
                &config,
                &plan,
                &clock,
                position,
                worker.header.started_ns,
                record,
            ));
        }
    }
    let wall_ns = last_end_ns - clock.run_start_ns;
    let timing = RunTiming {
        started_at_unix_ns: clock.unix_ns(clock.run_start_ns),
        finished_at_unix_ns: clock.unix_ns(last_end_ns),
        wall_seconds: wall_ns as f64 / 1e9,
    };
    let sse = ClientSseCounts::of_outcomes(&outcomes);
    let block = distributed_block(&workers, &clock);
    let resolution_ms = workers
        .iter()
        .filter_map(|worker| worker.header.clock_resolution_ns)
        .max()
        .map_or(1e-6, |ns| ns as f64 / 1e6);
    let client = locust_client(&block, &config, resolution_ms, sse);
    let mut artifact = build_artifact(&config, &plan, outcomes, timing, None)
        .map_err(|error| LocustError::of_run(format!("the artifact cannot be built: {error}")))?;
    // Built without a client block, the artifact says the reference clock; the methodology's
    // other strings stay the reference's (ARTIFACT.md §8.3).
    artifact.timing_methodology =
        TimingMethodology::with_clock(locust_clock(&block, resolution_ms));
    artifact.client = Some(client);
    Ok(artifact)
}

/// The plan the workers ran, made again: from its link, and for a workload file from the
/// shape every worker copied from the plan (the same in every file).
fn plan_of(workers: &[WorkerFile]) -> Result<RunPlan, LocustError> {
    let first = &workers[0];
    let at_header = |reason: String| LocustError::in_file(&first.name, Some(1), reason);
    let (form, _notices) = RunForm::from_query(&first.header.plan_link);
    let Some(shape) = &first.header.plan_workload else {
        let (config, plan) =
            settings_plan(&form).map_err(|error| at_header(format!("the plan's link: {error}")))?;
        if config.workload.url.is_some() {
            return Err(at_header(
                "the plan's link sends a workload file, but the records carry no \
                 plan_workload: run the plan with the locustfile strobe-artifact plan wrote \
                 beside it"
                    .to_owned(),
            ));
        }
        return Ok(plan);
    };
    if let Some(other) = workers
        .iter()
        .find(|worker| worker.header.plan_workload.as_ref() != Some(shape))
    {
        return Err(LocustError::of_run(format!(
            "{} and {} ran different plans (their plan_workload differ): import one run at a \
             time",
            first.name, other.name
        )));
    }
    let shape: WorkloadShape = serde_json::from_value(shape.clone())
        .map_err(|error| at_header(format!("plan_workload: {error}")))?;
    let requests = WorkloadRequests::from_shape(shape)
        .map_err(|reason| at_header(format!("plan_workload: {reason}")))?;
    let config = form.to_config().map_err(|errors| {
        let fields: Vec<String> = errors
            .iter()
            .map(|error| format!("{}: {}", error.field, error.message))
            .collect();
        at_header(format!("the plan's link: {}", fields.join("; ")))
    })?;
    RunPlan::for_run(&config, None, Some(Arc::new(requests)))
        .map_err(|error| at_header(format!("the plan's link and workload: {error}")))
}

/// What splits the plan across workers: a workload's session (its turns stay on one worker,
/// in order), else the request's index.
fn split_key(plan: &RunPlan, index: u64) -> u64 {
    plan.workload()
        .and_then(|workload| workload.position(index))
        .map_or(index, |(session, _)| session as u64)
}

/// `timing_methodology.clock` of an imported run.
fn locust_clock(block: &DistributedBlock, resolution_ms: f64) -> String {
    format!(
        "client time.perf_counter_ns per Locust worker; resolution {} ms; timeline on {}",
        python_float_repr(resolution_ms).unwrap_or_else(|_| "unknown".to_owned()),
        block.clock_domain
    )
}

/// The `client` block of an imported run: the engine that sent it, in place of the browser.
fn locust_client(
    block: &DistributedBlock,
    config: &RunConfig,
    resolution_ms: f64,
    sse: ClientSseCounts,
) -> ClientBlock {
    let engine_version = block
        .engine_version
        .clone()
        .unwrap_or_else(|| "unknown".to_owned());
    let mut client = ClientBlock::strobe(
        format!(
            "Locust {engine_version} workers, Python {}; records read by {}",
            block.python_version.as_deref().unwrap_or("unknown"),
            block.imported_by
        ),
        false,
        resolution_ms,
        // Python's http.client speaks HTTP/1.1 only, one request per connection at a time.
        ClientTransport {
            http_protocols_seen: vec!["http/1.1".to_owned()],
            connection_limit_suspected: false,
            endpoints: Some(config.endpoints().len() as u64),
            max_in_flight_per_origin: None,
        },
        sse,
    );
    client.name = LOCUST_ENGINE.to_owned();
    client.version = engine_version;
    client.distributed = Some(block.clone());
    client
}

/// Checks that the files are one run: one plan, one worker count, every worker exactly once,
/// starts close together. Returns them by worker index.
fn one_run(mut workers: Vec<WorkerFile>) -> Result<Vec<WorkerFile>, LocustError> {
    let Some(first) = workers.first() else {
        return Err(LocustError::of_run(
            "no records files: pass every worker-*.jsonl the run's workers wrote",
        ));
    };
    let (link, count, first_name) = (
        first.header.plan_link.clone(),
        first.header.workers,
        first.name.clone(),
    );
    for worker in &workers {
        if worker.header.plan_link != link {
            return Err(LocustError::of_run(format!(
                "{} and {} ran different plans (their plan links differ): import one run at a time",
                first_name, worker.name
            )));
        }
        if worker.header.workers != count {
            return Err(LocustError::of_run(format!(
                "{} says the run had {} workers and {} says {}: the files come from different runs",
                first_name, count, worker.name, worker.header.workers
            )));
        }
    }
    workers.sort_by_key(|worker| worker.header.worker);
    for pair in workers.windows(2) {
        if pair[0].header.worker == pair[1].header.worker {
            return Err(LocustError::of_run(format!(
                "{} and {} are both worker {}: a folder of records holds one run; keep only the \
                 files of the run to import (a fresh master numbers its workers from 0)",
                pair[0].name, pair[1].name, pair[0].header.worker
            )));
        }
    }
    let present: BTreeSet<u64> = workers.iter().map(|worker| worker.header.worker).collect();
    // At most ten named: a hostile header's count must not make this a long loop.
    let missing: Vec<String> = (0..count)
        .filter(|worker| !present.contains(worker))
        .take(10)
        .map(|worker| worker.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(LocustError::of_run(format!(
            "the run had {count} workers but no file of worker {} is here: pass every \
             worker-*.jsonl of the run (each worker process writes one when it finishes; a \
             worker that crashed wrote none, so run the plan again)",
            missing.join(", ")
        )));
    }
    let starts = workers.iter().map(|worker| worker.header.started_wall_ns);
    let (earliest, latest) = starts.fold((i64::MAX, i64::MIN), |(low, high), start| {
        (low.min(start), high.max(start))
    });
    if latest.saturating_sub(earliest) > MAX_START_SPREAD_NS {
        return Err(LocustError::of_run(format!(
            "the workers' starts lie {:.0} s apart: the files come from different runs of the \
             same plan; import the files of one run",
            (latest - earliest) as f64 / 1e9
        )));
    }
    Ok(workers)
}

/// Every planned request was sent exactly once, by the worker the split gives it, to one of the
/// plan's endpoints.
fn check_coverage(
    workers: &[WorkerFile],
    plan: &RunPlan,
    config: &RunConfig,
) -> Result<(), LocustError> {
    let requests = plan.requests();
    let endpoints = config.request_urls();
    let mut seen = vec![false; requests as usize];
    for worker in workers {
        let count = worker.header.workers;
        for record in &worker.requests {
            let line = || format!("request {}", record.index);
            if record.index >= requests {
                return Err(LocustError::in_file(
                    &worker.name,
                    None,
                    format!("{}: the plan has only {requests} requests", line()),
                ));
            }
            let owner = split_key(plan, record.index) % count;
            if owner != worker.header.worker {
                return Err(LocustError::in_file(
                    &worker.name,
                    None,
                    format!(
                        "{} belongs to worker {owner} of {count}, not to worker {}: the file was \
                         not written by the shipped locustfile",
                        line(),
                        worker.header.worker
                    ),
                ));
            }
            if std::mem::replace(&mut seen[record.index as usize], true) {
                return Err(LocustError::in_file(
                    &worker.name,
                    None,
                    format!("{} appears twice", line()),
                ));
            }
            if !endpoints.contains(&record.endpoint) {
                return Err(LocustError::in_file(
                    &worker.name,
                    None,
                    format!(
                        "{} went to {}, which is not one of the plan's endpoints",
                        line(),
                        sanitize_excerpt(&record.endpoint, 200)
                    ),
                ));
            }
        }
    }
    let unsent: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, sent)| !**sent)
        .map(|(index, _)| index.to_string())
        .take(10)
        .collect();
    if !unsent.is_empty() {
        return Err(LocustError::of_run(format!(
            "the plan's request {} has no record: the files do not hold the whole run",
            unsent.join(", ")
        )));
    }
    Ok(())
}

/// The run's clock: every worker's monotonic stamps placed on one timeline, in ns. The sums are
/// taken in `i128`, so no file's values can overflow them.
struct RunClock {
    /// Whether every worker ran on one host (their monotonic clocks are one clock).
    one_host: bool,
    /// Per worker (by position): what to add to its monotonic stamp to get the run clock.
    shift_ns: Vec<i128>,
    /// The run clock's reading at the earliest worker start.
    run_start_ns: i128,
    /// The run clock's reading minus the Unix time, in ns.
    run_minus_unix_ns: i128,
}

impl RunClock {
    fn of(workers: &[WorkerFile]) -> Self {
        let one_host = workers
            .windows(2)
            .all(|pair| pair[0].header.host == pair[1].header.host);
        // On one host the monotonic clock is shared: the run clock is it, and the Unix time
        // comes from the first worker's pair of readings. On several, each worker's stamps go
        // to the master's wall clock: its own wall reading, corrected by its offset.
        let shift_ns: Vec<i128> = workers
            .iter()
            .map(|worker| {
                let header = &worker.header;
                if one_host {
                    0
                } else {
                    let offset = header.clock.map_or(0, |clock| clock.offset_to_master_ns);
                    i128::from(header.started_wall_ns) + i128::from(offset)
                        - i128::from(header.started_ns)
                }
            })
            .collect();
        let run_start_ns = workers
            .iter()
            .zip(&shift_ns)
            .map(|(worker, shift)| i128::from(worker.header.started_ns) + shift)
            .min()
            .unwrap_or_default();
        let run_minus_unix_ns = if one_host {
            let header = &workers[0].header;
            i128::from(header.started_ns) - i128::from(header.started_wall_ns)
        } else {
            0
        };
        Self {
            one_host,
            shift_ns,
            run_start_ns,
            run_minus_unix_ns,
        }
    }

    fn on_run_clock(&self, worker: usize, stamp_ns: i64) -> i128 {
        i128::from(stamp_ns) + self.shift_ns[worker]
    }

    /// A stamp of `worker` in ms after the run's start.
    fn ms(&self, worker: usize, stamp_ns: i64) -> f64 {
        (self.on_run_clock(worker, stamp_ns) - self.run_start_ns) as f64 / 1e6
    }

    /// The Unix time of a run-clock reading, in ns (clamped to what an artifact holds).
    fn unix_ns(&self, run_ns: i128) -> i64 {
        let unix = run_ns - self.run_minus_unix_ns;
        i64::try_from(unix).unwrap_or(if unix < 0 { i64::MIN } else { i64::MAX })
    }
}

/// One record's outcome, by the page's own path.
fn conclude(
    config: &RunConfig,
    plan: &RunPlan,
    clock: &RunClock,
    worker: usize,
    worker_started_ns: i64,
    record: &RequestRecord,
) -> RequestOutcome {
    let index = record.index;
    let facts = RequestPlanFacts {
        request_index: index,
        planned_context_tokens: plan.planned_context_tokens()[index as usize],
        expected_marker: config.request_canaries.then(|| plan.marker(index as usize)),
        response_words: config.response_words,
        policy: config.controlled_output_policy,
        run_started_ms: 0.0,
    };
    let start_ms = clock.ms(worker, record.start_ns);
    let end_ms = clock.ms(worker, record.end_ns);
    let result = match &record.end {
        RequestEnd::Error {
            error_type,
            message,
        } => Err(RequestError::new(
            error_type.as_str(),
            sanitize_excerpt(message, ERROR_MESSAGE_MAX_CHARS),
        )),
        RequestEnd::Response { status, .. } if !(200..300).contains(status) => Err(
            RequestError::http_status(*status, "", &body_text(record), &[]),
        ),
        RequestEnd::Response {
            content_type: Some(kind),
            ..
        } if kind.starts_with("application/json") => {
            Err(RequestError::json_instead_of_stream(&body_text(record)))
        }
        RequestEnd::Response { .. } => read_stream(config, clock, worker, record, start_ms, end_ms),
    };
    let mut outcome = conclude_request(&facts, start_ms, result, end_ms);
    if let (Some(arrival_ms), Some(_)) = (record.scheduled_ms, plan.arrival_times_ms()) {
        // The arrival is relative to the worker's own start, which the run clock places.
        let worker_start_ms = clock.ms(worker, worker_started_ns);
        let woke_ms = record
            .woke_ns
            .map_or(start_ms, |woke| clock.ms(worker, woke));
        outcome.set_dispatch(&DispatchFacts {
            scheduled_ms: worker_start_ms + arrival_ms,
            sent_ms: start_ms,
            cap_wait_ms: (start_ms - woke_ms).max(0.0),
        });
    }
    outcome
}

/// The reads of a streamed response, through the core's reader, stamped on the run clock.
fn read_stream(
    config: &RunConfig,
    clock: &RunClock,
    worker: usize,
    record: &RequestRecord,
    start_ms: f64,
    end_ms: f64,
) -> Result<StreamResult, RequestError> {
    let mut accumulator = StreamAccumulator::new(start_ms);
    if config.client.chunk_traces {
        accumulator = accumulator.with_chunk_arrivals();
    }
    let mut reading = StreamReading::new(accumulator);
    let stopped = record
        .reads
        .iter()
        .any(|read| reading.on_bytes(&read.bytes, clock.ms(worker, read.at_ns)));
    if !stopped {
        reading.on_body_end(end_ms);
    }
    reading.finish()
}

/// A response's whole body as text (invalid UTF-8 replaced), for an error's excerpt.
fn body_text(record: &RequestRecord) -> String {
    let body: Vec<u8> = record
        .reads
        .iter()
        .flat_map(|read| read.bytes.iter().copied())
        .collect();
    String::from_utf8_lossy(&body).into_owned()
}

fn distributed_block(workers: &[WorkerFile], clock: &RunClock) -> DistributedBlock {
    let first = &workers[0].header;
    let hosts: BTreeSet<String> = workers
        .iter()
        .map(|worker| worker.header.host.clone())
        .collect();
    let processes: Vec<WorkerProcess> = workers
        .iter()
        .enumerate()
        .map(|(position, worker)| {
            let header = &worker.header;
            WorkerProcess {
                worker: header.worker,
                host: header.host.clone(),
                pid: header.pid,
                requests: header.requests,
                started_ms: clock.ms(position, header.started_ns),
                offset_to_master_ms: header
                    .clock
                    .map(|sync| sync.offset_to_master_ns as f64 / 1e6),
                sync_round_trip_ms: header.clock.map(|sync| sync.round_trip_ns as f64 / 1e6),
            }
        })
        .collect();
    let uncertainty_ms = processes
        .iter()
        .filter_map(|process| process.sync_round_trip_ms)
        .map(|round_trip| round_trip / 2.0)
        .reduce(f64::max);
    let estimate_ms = if clock.one_host {
        // One clock: what is left to disagree is each worker's reading of its wall clock
        // against its monotonic one, at its start.
        let gaps = workers.iter().map(|worker| {
            i128::from(worker.header.started_wall_ns) - i128::from(worker.header.started_ns)
        });
        let (low, high) = gaps.fold((i128::MAX, i128::MIN), |(low, high), gap| {
            (low.min(gap), high.max(gap))
        });
        Some((high - low) as f64 / 1e6)
    } else {
        processes
            .iter()
            .filter_map(|process| process.offset_to_master_ms)
            .map(f64::abs)
            .reduce(f64::max)
    };
    let mut warnings = Vec::new();
    if !clock.one_host {
        let measured = processes
            .iter()
            .filter(|process| process.offset_to_master_ms.is_some())
            .count();
        if measured < processes.len() {
            warnings.push(format!(
                "{} of {} workers measured no clock offset to the master: their request starts \
                 are placed by their own wall clocks, which may disagree by milliseconds or \
                 more. Each request's TTFT, TPOT and E2E are unaffected.",
                processes.len() - measured,
                processes.len()
            ));
        }
        if let Some(uncertainty) = uncertainty_ms.filter(|ms| *ms > OFFSET_UNCERTAINTY_WARNING_MS) {
            warnings.push(format!(
                "The workers ran on {} hosts and their clock offsets are known to ±{} only \
                 (half the best ping's round trip to the master): request starts across hosts, \
                 the timeline and the run's wall time carry that error. Each request's TTFT, TPOT \
                 and E2E are unaffected.",
                hosts.len(),
                format_duration_ms(uncertainty)
            ));
        }
    }
    if let Some(other) = workers
        .iter()
        .find(|worker| worker.header.plan_strobe_version != first.plan_strobe_version)
    {
        warnings.push(format!(
            "{} ran a plan of strobe {} and {} one of strobe {}",
            workers[0].name,
            first
                .plan_strobe_version
                .as_deref()
                .unwrap_or("(not recorded)"),
            other.name,
            other
                .header
                .plan_strobe_version
                .as_deref()
                .unwrap_or("(not recorded)")
        ));
    }
    let retried = workers
        .iter()
        .flat_map(|worker| &worker.requests)
        .filter(|record| record.retried.is_some())
        .count() as u64;
    if retried > 0 {
        warnings.push(format!(
            "{} sent again on a fresh connection because the server had closed the kept-alive \
             one while it sat idle (as a browser does); their times count from the first attempt.",
            counted(retried, "request was", "requests were")
        ));
    }
    let this_version = env!("CARGO_PKG_VERSION");
    if let Some(version) = first
        .plan_strobe_version
        .as_deref()
        .filter(|version| *version != this_version)
    {
        warnings.push(format!(
            "The plan was written by strobe {version} and imported by strobe {this_version}: \
             the prompts were rebuilt from the plan's link by this version; if the two build \
             prompts differently, planned contexts and canaries may not match what was sent."
        ));
    }
    DistributedBlock {
        engine: LOCUST_ENGINE.to_owned(),
        engine_version: first.locust_version.clone(),
        python_version: first.python_version.clone(),
        plan_strobe_version: first.plan_strobe_version.clone(),
        imported_by: format!("strobe {this_version}"),
        workers: workers.len() as u64,
        hosts: hosts.into_iter().collect(),
        clock_domain: if clock.one_host {
            ONE_HOST_CLOCK
        } else {
            MASTER_WALL_CLOCK
        }
        .to_owned(),
        clock_offset_estimate_ms: estimate_ms,
        clock_offset_uncertainty_ms: uncertainty_ms,
        processes,
        retried_requests: retried,
        warnings,
    }
}
