//! The `server_metrics` block strobe adds to a run that scraped the server's `/metrics`
//! (docs/guide/telemetry.md): a reader that charts or compares the server's series must be able to
//! trust that the samples sit in order on the run's clock, that every number is one, and that
//! the file names its source without a secret in it. Every v1 reader that does not know the
//! key ignores it; one that reads it checks it here (rule `server-metrics-block`).

use serde_json::{Map, Value};

use super::Checker;
use crate::core::read::validate::report::RuleId;
use crate::core::read::validate::values::{as_int, as_number, describe, index_path, show_opt};
use crate::core::schema::server_metrics::INTERVAL_MS;
use crate::core::telemetry::scrape::credential_in_url;

/// Longest `source` accepted.
const MAX_SOURCE_CHARS: usize = 2048;
/// Longest `family` accepted.
const MAX_FAMILY_CHARS: usize = 64;
/// Broken samples reported one by one; past these, one message counts the rest.
const MAX_SAMPLE_REPORTS: usize = 10;

const BASE: &str = "$.server_metrics";

impl Checker {
    pub(super) fn check_server_metrics(&mut self, artifact: &Map<String, Value>) {
        let Some(block) = artifact.get("server_metrics") else {
            return;
        };
        let Some(block) = block.as_object() else {
            self.push(
                BASE,
                RuleId::ServerMetricsBlock,
                format!(
                    "server_metrics must be an object {{source, interval_ms, family, samples}}, \
                     found {}; remove the key if the server's metrics were not scraped",
                    describe(block)
                ),
            );
            return;
        };
        self.check_metrics_source(block.get("source"));
        let interval = block.get("interval_ms").and_then(as_int);
        if !interval.is_some_and(|interval| {
            (i128::from(*INTERVAL_MS.start())..=i128::from(*INTERVAL_MS.end())).contains(&interval)
        }) {
            self.push(
                format!("{BASE}.interval_ms"),
                RuleId::ServerMetricsBlock,
                format!(
                    "server_metrics.interval_ms must be an integer from {} to {} (ms between \
                     scrapes), found {}",
                    INTERVAL_MS.start(),
                    INTERVAL_MS.end(),
                    show_opt(block.get("interval_ms"))
                ),
            );
        }
        match block.get("family") {
            Some(Value::String(family))
                if !family.is_empty() && family.chars().count() <= MAX_FAMILY_CHARS => {}
            other => self.push(
                format!("{BASE}.family"),
                RuleId::ServerMetricsBlock,
                format!(
                    "server_metrics.family must name the engine whose metric names were read \
                     (vllm, sglang, llamacpp, tgi or unknown), found {}",
                    show_opt(other)
                ),
            ),
        }
        match block.get("samples") {
            Some(Value::Array(samples)) => self.check_metric_samples(samples),
            other => self.push(
                format!("{BASE}.samples"),
                RuleId::ServerMetricsBlock,
                format!(
                    "server_metrics.samples must be an array of {{t_ms, latency_ms, values}}, \
                     found {}",
                    show_opt(other)
                ),
            ),
        }
        match block.get("summary") {
            None | Some(Value::Null) => {}
            Some(Value::Object(summary)) => self.check_metrics_summary(summary),
            Some(other) => self.push(
                format!("{BASE}.summary"),
                RuleId::ServerMetricsBlock,
                format!(
                    "server_metrics.summary must be an object, found {}",
                    describe(other)
                ),
            ),
        }
    }

