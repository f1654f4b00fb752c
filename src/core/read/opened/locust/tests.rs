use base64::Engine;
use serde_json::{json, Value};

use crate::core::config::form::RunForm;
use crate::core::plan::RunPlan;
use crate::core::read::opened::locust::import::import_records;
use crate::core::read::opened::locust::records::{looks_like_records, read_worker_file};
use crate::core::read::validate::report::Verdict;
use crate::core::read::validate::validate_artifact_text;
use crate::core::schema::distributed::{MASTER_WALL_CLOCK, ONE_HOST_CLOCK};
use crate::core::stream::sse::sample_stream_events;

const BASE: &str = "http://127.0.0.1:9/v1";

fn link(extra: &str) -> String {
    let (form, _) = RunForm::from_query(&format!(
        "base_url={BASE}&model=m&engine=vllm&requests=4&concurrency=2&context_tokens=64&max_tokens=16\
         &request_canaries=true{extra}"
    ));
    form.to_query()
}

fn markers(link: &str) -> Vec<String> {
    let config = RunForm::from_query(link).0.to_config().expect("valid");
    let plan = RunPlan::new(&config, None).expect("plan");
    (0..plan.requests() as usize)
        .map(|index| plan.marker(index))
        .collect()
}

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text.as_bytes())
}

/// A record of request `index` sent at `start_ns` whose events arrive one per read, 1 ms apart
/// from `first_ns`.
fn record(index: u64, marker: &str, start_ns: i64, first_ns: i64) -> Value {
    let events = sample_stream_events(0, &[marker.to_owned(), " hello".to_owned()]);
    let reads: Vec<Value> = events
        .iter()
        .enumerate()
        .map(|(read, event)| json!([first_ns + read as i64 * 1_000_000, b64(event)]))
        .collect();
    let end_ns = first_ns + events.len() as i64 * 1_000_000;
    json!({
        "index": index,
        "endpoint": format!("{BASE}/chat/completions"),
        "start_ns": start_ns,
        "start_wall_ns": 0,
        "status": 200,
        "content_type": "text/event-stream",
        "reads": reads,
        "end_ns": end_ns,
        "slot": index % 2,
    })
}

struct Worker {
    worker: u64,
    host: &'static str,
    started_ns: i64,
    started_wall_ns: i64,
    clock: Value,
    records: Vec<Value>,
}

fn file_text(link: &str, workers: u64, worker: &Worker) -> String {
    let header = json!({
        "kind": "strobe-locust-worker",
        "plan_link": link,
        "plan_strobe_version": env!("CARGO_PKG_VERSION"),
        "worker": worker.worker,
        "workers": workers,
        "host": worker.host,
        "pid": 100 + worker.worker,
        "started_ns": worker.started_ns,
        "started_wall_ns": worker.started_wall_ns,
        "requests": worker.records.len(),
        "locust_version": "2.47.0",
        "python_version": "3.13.5",
        "clock": worker.clock,
    });
    let mut text = header.to_string() + "\n";
    for record in &worker.records {
        text += &(record.to_string() + "\n");
    }
    text
}

fn files(link: &str, workers: &[Worker]) -> Vec<(String, String)> {
    workers
        .iter()
        .map(|worker| {
            (
                format!("worker-{}.jsonl", worker.worker),
                file_text(link, workers.len() as u64, worker),
            )
        })
        .collect()
}

const WALL: i64 = 1_764_633_600_000_000_000;

/// Two workers on one host: worker 0 sends 0 and 2, worker 1 sends 1 and 3.
fn one_host_run(link: &str) -> Vec<Worker> {
    let marks = markers(link);
    vec![
        Worker {
            worker: 0,
            host: "loadgen",
            started_ns: 1_000_000_000,
            started_wall_ns: WALL,
            clock: json!({"offset_to_master_ns": 2_000, "round_trip_ns": 300_000, "pings": 16}),
            records: vec![
                record(0, &marks[0], 1_000_100_000, 1_020_000_000),
                record(2, &marks[2], 1_100_000_000, 1_130_000_000),
            ],
        },
        Worker {
            worker: 1,
            host: "loadgen",
            started_ns: 1_000_050_000,
            // 40 µs more between its wall and monotonic readings than worker 0's.
            started_wall_ns: WALL + 90_000,
            clock: json!({"offset_to_master_ns": -1_000, "round_trip_ns": 250_000, "pings": 16}),
            records: vec![
                record(1, &marks[1], 1_000_200_000, 1_025_000_000),
                record(3, &marks[3], 1_101_000_000, 1_141_000_000),
            ],
        },
    ]
}

