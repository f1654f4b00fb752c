//! Tests of the report: hostile text stays text, nothing is fetched, the policy holds, the
//! carried files come back byte for byte and load the same runs.

use super::*;
use crate::core::config::slo::{Slo, SloBound, SloMetric};
use crate::core::read::bundle::open_dropped;
use crate::core::read::carried::{carried_files, CARRIED_OPEN_TAG};

const REFERENCE: &str = include_str!("../../../../tests/fixtures/reference-artifact.json");
const HOSTILE: &str = "<img src=x onerror=alert(1)>";

/// The reference artifact with a hostile model name, under a hostile file name.
fn hostile_run() -> OpenedArtifact {
    let text = REFERENCE.replace(
        "\"qwen38-swift15-ninfer-dflash2-c4-262k\"",
        &serde_json::to_string(HOSTILE).expect("a string"),
    );
    assert_ne!(text, REFERENCE, "the model name was replaced");
    OpenedArtifact::from_text("</script><b>run</b>.json", &text)
}

/// The document with the contents of its three `<script>` elements left out (the carried
/// files and the hover values, JSON in which every `<` is `\u003c`; and the hover script): what
/// the browser parses as markup.
fn markup_only(html: &str) -> String {
    let mut markup = String::new();
    let mut rest = html;
    while let Some(open) = rest.find("<script") {
        let body = open + rest[open..].find('>').expect("the tag ends") + 1;
        markup.push_str(&rest[..body]);
        let close = body + rest[body..].find("</script>").expect("the element ends");
        let content = &rest[body..close];
        assert!(
            content == REPORT_SCRIPT || !content.contains('<'),
            "a data block holds a raw <"
        );
        rest = &rest[close..];
    }
    markup.push_str(rest);
    markup
}

/// Every tag of `markup` (text holds no raw `<`: it is escaped), lower-cased.
fn tags(markup: &str) -> Vec<String> {
    markup
        .split('<')
        .skip(1)
        .map(|tail| tail[..tail.find('>').expect("the tag ends")].to_lowercase())
        .collect()
}

fn spec() -> SloSpec {
    SloSpec {
        slo: Slo::new([SloBound {
            metric: SloMetric::Ttft,
            limit_ms: 5_000.0,
        }])
        .expect("an SLO"),
        target: 0.95,
        sweep_min_attainment: None,
    }
}

#[test]
fn a_hostile_model_name_is_text_everywhere() {
    let run = hostile_run();
    let report = report_html(&ReportInput {
        runs: &[&run],
        slo: None,
        saved_at: Some("<now>"),
    });
    let html = &report.html;
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(html.contains("&lt;/script&gt;&lt;b&gt;run&lt;/b&gt;.json"));
    assert!(html.contains("&lt;now&gt;"));
    let markup = markup_only(html);
    for element in ["<img", "<b>", "onerror=alert(1)>", "</b>"] {
        assert!(!markup.contains(element), "{element} is in the report");
    }
    assert!(tags(&markup)
        .iter()
        .all(|tag| !tag.contains("onerror") && !tag.starts_with("img")));
    // Inside the JSON blocks every `<` is written \u003c.
    assert!(html.contains("\\u003cimg src=x onerror=alert(1)>"));
    // Exactly the two data blocks and the one script.
    assert_eq!(html.matches("<script").count(), 3);
    assert_eq!(html.matches("</script>").count(), 3);
    assert!(html.ends_with(&format!("<script>{REPORT_SCRIPT}</script></body></html>")));
    assert!(!REPORT_SCRIPT.contains("innerHTML"));
    assert!(!REPORT_SCRIPT.contains("fetch("));
}

