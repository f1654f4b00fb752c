//! The scrape schedule: when scrapes go, what failures do, and the block it ends with.

use serde_json::Value;

use super::*;
use crate::core::read::validate::report::RuleId;
use crate::core::read::validate::validate_artifact;

const URL: &str = "http://127.0.0.1:8000/metrics";

fn vllm_body(running: u32, prompt_tokens: u32) -> Vec<u8> {
    format!(
        "# TYPE vllm:num_requests_running gauge\n\
         vllm:num_requests_running{{model_name=\"m\"}} {running}\n\
         # TYPE vllm:prompt_tokens_total counter\n\
         vllm:prompt_tokens_total{{model_name=\"m\"}} {prompt_tokens}\n"
    )
    .into_bytes()
}

#[test]
fn the_metrics_url_is_beside_the_api_without_credentials() {
    let url = default_metrics_url;
    assert_eq!(
        url("http://127.0.0.1:8000/v1").as_deref(),
        Some("http://127.0.0.1:8000/metrics")
    );
    assert_eq!(
        url(" HTTPS://user:pw@gpu-box/api/v1?x=1 ").as_deref(),
        Some("https://gpu-box/metrics")
    );
    assert_eq!(
        url("http://[::1]:8011").as_deref(),
        Some("http://[::1]:8011/metrics")
    );
    assert_eq!(url("ftp://gpu-box/v1"), None);
    assert_eq!(url("gpu-box:8000/v1"), None);
    assert_eq!(url("http:///v1"), None);
}

#[test]
fn scrapes_go_at_once_then_every_interval_one_at_a_time() {
    let mut session = ScrapeSession::new(URL, 1000);
    assert!(session.next_send(0.0), "the baseline goes at once");
    assert!(!session.next_send(10.0), "one in flight at a time");
    session.answered(0.0, 4.0, 200, &vllm_body(0, 10));
    assert!(!session.next_send(500.0));
    assert!(session.next_send(1000.0));
    // A slow answer delays the next scrape; it goes as soon as the answer is in.
    assert!(!session.next_send(2000.0));
    session.answered(1000.0, 2500.0, 200, &vllm_body(3, 40));
    assert!(session.next_send(2500.0));
    session.answered(2500.0, 2502.0, 200, &vllm_body(2, 90));
    // The last request ended: the final scrape does not wait for the interval.
    session.want_now();
    assert!(session.next_send(2600.0));
    session.answered(2600.0, 2601.5, 200, &vllm_body(0, 100));
    assert!(!session.next_send(2700.0));
    let latencies: Vec<f64> = session.samples().iter().map(|s| s.latency_ms).collect();
    assert_eq!(latencies, [4.0, 1500.0, 2.0, 1.5]);
}

#[test]
fn the_interval_is_held_to_its_bounds_and_the_timeout_to_it() {
    let fast = ScrapeSession::new(URL, 5);
    assert_eq!(
        (fast.interval_ms(), fast.timeout_ms()),
        (100, MIN_TIMEOUT_MS)
    );
    let middle = ScrapeSession::new(URL, 2_500);
    assert_eq!(
        (middle.interval_ms(), middle.timeout_ms()),
        (2_500, 2_500.0)
    );
    let slow = ScrapeSession::new(URL, 1_000_000);
    assert_eq!(
        (slow.interval_ms(), slow.timeout_ms()),
        (60_000, MAX_TIMEOUT_MS)
    );
}

#[test]
fn a_server_without_metrics_is_given_up_on_with_advice() {
    let mut session = ScrapeSession::new(URL, 100);
    for attempt in 0..GIVE_UP_AFTER {
        let t = f64::from(attempt) * 100.0;
        assert!(session.next_send(t));
        session.answered(t, t + 1.0, 404, b"Not Found");
    }
    assert!(session.gave_up());
    assert!(!session.next_send(10_000.0), "no more scrapes");
    let block = session.finish(Some(Window {
        start_ms: 0.0,
        end_ms: 500.0,
    }));
    assert_eq!(block.family, "unknown");
    assert!(block.samples.is_empty() && block.summary.is_none());
    assert!(
        block.notes[0].starts_with("3 scrapes failed: HTTP 404"),
        "{:?}",
        block.notes
    );
    assert!(block.notes[0].contains("--enable-metrics"));
    assert!(block.notes[1].contains("the run went on"));
}

