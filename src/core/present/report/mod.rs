//! The one-file report (docs/guide/results.md, *The one-file report*): the selected run, comparison
//! or sweep as a single HTML document that opens from disk, offline, in any browser, and loads the
//! same runs again when dropped on strobe's page. The page's *Save report* and
//! `strobe-artifact report` both call [`report_html`].
//!
//! What it holds is what the results pages show, built by the same functions: the headline
//! cards ([`crate::core::present::headline`]), the key metrics, the measurement notes, the SLO's
//! verdict ([`crate::core::slo`]), a comparison's table, mismatches and verdicts
//! ([`crate::core::present::compare`], [`crate::core::present::verdict`]), the capacity curves,
//! and every chart of the page drawn as SVG from its ECharts option ([`svg`]), with its values
//! on hover. It carries the files the runs were read from ([`crate::core::read::carried`]).
//!
//! Safety: every text is escaped ([`html::escape`]); the document loads nothing (no `src` or
//! `href` to anywhere), and its Content-Security-Policy (`default-src 'none'`) allows only its
//! own style and script by their hashes. The script sets text with `textContent`, never markup.
//! The API key is never in it: no artifact holds it.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::core::config::slo::SloSpec;
use crate::core::format::{counted, file_stem, format_bytes, format_count, MISSING};
use crate::core::present::cache_reset::reset_note_of;
use crate::core::present::capacity::{capacity_series, capacity_series_with_slo};
use crate::core::present::charts::{
    artifact_charts, attainment_curve, capacity_curve, comparison_charts, goodput_curve,
    group_charts, offered_vs_achieved, overlay_slo, pareto, CapacityAxis, ChartSection, ChartTheme,
    NamedChart,
};
use crate::core::present::compare::{compare, format_delta, ComparedMetric};
use crate::core::present::headline::{headline_cards, HeadlineInputs};
use crate::core::present::server::server_line;
use crate::core::present::verdict::shown::shown_verdicts;
use crate::core::read::carried::{carried_block, CarriedFile};
use crate::core::read::opened::load::LoadView;
use crate::core::read::opened::metrics::{MetricKind, MetricStat, TimeBasis};
use crate::core::read::opened::text::CappedText;
use crate::core::read::opened::views::row_notes;
use crate::core::read::opened::OpenedArtifact;
use crate::core::slo::judge_opened;

pub mod html;
pub mod size;
pub mod svg;

use html::{content_security_policy, escape, json_in_script};
use svg::chart_svg;

/// The report's style sheet.
pub const REPORT_STYLE: &str = include_str!("report.css");
/// The report's one script: values on hover ([`svg::SvgChart::hover`]).
pub const REPORT_SCRIPT: &str = include_str!("hover.js");

/// Failures listed per run before the rest are counted.
const FAILURES_SHOWN: usize = 20;
/// Problems (violations, notices) listed per run before the rest are counted.
const PROBLEMS_SHOWN: usize = 20;

/// What a report is made of.
#[derive(Clone, Copy, Debug)]
pub struct ReportInput<'a> {
    /// The runs as the page shows them (on its time basis), in its order: the first is a
    /// comparison's baseline.
    pub runs: &'a [&'a OpenedArtifact],
    /// The SLO in force, if any.
    pub slo: Option<&'a SloSpec>,
    /// When it was saved, in the caller's words (the core reads no clock).
    pub saved_at: Option<&'a str>,
}

/// A report made.
#[derive(Clone, Debug, PartialEq)]
pub struct SavedReport {
    /// The document.
    pub html: String,
    /// The files it carries.
    pub carried: Vec<CarriedFile>,
    /// The runs it shows but cannot load again when dropped (read from several files), by
    /// label.
    pub not_carried: Vec<String>,
}

/// The report's file name: `strobe-report-<run>.html`, or `strobe-report-<n>-runs.html`.
pub fn report_file_name(runs: &[&OpenedArtifact]) -> String {
    match runs {
        [run] => {
            let label = run.label();
            let stem = label.strip_suffix(".json").unwrap_or(&label);
            format!(
                "{}.html",
                file_stem(&format!("strobe-report-{stem}"), "strobe-report")
            )
        }
        runs => format!("strobe-report-{}-runs.html", runs.len()),
    }
}