    fn check_metrics_source(&mut self, source: Option<&Value>) {
        let path = format!("{BASE}.source");
        let Some(Value::String(url)) = source else {
            self.push(
                path,
                RuleId::ServerMetricsBlock,
                format!(
                    "server_metrics.source must be the URL scraped, found {}",
                    show_opt(source)
                ),
            );
            return;
        };
        let problem = if url.chars().count() > MAX_SOURCE_CHARS {
            Some(format!("is longer than {MAX_SOURCE_CHARS} characters"))
        } else if !(url.starts_with("http://") || url.starts_with("https://")) {
            Some("is not an http:// or https:// URL".to_owned())
        } else {
            credential_in_url(url).map(|place| {
                format!(
                    "carries a credential ({place}); write the URL without it, as a shared \
                     file must not hold a secret"
                )
            })
        };
        if let Some(problem) = problem {
            // The URL itself is not repeated: it may hold the very secret reported.
            self.push(
                path,
                RuleId::ServerMetricsBlock,
                format!("server_metrics.source {problem}"),
            );
        }
    }

    fn check_metric_samples(&mut self, samples: &[Value]) {
        let mut reported = 0usize;
        let mut unreported = 0usize;
        let mut previous_t: Option<f64> = None;
        for (index, sample) in samples.iter().enumerate() {
            let path = index_path(&format!("{BASE}.samples"), index);
            let problem = sample_problem(sample, previous_t);
            if let Some(t_ms) = sample.get("t_ms").and_then(as_number) {
                previous_t = Some(previous_t.map_or(t_ms, |previous| previous.max(t_ms)));
            }
            let Some((field, message)) = problem else {
                continue;
            };
            if reported == MAX_SAMPLE_REPORTS {
                unreported += 1;
                continue;
            }
            reported += 1;
            let path = match field {
                Some(field) => format!("{path}.{field}"),
                None => path,
            };
            self.push(path, RuleId::ServerMetricsBlock, message);
        }
        if unreported > 0 {
            self.push(
                format!("{BASE}.samples"),
                RuleId::ServerMetricsBlock,
                format!("{unreported} more samples are broken like the ones above"),
            );
        }
    }

    fn check_metrics_summary(&mut self, summary: &Map<String, Value>) {
        for (key, value) in summary {
            if !numbers_are_sane(value) {
                self.push(
                    format!("{BASE}.summary.{key}"),
                    RuleId::ServerMetricsBlock,
                    format!(
                        "server_metrics.summary.{key} must hold only numbers, nulls and \
                         objects of them, found {}",
                        describe(value)
                    ),
                );
            }
        }
        let gauges = summary.get("gauges").and_then(Value::as_object);
        for (series, gauge) in gauges.into_iter().flatten() {
            let number = |key: &str| gauge.get(key).and_then(as_number);
            let ordered = match (number("min"), number("mean"), number("max")) {
                (Some(min), Some(mean), Some(max)) => min <= mean && mean <= max,
                _ => false,
            };
            if !ordered {
                self.push(
                    format!("{BASE}.summary.gauges.{series}"),
                    RuleId::ServerMetricsBlock,
                    "a gauge's summary needs numbers min ≤ mean ≤ max".to_owned(),
                );
            }
        }
        let counters = summary.get("counters").and_then(Value::as_object);
        for (series, counter) in counters.into_iter().flatten() {
            if !counter
                .get("delta")
                .and_then(as_number)
                .is_some_and(|delta| delta >= 0.0)
            {
                self.push(
                    format!("{BASE}.summary.counters.{series}.delta"),
                    RuleId::ServerMetricsBlock,
                    "a counter's delta must be a number ≥ 0 (a restart counts as growth from \
                     zero, never as a fall)"
                        .to_owned(),
                );
            }
        }
    }
}