#[test]
fn passing_trouble_does_not_stop_scraping() {
    let mut session = ScrapeSession::new(URL, 100);
    let mut t = 0.0;
    let mut step = |session: &mut ScrapeSession, outcome: Option<ScrapeFailure>| {
        assert!(session.next_send(t));
        match outcome {
            Some(failure) => session.failed(t, failure),
            None => session.answered(t, t + 1.0, 200, &vllm_body(1, 1)),
        }
        t += 100.0;
    };
    for _ in 0..10 {
        step(&mut session, Some(ScrapeFailure::Timeout));
    }
    step(&mut session, Some(ScrapeFailure::Unreachable));
    step(&mut session, Some(ScrapeFailure::Unreachable));
    step(&mut session, None);
    step(&mut session, Some(ScrapeFailure::Unreachable));
    step(&mut session, Some(ScrapeFailure::Status(503)));
    step(&mut session, Some(ScrapeFailure::Unreachable));
    assert!(!session.gave_up(), "never three lasting failures in a row");
    let notes = session.finish(None).notes;
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(notes[0].starts_with("4 scrapes failed: no answer the page could read"));
    assert!(notes[0].contains("CORS"));
    assert!(notes[1].starts_with("10 scrapes failed: no answer within the timeout"));
    assert!(notes[2].starts_with("1 scrape failed: HTTP 503"));
}

#[test]
fn the_block_names_the_family_summarizes_and_validates() {
    let mut session = ScrapeSession::new("http://admin:pw@127.0.0.1:8000/metrics?token=abc", 500);
    for (t, running, tokens) in [
        (-30.0, 0, 0),
        (470.0, 4, 300),
        (970.0, 2, 800),
        (1200.0, 0, 900),
    ] {
        if t == 1200.0 {
            // After the last request: the final scrape, before the interval is up.
            session.want_now();
        }
        assert!(session.next_send(t));
        let mut body = vllm_body(running, tokens);
        body.extend_from_slice(b"broken line\n");
        session.answered(t, t + 2.0, 200, &body);
    }
    // An answer with nothing in it is no sample.
    session.want_now();
    assert!(session.next_send(1300.0));
    session.answered(1300.0, 1301.0, 200, b"<html>busy</html>");
    let block = session.finish(Some(Window {
        start_ms: 0.0,
        end_ms: 1000.0,
    }));
    assert_eq!(
        block.source, "http://127.0.0.1:8000/metrics",
        "no credential kept"
    );
    assert_eq!((block.family.as_str(), block.samples.len()), ("vllm", 4));
    let summary = block.summary.as_ref().expect("a summary");
    assert_eq!(summary.gauges["running"].max, 4.0);
    assert_eq!(summary.counters["prompt_tokens"].delta, 900.0);
    // The broken line of every answer is one note, not four.
    assert_eq!(
        block
            .notes
            .iter()
            .filter(|note| note.contains("no valid metric name"))
            .count(),
        1,
        "{:?}",
        block.notes
    );
    assert!(block
        .notes
        .iter()
        .any(|note| note.contains("no metric sample")));

    let text = include_str!("../../../../tests/fixtures/reference-artifact.json");
    let mut artifact: Value = serde_json::from_str(text).expect("the reference artifact");
    artifact["server_metrics"] = serde_json::to_value(&block).expect("a JSON block");
    let broken: Vec<_> = validate_artifact(&artifact)
        .violations
        .into_iter()
        .filter(|violation| violation.rule == RuleId::ServerMetricsBlock)
        .collect();
    assert!(broken.is_empty(), "{broken:?}");
}

#[test]
fn a_source_with_a_credential_is_cut_to_its_origin_and_path() {
    assert_eq!(shareable_source(URL), URL);
    assert_eq!(
        shareable_source("https://u:p@h:9/a/metrics?api_key=x#f"),
        "https://h:9/a/metrics"
    );
    assert_eq!(
        shareable_source("http://h/metrics?x=1"),
        "http://h/metrics?x=1"
    );
    assert_eq!(
        credential_in_url(&shareable_source("http://t@h/m?token=1")),
        None
    );
}