/// The files `runs` were read from, each once, in order; and the labels of the runs none holds.
pub fn carried_of(runs: &[&OpenedArtifact]) -> (Vec<CarriedFile>, Vec<String>) {
    let mut carried: Vec<CarriedFile> = Vec::new();
    let mut not_carried = Vec::new();
    for run in runs {
        match &run.source {
            Some(source) => {
                if !carried.iter().any(|file| file == source) {
                    carried.push(source.clone());
                }
            }
            None => not_carried.push(run.label()),
        }
    }
    (carried, not_carried)
}

/// The report of `input.runs`.
pub fn report_html(input: &ReportInput<'_>) -> SavedReport {
    let runs = input.runs;
    let (carried, not_carried) = carried_of(runs);
    let mut charts_hover = Map::new();
    let mut body = String::with_capacity(256 * 1024);
    let title = match runs {
        [run] => format!("strobe report: {}", run.label()),
        runs => format!("strobe report: {} runs compared", runs.len()),
    };
    let _ = write!(
        body,
        r#"<header><h1 data-testid="report-title">{}</h1><p class="muted">Made by strobe {}{}. Drop this file on strobe's page to load its runs again.</p></header>"#,
        escape(&title),
        env!("CARGO_PKG_VERSION"),
        input
            .saved_at
            .map(|at| format!(", saved {}", escape(at)))
            .unwrap_or_default()
    );
    body.push_str("<main>");
    if runs.len() > 1 {
        write_comparison(&mut body, runs, input.slo);
        write_capacity(&mut body, runs, input.slo, &mut charts_hover);
    }
    for (position, run) in runs.iter().enumerate() {
        write_run(&mut body, position, run, input.slo);
    }
    let theme = ChartTheme::LIGHT;
    let mut charts = match runs {
        [run] => artifact_charts(run, theme),
        runs => comparison_charts(runs, theme),
    };
    if let Some(spec) = input.slo {
        let rows = match runs {
            [run] => Some(run.rows.as_slice()),
            _ => None,
        };
        overlay_slo(&mut charts, &spec.slo, rows, theme);
    }
    if !runs.is_empty() {
        write_charts(&mut body, &charts, "run", &mut charts_hover);
    }
    body.push_str("</main>");
    write_footer(&mut body, &carried, &not_carried);

    let policy = content_security_policy(REPORT_STYLE, REPORT_SCRIPT);
    let hover_json = serde_json::to_string(&Value::Object(charts_hover)).unwrap_or_default();
    let mut html = String::with_capacity(body.len() + hover_json.len() + 64 * 1024);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"generator\" content=\"strobe {}\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <title>{}</title><style>{REPORT_STYLE}</style></head><body>",
        escape(&policy),
        env!("CARGO_PKG_VERSION"),
        escape(&title)
    );
    html.push_str(&body);
    html.push_str(&carried_block(&carried));
    let _ = write!(
        html,
        r#"<script type="application/json" id="strobe-hover">{}</script><script>{REPORT_SCRIPT}</script></body></html>"#,
        json_in_script(&hover_json)
    );
    SavedReport {
        html,
        carried,
        not_carried,
    }
}