#[test]
fn records_of_workers_on_one_host_become_a_valid_artifact_on_their_shared_clock() {
    let link = link("");
    let artifact = import_records(&files(&link, &one_host_run(&link))).expect("imports");
    let text = artifact.to_json_text().expect("writes");
    let report = validate_artifact_text(&text);
    assert_eq!(report.verdict, Verdict::Valid, "{:?}", report.violations);
    assert_eq!(artifact.completed, 4);
    assert!(artifact.performance_eligible);
    assert_eq!(
        artifact.timing_methodology.clock,
        "client time.perf_counter_ns per Locust worker; resolution 1e-06 ms; timeline on one \
         host's monotonic clock (time.perf_counter_ns)"
    );
    let rows = &artifact.request_timings;
    // TTFO is the read that carried the canary's first content, on the sender's own clock:
    // request 0 sent at 1.0001 s, role chunk at 1.020 s, content at 1.021 s.
    assert_eq!(rows[0].ttft_ms, 20.9);
    assert_eq!(rows[1].ttft_ms, 25.8);
    // Starts are on the one monotonic clock, from the earliest worker start.
    assert_eq!(rows[0].started_at_ms, Some(0.1));
    assert_eq!(rows[1].started_at_ms, Some(0.2));
    assert_eq!(rows[3].started_at_ms, Some(101.0));
    assert_eq!(artifact.started_at_unix_ns, WALL);
    assert!(rows
        .iter()
        .all(|row| row.request_canary.as_ref().is_some_and(|c| c.passed)));
    let client = artifact.client.expect("a client block");
    assert_eq!(
        (client.name.as_str(), client.version.as_str()),
        ("locust", "2.47.0")
    );
    assert!(client.from_wire.is_none(), "no browser queue to take out");
    let block = client.distributed.expect("its distributed block");
    assert_eq!(block.engine, "locust");
    assert_eq!(block.engine_version.as_deref(), Some("2.47.0"));
    assert_eq!(block.workers, 2);
    assert_eq!(block.hosts, vec!["loadgen".to_owned()]);
    assert_eq!(block.clock_domain, ONE_HOST_CLOCK);
    assert_eq!(block.clock_offset_estimate_ms, Some(0.04));
    assert_eq!(block.clock_offset_uncertainty_ms, Some(0.15));
    assert_eq!(block.processes[1].started_ms, 0.05);
    // Role, two content chunks, finish, usage and [DONE], one per read.
    assert_eq!((client.sse.events, client.sse.reads), (4 * 6, 4 * 6));
    assert_eq!(client.sse.events_sharing_a_read, 0);
    assert!(block.warnings.is_empty(), "{:?}", block.warnings);
}