/// What is wrong with one sample: the field at fault (`None`: the sample) and the message.
fn sample_problem(
    sample: &Value,
    previous_t: Option<f64>,
) -> Option<(Option<&'static str>, String)> {
    let Some(sample) = sample.as_object() else {
        return Some((
            None,
            format!(
                "a sample must be an object {{t_ms, latency_ms, values}}, found {}",
                describe(sample)
            ),
        ));
    };
    let Some(t_ms) = sample.get("t_ms").and_then(as_number) else {
        return Some((
            Some("t_ms"),
            format!(
                "t_ms must be a number (ms on the run's clock), found {}",
                show_opt(sample.get("t_ms"))
            ),
        ));
    };
    if let Some(previous) = previous_t.filter(|previous| t_ms < *previous) {
        return Some((
            Some("t_ms"),
            format!(
                "samples must be in the order they were sent: t_ms {t_ms} comes after {previous}"
            ),
        ));
    }
    if !sample
        .get("latency_ms")
        .and_then(as_number)
        .is_some_and(|latency| latency >= 0.0)
    {
        return Some((
            Some("latency_ms"),
            format!(
                "latency_ms must be a number ≥ 0, found {}",
                show_opt(sample.get("latency_ms"))
            ),
        ));
    }
    match sample.get("values") {
        Some(Value::Object(values)) => values.iter().find_map(|(name, value)| {
            let bad_name = name.is_empty();
            (bad_name || as_number(value).is_none()).then(|| {
                (
                    Some("values"),
                    format!(
                        "values must map metric names to numbers; {} is {}",
                        Value::String(name.chars().take(80).collect()),
                        describe(value)
                    ),
                )
            })
        }),
        other => Some((
            Some("values"),
            format!(
                "values must be an object of metric names to numbers, found {}",
                show_opt(other)
            ),
        )),
    }
}