#[test]
fn the_report_asks_the_network_for_nothing_and_states_its_policy() {
    let run = hostile_run();
    let report = report_html(&ReportInput {
        runs: &[&run],
        slo: Some(&spec()),
        saved_at: None,
    });
    // No tag names anything to load: no src, href, srcset, action or CSS url() anywhere, and
    // no element that loads by itself.
    let markup = markup_only(&report.html);
    for tag in tags(&markup) {
        for url in ["=\"http:", "=\"https:", "=\"//", "='http", "='//"] {
            assert!(!tag.contains(url), "<{tag}> names a URL");
        }
        for attribute in [
            " src=",
            " href=",
            " srcset=",
            " action=",
            " xlink:href=",
            "url(",
            " data=",
        ] {
            assert!(!tag.contains(attribute), "<{tag}> has{attribute}");
        }
        for element in [
            "link", "iframe", "object", "embed", "base", "img", "image", "use", "audio", "video",
            "source", "frame",
        ] {
            assert!(
                !(tag.starts_with(element) && tag[element.len()..].starts_with([' ', '/']))
                    && tag != element,
                "<{tag}> loads something"
            );
        }
    }
    let css = REPORT_STYLE.to_lowercase();
    assert!(!css.contains("url(") && !css.contains("@import"));
    let policy = content_security_policy(REPORT_STYLE, REPORT_SCRIPT);
    let meta = format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
        escape(&policy)
    );
    let head = &report.html[..report.html.find("<style>").expect("a style")];
    assert!(
        head.contains(&meta),
        "the policy comes before any style or script"
    );
    assert!(policy.contains("default-src 'none'"));
    assert!(policy.contains(&html::hash_source(REPORT_SCRIPT)));
    assert!(policy.contains(&html::hash_source(REPORT_STYLE)));
    assert!(report
        .html
        .contains(&format!("<style>{REPORT_STYLE}</style>")));
    assert!(
        !report.html.contains("style=\""),
        "no inline style attribute"
    );
}

#[test]
fn the_carried_artifact_comes_back_byte_for_byte_and_loads_the_same_run() {
    let run = OpenedArtifact::from_text("run.json", REFERENCE);
    let report = report_html(&ReportInput {
        runs: &[&run],
        slo: None,
        saved_at: None,
    });
    assert_eq!(
        report.carried,
        vec![CarriedFile::new("run.json", REFERENCE)]
    );
    assert!(report.not_carried.is_empty());
    let files = carried_files(&report.html).expect("files");
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].name, "run.json");
    assert_eq!(files[0].text.as_bytes(), REFERENCE.as_bytes());
    let opened = open_dropped("report.html", report.html.as_bytes());
    assert_eq!(opened, vec![run]);
}