#[test]
fn workers_on_several_hosts_are_placed_on_the_masters_clock_by_their_offsets() {
    let link = link("");
    let mut run = one_host_run(&link);
    // Worker 1 on another host: its monotonic clock starts elsewhere, and its wall clock is
    // 3 ms behind the master's; known to ±2.5 ms.
    run[1].host = "loadgen-b";
    run[1].started_ns = 9_000_000_000;
    run[1].started_wall_ns = WALL - 3_000_000 + 50_000;
    run[1].clock =
        json!({"offset_to_master_ns": 3_000_000, "round_trip_ns": 5_000_000, "pings": 16});
    let marks = markers(&link);
    run[1].records = vec![
        record(1, &marks[1], 9_000_200_000, 9_025_000_000),
        record(3, &marks[3], 9_101_000_000, 9_141_000_000),
    ];
    run[0].clock = json!({"offset_to_master_ns": 0, "round_trip_ns": 200_000, "pings": 16});
    let artifact = import_records(&files(&link, &run)).expect("imports");
    let rows = &artifact.request_timings;
    assert_eq!(
        rows[1].ttft_ms, 25.8,
        "durations stay on the sender's clock"
    );
    assert_eq!(rows[1].started_at_ms, Some(0.25));
    assert_eq!(rows[3].started_at_ms, Some(101.05));
    let block = artifact
        .client
        .and_then(|client| client.distributed)
        .expect("block");
    assert_eq!(block.clock_domain, MASTER_WALL_CLOCK);
    assert_eq!(block.hosts.len(), 2);
    assert_eq!(block.clock_offset_estimate_ms, Some(3.0));
    assert_eq!(block.clock_offset_uncertainty_ms, Some(2.5));
    assert_eq!(block.warnings.len(), 1, "{:?}", block.warnings);
    assert!(
        block.warnings[0].contains("±2.5 ms"),
        "{}",
        block.warnings[0]
    );
}

#[test]
fn failed_requests_keep_their_reasons_and_the_rest_still_counts() {
    let link = link("");
    let mut run = one_host_run(&link);
    run[0].records[1] = json!({
        "index": 2, "endpoint": format!("{BASE}/chat/completions"), "start_ns": 1_100_000_000,
        "start_wall_ns": 0, "status": 503, "content_type": "application/json",
        "reads": [[1_101_000_000, b64("{\"error\":\"overloaded\"}")]], "end_ns": 1_101_000_000,
    });
    run[1].records[1] = json!({
        "index": 3, "endpoint": format!("{BASE}/chat/completions"), "start_ns": 1_101_000_000,
        "start_wall_ns": 0, "reads": [], "end_ns": 1_102_000_000,
        "error": "ConnectionResetError: [Errno 104] Connection reset by peer",
    });
    let artifact = import_records(&files(&link, &run)).expect("imports");
    assert_eq!((artifact.completed, artifact.failed), (2, 2));
    let reasons: Vec<(&str, &str)> = artifact
        .failures
        .iter()
        .map(|failure| (failure.error_type.as_str(), failure.error_message.as_str()))
        .collect();
    assert_eq!(reasons[0].0, "HttpError");
    assert!(
        reasons[0].1.contains("503") && reasons[0].1.contains("overloaded"),
        "{reasons:?}"
    );
    assert_eq!(
        reasons[1],
        (
            "ConnectionResetError",
            "[Errno 104] Connection reset by peer"
        )
    );
    let report = validate_artifact_text(&artifact.to_json_text().expect("writes"));
    assert_eq!(report.verdict, Verdict::Valid, "{:?}", report.violations);
}

#[test]
fn a_wrong_answer_fails_its_canary() {
    let link = link("");
    let mut run = one_host_run(&link);
    run[0].records[0] = record(0, "ANVIL_REQ_0_99999", 1_000_100_000, 1_020_000_000);
    let artifact = import_records(&files(&link, &run)).expect("imports");
    assert_eq!(artifact.failed, 1);
    assert_eq!(
        artifact.failures[0].failure_class,
        crate::core::schema::rows::FailureClass::RequestCanaryFailed
    );
}

#[test]
fn a_rate_loads_requests_carry_their_schedule_from_their_workers_start() {
    let link = link("&load=rate&rate=10&arrivals=constant");
    let mut run = one_host_run(&link);
    let config = RunForm::from_query(&link).0.to_config().expect("valid");
    let plan = RunPlan::new(&config, None).expect("plan");
    let arrivals = plan.arrival_times_ms().expect("a rate plan").to_vec();
    for worker in &mut run {
        for record in &mut worker.records {
            let index = record["index"].as_u64().unwrap() as usize;
            record["scheduled_ms"] = json!(arrivals[index]);
            record["woke_ns"] = json!(record["start_ns"].as_i64().unwrap() - 500_000);
        }
    }
    let artifact = import_records(&files(&link, &run)).expect("imports");
    let row = &artifact.request_timings[1];
    // Worker 1 started 0.05 ms after the run; request 1 was due at arrivals[1] after that.
    assert_eq!(row.scheduled_ms, Some(0.05 + arrivals[1]));
    assert_eq!(row.cap_wait_ms, Some(0.5));
    assert!(artifact.load.is_some(), "an open loop has its load block");
}