/// Numbers, nulls, and arrays or objects of them, all the way down (strings nowhere: the
/// summary holds no text).
fn numbers_are_sane(value: &Value) -> bool {
    match value {
        Value::Null | Value::Number(_) => true,
        Value::Object(map) => map.values().all(numbers_are_sane),
        Value::Array(items) => items.iter().all(numbers_are_sane),
        Value::Bool(_) | Value::String(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::core::read::validate::report::RuleId;
    use crate::core::read::validate::validate_artifact;
    use crate::core::telemetry::scrape::credential_in_url;

    fn block() -> Value {
        json!({
            "source": "http://127.0.0.1:8000/metrics",
            "interval_ms": 1000,
            "family": "vllm",
            "samples": [
                {"t_ms": -12.5, "latency_ms": 1.25, "values": {"vllm:num_requests_running": 0}},
                {"t_ms": 987.5, "latency_ms": 2.0, "values": {"vllm:num_requests_running": 4}}
            ],
            "summary": {
                "window_start_ms": 0.0, "window_end_ms": 900.0,
                "from_t_ms": -12.5, "to_t_ms": 987.5,
                "gauges": {"running": {"min": 4, "mean": 4, "max": 4, "samples": 1}},
                "counters": {"prompt_tokens": {"delta": 10, "rate_per_s": 10.0, "resets": 0}},
                "prefix_cache_hit_rate": null,
                "histograms": {}
            }
        })
    }

    /// The `server-metrics-block` violations of the reference artifact with the block set.
    fn violations(block: Option<Value>) -> Vec<(String, String)> {
        let text = include_str!("../../../../../tests/fixtures/reference-artifact.json");
        let mut artifact: Value = serde_json::from_str(text).expect("the reference artifact");
        if let Some(block) = block {
            artifact["server_metrics"] = block;
        }
        validate_artifact(&artifact)
            .violations
            .into_iter()
            .filter(|violation| violation.rule == RuleId::ServerMetricsBlock)
            .map(|violation| (violation.path, violation.message))
            .collect()
    }

    fn paths(block: Value) -> Vec<String> {
        violations(Some(block))
            .into_iter()
            .map(|(path, _)| path)
            .collect()
    }

    #[test]
    fn a_well_formed_block_or_none_passes() {
        assert!(violations(None).is_empty());
        assert!(
            violations(Some(block())).is_empty(),
            "{:?}",
            violations(Some(block()))
        );
        let mut no_summary = block();
        no_summary["summary"] = Value::Null;
        no_summary["samples"] = json!([]);
        assert!(violations(Some(no_summary)).is_empty());
    }

    #[test]
    fn each_broken_field_is_named() {
        assert_eq!(paths(json!("yes")), ["$.server_metrics"]);
        let mut broken = block();
        broken["interval_ms"] = json!(50);
        broken["family"] = json!("");
        broken["summary"] = json!([1]);
        assert_eq!(
            paths(broken),
            [
                "$.server_metrics.interval_ms",
                "$.server_metrics.family",
                "$.server_metrics.summary"
            ]
        );
        let mut no_samples = block();
        no_samples["samples"] = json!({"t_ms": 1});
        no_samples["interval_ms"] = json!(60_001);
        assert_eq!(
            paths(no_samples),
            ["$.server_metrics.interval_ms", "$.server_metrics.samples"]
        );
    }

    #[test]
    fn samples_go_forward_in_time_with_numbers_only() {
        let mut broken = block();
        broken["samples"] = json!([
            {"t_ms": 100, "latency_ms": 1, "values": {}},
            {"t_ms": 50, "latency_ms": 1, "values": {}},
            {"t_ms": "soon", "latency_ms": 1, "values": {}},
            {"t_ms": 200, "latency_ms": -1, "values": {}},
            {"t_ms": 300, "latency_ms": 1, "values": {"a": "3"}},
            {"t_ms": 400, "latency_ms": 1, "values": [1]},
            7,
            {"t_ms": 400, "latency_ms": 0, "values": {"a": 1}}
        ]);
        assert_eq!(
            paths(broken),
            [
                "$.server_metrics.samples[1].t_ms",
                "$.server_metrics.samples[2].t_ms",
                "$.server_metrics.samples[3].latency_ms",
                "$.server_metrics.samples[4].values",
                "$.server_metrics.samples[5].values",
                "$.server_metrics.samples[6]",
            ]
        );
        // A flood of broken samples gives ten messages and a count.
        let mut flood = block();
        flood["samples"] = Value::Array(vec![json!(1); 500]);
        let found = violations(Some(flood));
        assert_eq!(found.len(), 11);
        assert!(
            found[10].1.starts_with("490 more samples"),
            "{}",
            found[10].1
        );
    }

    #[test]
    fn the_summary_holds_ordered_numbers() {
        let mut broken = block();
        broken["summary"]["gauges"]["running"]["min"] = json!(9);
        broken["summary"]["counters"]["prompt_tokens"]["delta"] = json!(-3);
        broken["summary"]["note"] = json!("text");
        assert_eq!(
            paths(broken),
            [
                "$.server_metrics.summary.note",
                "$.server_metrics.summary.gauges.running",
                "$.server_metrics.summary.counters.prompt_tokens.delta",
            ]
        );
    }

    #[test]
    fn a_source_with_a_credential_is_refused_without_repeating_it() {
        for url in [
            "http://admin:hunter2@gpu-box:8000/metrics",
            "https://token@gpu-box/metrics",
            "http://gpu-box:8000/metrics?api_key=hunter2",
            "http://gpu-box:8000/metrics?x=1&Access_Token=hunter2#top",
        ] {
            let mut leaky = block();
            leaky["source"] = json!(url);
            let found = violations(Some(leaky));
            assert_eq!(found.len(), 1, "{url}");
            assert_eq!(found[0].0, "$.server_metrics.source");
            assert!(!found[0].1.contains("hunter2"), "{}", found[0].1);
            assert!(found[0].1.contains("credential"), "{}", found[0].1);
        }
        for url in ["ftp://gpu-box/metrics", "gpu-box:8000/metrics"] {
            let mut odd = block();
            odd["source"] = json!(url);
            assert_eq!(paths(odd), ["$.server_metrics.source"], "{url}");
        }
        assert_eq!(credential_in_url("http://gpu-box:8000/metrics"), None);
        assert_eq!(credential_in_url("http://h/metrics?name=a@b"), None);
        assert_eq!(credential_in_url("http://[::1]:8000/metrics#@"), None);
    }
}