#[test]
fn a_server_that_answered_the_run_but_not_its_metrics_keeps_the_page_out_by_cors() {
    let blocked = |base_url: Option<&str>| {
        let mut session = ScrapeSession::new(URL, 100);
        for attempt in 0..GIVE_UP_AFTER {
            let t = f64::from(attempt) * 100.0;
            assert!(session.next_send(t));
            session.failed(t, ScrapeFailure::Unreachable);
        }
        if let Some(base_url) = base_url {
            session.api_answered_at(base_url);
        }
        session.finish(None).notes
    };
    // The run's requests went to the metrics URL's own origin and were answered: CORS.
    let notes = blocked(Some("http://127.0.0.1:8000/v1"));
    assert!(
        notes[0].starts_with(
            "3 scrapes failed: no answer the page could read, though the same server answered \
             the run's requests: it does not let this page's origin read /metrics (CORS)"
        ),
        "{notes:?}"
    );
    assert!(notes[0].contains("Access-Control-Allow-Origin on /metrics"));
    assert!(notes[0].contains("or set server_metrics to off"));
    assert!(notes[1].contains("the run went on"));
    // Metrics on another port, or no answered request: down or blocked, the page cannot tell.
    for base_url in [Some("http://127.0.0.1:9000/v1"), None] {
        let notes = blocked(base_url);
        assert!(
            notes[0].contains("the server is down, or it does not allow this page's origin"),
            "{notes:?}"
        );
    }
}

#[test]
fn the_endpoint_check_says_what_answers_at_the_metrics_url_and_what_to_do() {
    let body = vllm_body(2, 40);
    let found = check_metrics_answer(URL, 1_000, Ok((200, &body)), true);
    assert!(found.found);
    assert_eq!(
        found.text,
        "Server metrics: http://127.0.0.1:8000/metrics answers with 2 metrics in vLLM's names; \
         each run scrapes it every 1 s and puts the server's view beside its own."
    );
    // Out of range intervals are said as a run clamps them.
    let clamped = check_metrics_answer(URL, 5, Ok((200, &body)), true);
    assert!(clamped.text.contains("every 0.1 s"), "{}", clamped.text);

    let missing = check_metrics_answer(URL, 1_000, Ok((404, b"not found")), true);
    assert!(!missing.found);
    assert!(missing.text.starts_with("Server metrics: http://127.0.0.1:8000/metrics: HTTP 404: this server has no /metrics here"), "{}", missing.text);
    assert!(missing
        .text
        .ends_with("Runs go on without the server's view."));

    let blocked = check_metrics_answer(URL, 1_000, Err(ScrapeFailure::Unreachable), true);
    assert!(
        blocked
            .text
            .contains("does not let this page's origin read /metrics (CORS)"),
        "{}",
        blocked.text
    );
    let down = check_metrics_answer(URL, 1_000, Err(ScrapeFailure::Unreachable), false);
    assert!(
        down.text
            .contains("the server is down, or it does not allow"),
        "{}",
        down.text
    );

    // What will not mend is carried to the runs, which then do not scrape; what may pass is not.
    assert_eq!(found.lasting, None);
    assert_eq!(missing.url, URL);
    assert!(missing
        .lasting
        .as_deref()
        .is_some_and(|advice| advice.starts_with("HTTP 404: this server has no /metrics here")));
    assert!(blocked
        .lasting
        .as_deref()
        .is_some_and(|advice| advice.contains("(CORS)")));
    let unready = check_metrics_answer(URL, 1_000, Ok((503, b"loading")), true);
    assert_eq!(
        unready.lasting, None,
        "a 503 passes when the model has loaded"
    );
    let slow = check_metrics_answer(URL, 1_000, Err(ScrapeFailure::Timeout), true);
    assert_eq!(slow.lasting, None, "a busy server may answer the run");

    // A page that is not Prometheus text: nothing of it is quoted back.
    let html = b"<html><script>alert(1)</script></html>";
    let not_metrics = check_metrics_answer(URL, 1_000, Ok((200, html)), true);
    assert!(!not_metrics.found);
    assert!(
        !not_metrics.text.contains("<script>"),
        "{}",
        not_metrics.text
    );
    assert!(not_metrics.text.contains("no metric strobe can read"));
    assert_eq!(not_metrics.lasting, None);

    // A credential in the URL never reaches the line.
    let keyed = check_metrics_answer(
        "http://user:secret@127.0.0.1:8000/metrics?token=abc",
        1_000,
        Ok((200, &body)),
        true,
    );
    assert!(
        !keyed.text.contains("secret") && !keyed.text.contains("abc"),
        "{}",
        keyed.text
    );
}