#[test]
fn files_that_are_not_one_whole_run_are_refused_with_what_to_do() {
    let link = link("");
    let all = files(&link, &one_host_run(&link));
    let error = import_records(&all[..1]).expect_err("a worker is missing");
    assert!(error.to_string().contains("no file of worker 1"), "{error}");

    let twice = vec![all[0].clone(), all[0].clone(), all[1].clone()];
    let error = import_records(&twice).expect_err("a worker twice");
    assert!(error.to_string().contains("both worker 0"), "{error}");

    let other = link.replace("requests=4", "requests=6");
    let mut mixed = all.clone();
    mixed[1].1 = mixed[1].1.replace(&link, &other);
    let error = import_records(&mixed).expect_err("two plans");
    assert!(error.to_string().contains("different plans"), "{error}");

    let mut run = one_host_run(&link);
    run[1].started_wall_ns += 3_600_000_000_000;
    let error = import_records(&files(&link, &run)).expect_err("an hour apart");
    assert!(error.to_string().contains("different runs"), "{error}");

    let mut run = one_host_run(&link);
    let moved = run[1].records.remove(0);
    run[0].records.push(moved);
    let error = import_records(&files(&link, &run)).expect_err("request 1 in worker 0");
    assert!(error.to_string().contains("belongs to worker 1"), "{error}");

    let mut run = one_host_run(&link);
    run[0].records[1]["endpoint"] = json!("http://elsewhere/v1/chat/completions");
    let error = import_records(&files(&link, &run)).expect_err("another endpoint");
    assert!(
        error
            .to_string()
            .contains("not one of the plan's endpoints"),
        "{error}"
    );
}

#[test]
fn a_broken_line_names_its_file_line_and_field() {
    let link = link("");
    let good = files(&link, &one_host_run(&link)).remove(0).1;
    let lines: Vec<&str> = good.lines().collect();
    let check = |text: String, expected: &str| {
        let error = read_worker_file("w.jsonl", &text).expect_err("broken");
        assert!(
            error.to_string().contains(expected),
            "{error} (expected {expected})"
        );
    };
    check(format!("{}\n{}\n", lines[0], lines[1]), "holds 1");
    check(
        format!(
            "{}\n{}\n{}\n",
            lines[0],
            lines[1].replace("\"end_ns\"", "\"ended\""),
            lines[2]
        ),
        "w.jsonl, line 2: missing field `end_ns`",
    );
    let mut record: Value = serde_json::from_str(lines[2]).unwrap();
    record["reads"][0][1] = json!("not base64!");
    check(
        format!("{}\n{}\n{record}\n", lines[0], lines[1]),
        "line 3: request 2: read 0 is not base64",
    );
    let mut record: Value = serde_json::from_str(lines[2]).unwrap();
    record["reads"][1][0] = json!(1);
    check(
        format!("{}\n{}\n{record}\n", lines[0], lines[1]),
        "stamped before",
    );
    let mut record: Value = serde_json::from_str(lines[2]).unwrap();
    record.as_object_mut().unwrap().remove("status");
    check(
        format!("{}\n{}\n{record}\n", lines[0], lines[1]),
        "neither a status nor an error",
    );
    check(String::new(), "empty");
    check(
        lines[0].replace("\"worker\":0", "\"worker\":5"),
        "worker 5 of 2",
    );
    assert!(looks_like_records(&good));
    assert!(!looks_like_records("{\"kind\": \"something else\"}\n"));
    assert!(!looks_like_records("strobe-locust-worker"));
}