fn list(body: &mut String, class: &str, test_id: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = write!(body, r#"<ul class="{class}" data-testid="{test_id}">"#);
    for item in items {
        let _ = write!(body, "<li>{}</li>", escape(item));
    }
    body.push_str("</ul>");
}

/// One run: what was measured, its headline cards, key metrics, notes, SLO and failures.
fn write_run(body: &mut String, position: usize, run: &OpenedArtifact, slo: Option<&SloSpec>) {
    let _ = write!(
        body,
        r#"<section class="run" data-testid="report-run" data-position="{position}"><h2>{}</h2>"#,
        escape(&run.label())
    );
    let identity = &run.identity;
    let facts: Vec<String> = [
        ("run", &identity.run_id),
        ("model", &identity.model),
        ("engine", &identity.engine),
        ("GPU", &identity.gpu),
        ("server", &identity.base_url),
        ("protocol", &identity.measurement_protocol),
        ("started", &identity.started_at),
    ]
    .into_iter()
    .filter_map(|(name, value)| value.as_ref().map(|value| format!("{name}: {value}")))
    .collect();
    let _ = write!(
        body,
        r#"<p class="muted" data-testid="report-identity">{}</p>"#,
        escape(&facts.join(" · "))
    );
    let _ = write!(
        body,
        r#"<p class="muted">{} · {}</p>"#,
        escape(&run.verdict_label()),
        escape(&run.status_line())
    );
    let outcome = slo.map(|spec| judge_opened(&spec.slo, run));
    let judged = outcome.as_ref().and_then(|outcome| outcome.as_ref().ok());
    let failed = run
        .workload
        .failed
        .unwrap_or(run.failures.len() as u64)
        .max(run.failures.len() as u64);
    let cards = headline_cards(HeadlineInputs {
        requests: run.workload.requests.unwrap_or_default(),
        completed: run.workload.completed.unwrap_or(run.rows.len() as u64),
        failed,
        metrics: &run.metrics,
        slo: judged,
    });
    body.push_str(r#"<div class="cards" data-testid="report-headline">"#);
    for card in cards {
        let _ = write!(
            body,
            r#"<div class="card" data-testid="report-card-{}"><span class="label">{}</span><span class="value">{}</span>{}</div>"#,
            card.id,
            escape(card.label),
            escape(&card.value),
            card.detail
                .map(|detail| format!(r#"<span class="detail">{}</span>"#, escape(&detail)))
                .unwrap_or_default()
        );
    }
    body.push_str("</div>");
    match outcome {
        Some(Ok(outcome)) => {
            let _ = write!(
                body,
                r#"<p class="slo" data-testid="report-slo">SLO: {}</p>"#,
                escape(&outcome.summary())
            );
        }
        Some(Err(reason)) => {
            let _ = write!(
                body,
                r#"<p class="slo" data-testid="report-slo">SLO: {}</p>"#,
                escape(&reason.to_string())
            );
        }
        None => {}
    }
    write_metrics_table(body, run);
    let warnings = run
        .load
        .as_ref()
        .map(LoadView::warnings)
        .unwrap_or_default();
    if !warnings.is_empty() {
        body.push_str(r#"<div class="warning" data-testid="report-load-warning">"#);
        for warning in &warnings {
            let _ = write!(body, "<p>{}</p>", escape(warning));
        }
        body.push_str("</div>");
    }
    let mut notes = Vec::new();
    if run.basis == TimeBasis::FromWire {
        notes.push(
            "Times from the wire: TTFO, TTFT and E2E minus each request's client_queue_ms."
                .to_owned(),
        );
    }
    if let Some(sweep) = &run.sweep {
        notes.push(sweep.note());
    }
    if let Some(load) = &run.load {
        notes.extend(load.notes());
    }
    if let Some(distributed) = &run.distributed {
        notes.extend(distributed.notes());
    } else if let Some(client) = &run.client {
        notes.extend(client.notes());
    }
    if let Some(source) = &run.foreign {
        notes.extend(source.notes());
    }
    if run.client.is_some() || run.distributed.is_some() {
        notes.extend(row_notes(&run.rows));
    }
    if let Some(reset) = reset_note_of(run) {
        notes.push(reset.text);
    }
    if !notes.is_empty() {
        body.push_str("<h3>How it was measured</h3>");
        list(body, "notes", "report-notes", &notes);
    }
    if let Some(block) = &run.server_metrics {
        let line = server_line(block);
        body.push_str("<h3>The server's view</h3>");
        let _ = write!(
            body,
            r#"<p data-testid="report-server-line">{}</p>"#,
            escape(&line.text)
        );
        if !line.notes.is_empty() {
            list(body, "notes", "report-server-notes", &line.notes);
        }
    }
    write_failures(body, run);
    let problems = run.problems();
    if !problems.is_empty() {
        let _ = write!(
            body,
            "<h3>{}</h3>",
            escape(&counted(problems.len() as u64, "problem", "problems"))
        );
        let mut shown: Vec<String> = problems.iter().take(PROBLEMS_SHOWN).cloned().collect();
        if problems.len() > PROBLEMS_SHOWN {
            shown.push(format!("… and {} more", problems.len() - PROBLEMS_SHOWN));
        }
        list(body, "problems", "report-problems", &shown);
    }
    body.push_str("</section>");
}

fn write_metrics_table(body: &mut String, run: &OpenedArtifact) {
    body.push_str(
        r#"<table data-testid="report-metrics"><thead><tr><th>metric</th><th>p50</th><th>p95</th><th>p99</th><th>mean</th><th>unit</th></tr></thead><tbody>"#,
    );
    let cell = |value: Option<f64>| value.map_or_else(|| MISSING.to_owned(), format_metric);
    for kind in MetricKind::ALL {
        let summary = run.metrics.get(kind);
        let _ = write!(
            body,
            r#"<tr><td>{}</td><td class="number">{}</td><td class="number">{}</td><td class="number">{}</td><td class="number">{}</td><td>{}</td></tr>"#,
            escape(kind.short_label()),
            cell(summary.p50),
            cell(summary.p95),
            cell(summary.p99),
            cell(summary.mean),
            escape(kind.unit())
        );
    }
    body.push_str("</tbody></table>");
    let throughput = run.metrics.throughput_tok_s.map_or(
        "withheld (a request failed, or the server did not count its tokens)".to_owned(),
        |rate| format!("{rate:.1} tok/s"),
    );
    let cache = run
        .metrics
        .prefix_cache_hit_avg
        .map_or("not reported".to_owned(), |hit| {
            format!("{:.1} %", hit * 100.0)
        });
    let _ = write!(
        body,
        "<p>Throughput: {} · prefix cache hit: {}</p>",
        escape(&throughput),
        escape(&cache)
    );
}

/// Two decimals, and thousands separators from 1,000 up, as the page's table writes them.
fn format_metric(value: f64) -> String {
    if value.abs() >= 1_000.0 && value.is_finite() {
        format_count(value.round() as usize)
    } else {
        format!("{value:.2}")
    }
}

fn write_failures(body: &mut String, run: &OpenedArtifact) {
    if run.failures.is_empty() {
        return;
    }
    let _ = write!(
        body,
        r#"<h3>Failures ({})</h3><table data-testid="report-failures"><thead><tr><th>request</th><th>class</th><th>type</th><th>reason</th></tr></thead><tbody>"#,
        run.failures.len()
    );
    let text = |value: &Option<CappedText>| {
        value
            .as_ref()
            .map(|value| escape(&value.to_string()))
            .unwrap_or_default()
    };
    for failure in run.failures.iter().take(FAILURES_SHOWN) {
        let _ = write!(
            body,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            failure
                .request_index
                .map(|index| index.to_string())
                .unwrap_or_default(),
            text(&failure.failure_class),
            text(&failure.error_type),
            text(&failure.error_message)
        );
    }
    body.push_str("</tbody></table>");
    if run.failures.len() > FAILURES_SHOWN {
        let _ = write!(
            body,
            r#"<p class="muted">… and {} more: the artifact this report carries lists them all.</p>"#,
            run.failures.len() - FAILURES_SHOWN
        );
    }
}

/// Runs side by side: mismatches, the table against the baseline, and the verdicts.
fn write_comparison(body: &mut String, runs: &[&OpenedArtifact], slo: Option<&SloSpec>) {
    let mut comparison = compare(runs);
    if let Some(spec) = slo {
        comparison.add_slo(runs, &spec.slo);
    }
    let _ = write!(
        body,
        r#"<section class="comparison" data-testid="report-comparison"><h2>Comparing {} runs (baseline: {})</h2>"#,
        runs.len(),
        escape(comparison.labels.first().map_or("", String::as_str))
    );
    if comparison.mismatches.is_empty() {
        body.push_str(
            r#"<p data-testid="report-like-for-like">Same workload as far as the files tell.</p>"#,
        );
    } else {
        body.push_str(r#"<div class="warning" data-testid="report-mismatches"><p><strong>These runs did not measure the same workload:</strong> read the differences below with that in mind.</p>"#);
        if let Some(sentence) = comparison.different_traffic() {
            let _ = write!(body, "<p><strong>{}</strong></p>", escape(&sentence));
        }
        let items: Vec<String> = comparison
            .mismatches
            .iter()
            .map(|mismatch| {
                format!(
                    "{}: {} — {}",
                    mismatch.field,
                    mismatch.values.join(" vs "),
                    mismatch.explanation
                )
            })
            .collect();
        list(body, "mismatches", "report-mismatch", &items);
        body.push_str("</div>");
    }
    body.push_str(r#"<table data-testid="report-compare"><thead><tr><th>metric</th>"#);
    for label in &comparison.labels {
        let _ = write!(body, "<th>{}</th>", escape(label));
    }
    body.push_str("</tr></thead><tbody>");
    for metric in comparison
        .metrics
        .iter()
        .filter(|metric| match metric.metric {
            ComparedMetric::Distribution(_, stat) => {
                matches!(stat, MetricStat::P50 | MetricStat::P95)
            }
            _ => true,
        })
    {
        let unit = metric.metric.unit();
        let _ = write!(body, "<tr><td>{}</td>", escape(&metric.metric.label()));
        for (position, delta) in metric.runs.iter().enumerate() {
            let _ = write!(
                body,
                r#"<td class="number">{}</td>"#,
                escape(&format_delta(delta, unit, position == 0))
            );
        }
        body.push_str("</tr>");
    }
    body.push_str("</tbody></table>");
    body.push_str(r#"<div data-testid="report-verdicts"><h3>Is B really different from A?</h3>"#);
    for shown in shown_verdicts(runs) {
        let _ = write!(
            body,
            r#"<div data-testid="report-verdict-pair"><h4>{}</h4>"#,
            escape(&shown.heading())
        );
        if let Some(sentence) = &shown.verdict.workloads_differ {
            let _ = write!(body, r#"<p class="warning">{}</p>"#, escape(sentence));
        }
        body.push_str("<ul>");
        for metric in &shown.verdict.metrics {
            let _ = write!(
                body,
                r#"<li data-testid="report-verdict" data-significant="{}"{}>{}</li>"#,
                metric.is_significant(),
                if metric.is_significant() {
                    r#" class="significant""#
                } else {
                    ""
                },
                escape(&metric.sentence())
            );
        }
        body.push_str("</ul></div>");
    }
    body.push_str("</div></section>");
}

/// The capacity curves when the runs form one (a sweep's steps): throughput against TTFT p95,
/// offered against achieved, the Pareto view; with an SLO, goodput and attainment.
fn write_capacity(
    body: &mut String,
    runs: &[&OpenedArtifact],
    slo: Option<&SloSpec>,
    hover: &mut Map<String, Value>,
) {
    let series = capacity_series(runs);
    if series.is_empty() {
        return;
    }
    let theme = ChartTheme::LIGHT;
    let mut options = vec![
        (
            "capacity-ttft",
            capacity_curve(
                &series,
                MetricKind::Ttft,
                MetricStat::P95,
                CapacityAxis::Tokens,
                theme,
            ),
        ),
        (
            "capacity-e2e",
            capacity_curve(
                &series,
                MetricKind::E2e,
                MetricStat::P95,
                CapacityAxis::Tokens,
                theme,
            ),
        ),
    ];
    if series
        .iter()
        .flat_map(|s| &s.points)
        .any(|point| point.offered_rate.is_some())
    {
        options.push(("offered-achieved", offered_vs_achieved(&series, theme)));
    }
    options.push(("pareto", pareto(&series, theme)));
    let mut lines = Vec::new();
    if let Some(spec) = slo {
        let judged = capacity_series_with_slo(runs, Some(&spec.slo));
        options.push((
            "goodput",
            goodput_curve(&judged, CapacityAxis::Tokens, theme),
        ));
        options.push(("attainment", attainment_curve(&judged, spec.target, theme)));
        for curve in &judged {
            if let Some(found) = curve.capacity_at_slo(spec.target) {
                let text = found.describe(spec.target, |load| curve.describe_load(load));
                lines.push(format!("{}: {text}", curve.name));
            }
        }
    }
    let _ = write!(
        body,
        r#"<section data-testid="report-capacity"><h2>Capacity</h2><p class="muted">{}. Each point is one run, or one group of repeats at their mean.</p>"#,
        escape(&counted(series.len() as u64, "curve", "curves"))
    );
    list(body, "capacity", "report-capacity-at-slo", &lines);
    body.push_str(r#"<div class="charts">"#);
    for (id, option) in options {
        write_figure(body, &format!("capacity-{id}"), &option, hover);
    }
    body.push_str("</div></section>");
}

/// The charts in the page's sections, every metric of the latency section at once.
fn write_charts(
    body: &mut String,
    charts: &[NamedChart],
    prefix: &str,
    hover: &mut Map<String, Value>,
) {
    body.push_str(r#"<section data-testid="report-charts"><h2>Charts</h2><p class="muted">Hover over a chart for its values.</p>"#);
    for group in group_charts(charts) {
        let _ = write!(
            body,
            r#"<h3>{}</h3><p class="muted">{}</p><div class="charts">"#,
            escape(group.section.title()),
            // The page switches the latency section's metric; the report shows every one.
            escape(match group.section {
                ChartSection::Latency =>
                    "How long did requests take? Each metric's distribution and CDF.",
                section => section.question(),
            })
        );
        for (position, _) in &group.charts {
            let chart = &charts[*position];
            write_figure(
                body,
                &format!("{prefix}-{}", chart.id),
                &chart.option,
                hover,
            );
        }
        body.push_str("</div>");
    }
    body.push_str("</section>");
}

/// One chart as a `<figure>`: its title and subtitle as text, the drawing, its legend and the
/// hover tip; or its title and reason when it has nothing to draw.
fn write_figure(body: &mut String, id: &str, option: &Value, hover: &mut Map<String, Value>) {
    let text_at = |pointer: &str| {
        option
            .pointer(&format!("/title/0/{pointer}"))
            .or_else(|| option.pointer(&format!("/title/{pointer}")))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let (title, subtitle) = (text_at("text"), text_at("subtext"));
    let _ = write!(
        body,
        r#"<figure data-chart="{}" data-testid="report-chart"><figcaption><h4>{}</h4><p>{}</p></figcaption>"#,
        escape(id),
        escape(&title),
        escape(&subtitle.replace('\n', " "))
    );
    if let Some(chart) = chart_svg(option) {
        body.push_str(&chart.svg);
        if !chart.legend.is_empty() {
            body.push_str(r#"<ul class="legend">"#);
            for (name, color) in &chart.legend {
                let _ = write!(
                    body,
                    r#"<li><svg viewBox="0 0 10 10" aria-hidden="true"><rect width="10" height="10" fill="{color}"/></svg>{}</li>"#,
                    escape(name)
                );
            }
            body.push_str("</ul>");
        }
        body.push_str(r#"<div class="tip" role="status" hidden></div>"#);
        hover.insert(id.to_owned(), chart.hover);
    }
    body.push_str("</figure>");
}

fn write_footer(body: &mut String, carried: &[CarriedFile], not_carried: &[String]) {
    let bytes: usize = carried.iter().map(|file| file.text.len()).sum();
    let _ = write!(
        body,
        r#"<footer data-testid="report-carried"><p>This report carries {} ({}) exactly as strobe read them: drop it on strobe's page to load the runs again. It holds no API key, and opening it asks the network for nothing.</p>"#,
        escape(&counted(carried.len() as u64, "file", "files")),
        escape(&format_bytes(bytes))
    );
    if !not_carried.is_empty() {
        let _ = write!(
            body,
            "<p>Not carried (read from several files, so drop those files instead): {}.</p>",
            escape(&not_carried.join(", "))
        );
    }
    body.push_str("</footer>");
}

#[cfg(test)]
mod tests;