#[test]
fn a_server_that_does_not_implement_metrics_is_given_up_on_and_named() {
    // llama-server started without --metrics answers 501 on /metrics: it will not mend.
    let mut session = ScrapeSession::new(URL, 100);
    for sent in 0..GIVE_UP_AFTER {
        let sent = f64::from(sent) * 100.0;
        assert!(session.next_send(sent), "scrape at {sent} ms");
        session.answered(
            sent,
            sent + 1.0,
            501,
            b"This server does not support metrics endpoint.",
        );
    }
    assert!(session.gave_up(), "three 501s in a row stop scraping");
    let block = session.finish(None);
    assert_eq!(
        block.notes[0],
        "3 scrapes failed: HTTP 501: this server serves no metrics as started (llama-server \
         answers 501 on /metrics until it is started with --metrics)"
    );
    let check = check_metrics_answer(URL, 1_000, Ok((501, b"x")), true);
    assert!(
        check.text.contains("until it is started with --metrics"),
        "{}",
        check.text
    );
}

#[test]
fn a_run_after_a_check_that_found_no_metrics_sends_nothing_and_says_why() {
    let check = check_metrics_answer(URL, 1_000, Ok((501, b"")), true);
    let advice = check
        .lasting
        .clone()
        .expect("a 501 does not mend by itself");
    let mut session = ScrapeSession::for_run(URL, 1_000, Some(&check));
    assert!(session.gave_up());
    assert!(!session.next_send(0.0), "not even a baseline");
    session.want_now();
    assert!(!session.next_send(5_000.0), "nor the last scrape");
    let block = session.finish(Some(Window {
        start_ms: 0.0,
        end_ms: 1_000.0,
    }));
    assert!(block.samples.is_empty());
    assert_eq!(block.summary, None);
    assert_eq!(block.source, URL);
    assert_eq!(
        block.notes,
        [format!(
            "not scraped: the endpoint check before the run found {advice}; the run went on \
             without the server's view"
        )]
    );
    assert!(block.notes[0]
        .contains("llama-server answers 501 on /metrics until it is started with --metrics"));
}

#[test]
fn a_run_scrapes_unless_the_check_of_its_own_url_found_a_lasting_failure() {
    // No check, a check that found metrics, a failure that may mend: the run scrapes.
    let body = vllm_body(2, 40);
    let found = check_metrics_answer(URL, 1_000, Ok((200, &body)), true);
    let slow = check_metrics_answer(URL, 1_000, Err(ScrapeFailure::Timeout), true);
    assert_eq!(slow.lasting, None);
    for check in [None, Some(&found), Some(&slow)] {
        let mut session = ScrapeSession::for_run(URL, 1_000, check);
        assert!(!session.gave_up());
        assert!(session.next_send(0.0), "the baseline is due at once");
    }
    // A lasting failure of another URL (the form changed after the check) says nothing here.
    let other = "http://127.0.0.1:9/metrics";
    let elsewhere = check_metrics_answer(other, 1_000, Ok((404, b"")), true);
    assert!(elsewhere.lasting.is_some());
    let mut session = ScrapeSession::for_run(URL, 1_000, Some(&elsewhere));
    assert!(!session.gave_up());
    assert!(session.next_send(0.0));
    // The same failure of this URL: nothing is sent.
    let mut session = ScrapeSession::for_run(other, 1_000, Some(&elsewhere));
    assert!(session.gave_up());
    assert!(!session.next_send(0.0));
}