#[test]
fn records_dropped_together_on_the_page_are_one_run_with_its_notes() {
    use crate::core::read::bundle::open_dropped_batch;
    let link = link("");
    let dropped: Vec<(String, Vec<u8>)> = files(&link, &one_host_run(&link))
        .into_iter()
        .map(|(name, text)| (name, text.into_bytes()))
        .chain([(
            "reference.json".to_owned(),
            include_bytes!("../../../../../tests/fixtures/reference-artifact.json").to_vec(),
        )])
        .collect();
    let opened = open_dropped_batch(&dropped);
    assert_eq!(
        opened.len(),
        2,
        "the records are one run, the artifact another"
    );
    let run = &opened[0];
    assert_eq!(run.verdict_label(), "valid (sent by Locust 2.47.0)");
    assert!(
        run.file_name
            .as_str()
            .ends_with("(from worker-0.jsonl and 1 more)"),
        "{}",
        run.file_name
    );
    assert_eq!(run.rows.len(), 4);
    let notes = run.distributed.as_ref().expect("its block").notes();
    assert_eq!(
        notes[0],
        "Sent by Locust 2.47.0 (Python 3.13.5) from 2 worker processes on 1 host (loadgen), from \
         strobe's plan; each request's TTFO, TTFT, TPOT and E2E are read on its worker's own \
         monotonic clock."
    );
    assert_eq!(
        notes[1],
        "The timeline is on one host's monotonic clock (time.perf_counter_ns); the workers' \
         clocks differ by up to 40 µs (known to ±150 µs)."
    );

    let alone = open_dropped_batch(&dropped[..1]);
    assert_eq!(alone.len(), 1);
    let status = alone[0].status_line();
    assert!(
        status.starts_with("Not read: ") && status.contains("no file of worker 1"),
        "{status}"
    );
}

#[test]
fn hostile_counts_and_clock_readings_end_in_messages_not_in_overflows_or_long_loops() {
    let link = link("");
    let mut run = one_host_run(&link);
    run[1].started_ns = i64::MIN;
    run[1].started_wall_ns = WALL;
    run[0].host = "a";
    run[1].clock = json!({"offset_to_master_ns": i64::MAX, "round_trip_ns": 1, "pings": 1});
    // Far-off clocks still import: the timeline is what the readings say, without a panic.
    let imported = import_records(&files(&link, &run));
    assert!(imported.is_ok(), "{imported:?}");

    let all = files(&link, &one_host_run(&link));
    let huge = all[0]
        .1
        .replace("\"workers\":2", &format!("\"workers\":{}", u64::MAX));
    let error = import_records(&[(all[0].0.clone(), huge)]).expect_err("workers missing");
    assert!(
        error.to_string().contains("no file of worker 1, 2, 3"),
        "{error}"
    );
}

/// A plan of a conversation file (two sessions: two turns and one), as `plan.json`.
fn workload_plan() -> Value {
    use crate::core::prompt::export::{plan_of_link, WorkloadBytes};
    let chats = r#"[
      {"id": "a", "conversations": [{"from": "human", "value": "Hi"}, {"from": "gpt", "value": "Hello"},
                                    {"from": "human", "value": "More?"}, {"from": "gpt", "value": "Yes"}]},
      {"id": "b", "conversations": [{"from": "human", "value": "One"}, {"from": "gpt", "value": "Two"}]}
    ]"#;
    let link = format!(
        "base_url={BASE}&model=m&engine=vllm&concurrency=2&max_tokens=16&request_canaries=true\
         &workload_turns=all&history=recorded"
    );
    let file = WorkloadBytes {
        name: "chats.json",
        bytes: chats.as_bytes(),
    };
    let plan = plan_of_link(&link, Some(file)).expect("plans");
    serde_json::from_str(&plan.document).expect("JSON")
}