#[test]
fn a_single_run_shows_its_numbers_notes_slo_and_every_chart() {
    let run = OpenedArtifact::from_text("run.json", REFERENCE);
    let spec = spec();
    let report = report_html(&ReportInput {
        runs: &[&run],
        slo: Some(&spec),
        saved_at: None,
    });
    let html = &report.html;
    assert!(html.contains(r#"data-testid="report-card-ttft""#));
    assert!(html.contains(r#"data-testid="report-card-goodput""#));
    assert!(html.contains(r#"data-testid="report-slo">SLO: "#));
    let charts = artifact_charts(&run, ChartTheme::LIGHT);
    let figures = html.matches(r#"data-testid="report-chart""#).count();
    assert_eq!(figures, charts.len());
    // All but the throughput chart ("no data": no start times) are drawn, each with hover data.
    assert_eq!(
        html.matches("<svg class=\"chart\"").count(),
        charts.len() - 1
    );
    let hover_start = html.find(r#"id="strobe-hover">"#).expect("hover data") + 18;
    let hover_end = hover_start + html[hover_start..].find("</script>").expect("end");
    let hover: Value = serde_json::from_str(&html[hover_start..hover_end]).expect("json");
    assert_eq!(hover.as_object().map(Map::len), Some(charts.len() - 1));
    assert!(hover["run-cdf-ttft"]["s"][0]["d"]
        .as_array()
        .is_some_and(|d| d.len() >= 12));
    assert_eq!(report_file_name(&[&run]), "strobe-report-run.html");
}

#[test]
fn a_comparison_shows_its_table_mismatches_and_verdicts() {
    let a = OpenedArtifact::from_text("a.json", REFERENCE);
    let b = OpenedArtifact::from_text(
        "b.json",
        &REFERENCE.replace("\"concurrency\": 1,", "\"concurrency\": 8,"),
    );
    let report = report_html(&ReportInput {
        runs: &[&a, &b],
        slo: None,
        saved_at: None,
    });
    let html = &report.html;
    assert!(html.contains("Comparing 2 runs (baseline: a.json)"));
    assert!(html.contains(r#"data-testid="report-compare""#));
    assert!(html.contains(r#"data-testid="report-verdict""#));
    assert_eq!(html.matches(r#"data-testid="report-run""#).count(), 2);
    assert_eq!(report.carried.len(), 2);
    let names: Vec<String> = open_dropped("r.html", html.as_bytes())
        .iter()
        .map(OpenedArtifact::label)
        .collect();
    assert_eq!(names, ["a.json", "b.json"]);
    assert_eq!(report_file_name(&[&a, &b]), "strobe-report-2-runs.html");
}

#[test]
fn a_run_read_from_several_files_is_shown_and_said_not_carried() {
    let mut run = OpenedArtifact::from_text("pair", REFERENCE);
    run.source = None;
    let report = report_html(&ReportInput {
        runs: &[&run],
        slo: None,
        saved_at: None,
    });
    assert_eq!(report.not_carried, ["pair"]);
    assert!(report.html.contains("Not carried"));
    let opened = open_dropped("r.html", report.html.as_bytes());
    assert_eq!(opened.len(), 1);
    assert!(
        opened[0].refusal.is_some(),
        "a report with no artifact says so"
    );
}

#[test]
fn an_html_file_that_is_no_report_or_a_damaged_one_says_so() {
    let plain = open_dropped("page.html", b"<!DOCTYPE html><html><body>hi</body></html>");
    assert!(
        plain[0].status_line().contains("not a strobe report"),
        "{}",
        plain[0].status_line()
    );
    let run = OpenedArtifact::from_text("run.json", REFERENCE);
    let html = report_html(&ReportInput {
        runs: &[&run],
        slo: None,
        saved_at: None,
    })
    .html;
    let cut = &html[..html.find(CARRIED_OPEN_TAG).expect("block") + CARRIED_OPEN_TAG.len() + 40];
    let damaged = open_dropped("cut.html", cut.as_bytes());
    assert!(
        damaged[0].status_line().contains("damaged"),
        "{}",
        damaged[0].status_line()
    );
}

#[test]
fn a_run_with_the_servers_metrics_and_a_cache_reset_says_both_as_text() {
    let mut artifact: Value = serde_json::from_str(REFERENCE).expect("json");
    artifact["server_metrics"] = serde_json::json!({
        "source": "http://127.0.0.1:8000/metrics",
        "interval_ms": 1000,
        "family": "vllm",
        "samples": [
            {"t_ms": 1000.0, "latency_ms": 2.0, "values": {"vllm:num_requests_waiting": 12.0}}
        ],
        "summary": {
            "window_start_ms": 0.0, "window_end_ms": 2500.0,
            "gauges": {"waiting": {"min": 1.0, "mean": 6.5, "max": 12.0, "samples": 2}},
            "counters": {}, "histograms": {}
        },
        "notes": [HOSTILE]
    });
    artifact["prefix_cache_reset"] = serde_json::json!({
        "policy": "before_run",
        "reset": {
            "engine": "vllm", "method": "POST", "url": "http://127.0.0.1:8000/reset_prefix_cache",
            "status": 200, "attempts": 1, "t_ms": -812.4, "latency_ms": 2.3,
            "counters_before": null, "counters_after": null
        },
        "check": {"verdict": "emptied", "first_wave_min_cached_tokens": 0, "reason": "…"}
    });
    let run = OpenedArtifact::from_text("run.json", &artifact.to_string());
    assert!(run.server_metrics.is_some(), "the block was read");
    assert!(run.prefix_cache_reset.is_some(), "the reset was read");
    let report = report_html(&ReportInput {
        runs: &[&run],
        slo: None,
        saved_at: None,
    });
    let html = &report.html;
    assert!(
        html.contains(r#"<p data-testid="report-server-line">server (vllm): peak queue 12</p>"#),
        "the server line"
    );
    assert!(html.contains(r#"data-testid="report-server-notes""#));
    assert!(
        !markup_only(html).contains(HOSTILE),
        "a note from the file stays text"
    );
    assert!(html.contains(
        "prefix cache emptied before the run (vLLM POST /reset_prefix_cache answered 200"
    ));
}