/// The records of [`workload_plan`] on two workers, split by session: worker 0 plays session 0
/// (requests 0 and 1), worker 1 session 1 (request 2). Each header carries `shape`.
fn workload_files(plan: &Value, shape: [&Value; 2]) -> Vec<(String, String)> {
    let link = plan["link"].as_str().expect("link");
    let marker = |index: usize| {
        plan["requests"][index]["canary_marker"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let workers = [
        Worker {
            worker: 0,
            host: "loadgen",
            started_ns: 1_000_000_000,
            started_wall_ns: WALL,
            clock: json!({"offset_to_master_ns": 0, "round_trip_ns": 300_000, "pings": 16}),
            records: vec![
                record(0, &marker(0), 1_000_100_000, 1_020_000_000),
                record(1, &marker(1), 1_100_000_000, 1_130_000_000),
            ],
        },
        Worker {
            worker: 1,
            host: "loadgen",
            started_ns: 1_000_050_000,
            started_wall_ns: WALL + 50_000,
            clock: json!({"offset_to_master_ns": 0, "round_trip_ns": 250_000, "pings": 16}),
            records: vec![record(2, &marker(2), 1_000_200_000, 1_025_000_000)],
        },
    ];
    workers
        .iter()
        .zip(shape)
        .map(|(worker, shape)| {
            let text = file_text(link, 2, worker);
            let (header, rest) = text.split_once('\n').expect("a header");
            let mut header: Value = serde_json::from_str(header).expect("JSON");
            header["plan_workload"] = shape.clone();
            (
                format!("worker-{}.jsonl", worker.worker),
                format!("{header}\n{rest}"),
            )
        })
        .collect()
}

#[test]
fn records_of_a_workload_plan_are_placed_by_its_shape_split_by_session() {
    let plan = workload_plan();
    let shape = &plan["workload"];
    let artifact = import_records(&workload_files(&plan, [shape, shape])).expect("imports");
    let text = artifact.to_json_text().expect("writes");
    let report = validate_artifact_text(&text);
    assert_eq!(report.verdict, Verdict::Valid, "{:?}", report.violations);
    let block = artifact.workload.as_ref().expect("a workload block");
    let file = block.file.as_ref().expect("the file");
    assert_eq!(file.name.as_deref(), Some("chats.json"));
    assert_eq!((file.usable_sessions, file.usable_turns), (2, 3));
    let sending = block.sending.as_ref().expect("sending");
    assert_eq!((sending.sessions, sending.requests), (2, 3));
    assert!(sending.marker_lines);
    let origins: Vec<(u64, u64, u64)> = artifact
        .request_timings
        .iter()
        .map(|row| {
            let origin = row.workload.as_ref().expect("an origin");
            (origin.record, origin.session, origin.turn)
        })
        .collect();
    assert_eq!(origins, [(0, 0, 0), (0, 0, 1), (1, 1, 0)]);
    assert_eq!(artifact.completed, 3);
    for prompt in ["Hi", "More?", "One", "Hello", "Yes"] {
        assert!(!text.contains(&format!("\"{prompt}\"")), "{prompt}");
    }
}

#[test]
fn a_workload_shape_that_differs_or_is_hostile_is_refused() {
    let plan = workload_plan();
    let shape = &plan["workload"];
    let mut other = shape.clone();
    other["sessions"][1]["turns"][0]["max_tokens"] = json!(7);
    let error = import_records(&workload_files(&plan, [shape, &other])).expect_err("differs");
    assert!(error.reason.contains("plan_workload differ"), "{error}");
    let mut hostile = shape.clone();
    hostile["sessions"][0]["turns"][0]["text"] = json!("a prompt");
    let error = import_records(&workload_files(&plan, [&hostile, &hostile])).expect_err("hostile");
    assert!(error.to_string().contains("plan_workload"), "{error}");
    let mut hostile = shape.clone();
    hostile["sessions"][0]["record"] = json!(1);
    let error = import_records(&workload_files(&plan, [&hostile, &hostile])).expect_err("hostile");
    assert!(error.to_string().contains("planned twice"), "{error}");
    // Split by index instead of by session: request 1 belongs to session 0's worker.
    let mut files = workload_files(&plan, [shape, shape]);
    let moved = files[0].1.lines().nth(2).expect("request 1").to_owned();
    files[0].1 = files[0].1.replace(&format!("{moved}\n"), "").replacen(
        "\"requests\":2",
        "\"requests\":1",
        1,
    );
    files[1].1 = files[1].1.replacen("\"requests\":1", "\"requests\":2", 1) + &format!("{moved}\n");
    let error = import_records(&files).expect_err("misplaced");
    assert!(error.reason.contains("belongs to worker 0 of 2"), "{error}");
}
