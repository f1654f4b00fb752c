//! §9 *Time*: ISO labels, the nanosecond fields, wall time, and the identifier patterns.

use serde_json::{Map, Value};

use super::Checker;
use crate::core::python::time::parse_iso8601;
use crate::core::read::validate::report::{RuleId, WALL_TOLERANCE_MIN_MS, WALL_TOLERANCE_RELATIVE};
use crate::core::read::validate::values::{
    as_int, as_number, describe, is_clock_domain_id, is_configuration_fingerprint, present, show,
    show_opt,
};

impl Checker {
    pub(super) fn check_time(&mut self, artifact: &Map<String, Value>) {
        let started_ns = present(artifact, "started_at_unix_ns");
        let finished_ns = present(artifact, "finished_at_unix_ns");
        let has_ns = started_ns.is_some() || finished_ns.is_some();
        let mut labels: [Option<i64>; 2] = [None, None];
        for (slot, key) in ["started_at", "finished_at"].into_iter().enumerate() {
            let path = format!("$.{key}");
            match present(artifact, key) {
                None => {
                    if has_ns {
                        self.push(
                            path,
                            RuleId::IsoTimestamp,
                            format!(
                                "{key} is {}; it is required next to the nanosecond fields",
                                show_opt(artifact.get(key))
                            ),
                        );
                    }
                }
                Some(Value::String(label)) => match parse_iso8601(label) {
                    Ok(parsed) => match parsed.unix_seconds() {
                        None => self.push(
                            path,
                            RuleId::IsoTimestamp,
                            format!(
                                "{key} {} has no timezone; write it in UTC with a trailing Z",
                                show(&Value::String(label.clone()))
                            ),
                        ),
                        Some(_) if parsed.microsecond != 0 => self.push(
                            path,
                            RuleId::IsoTimestamp,
                            format!(
                                "{key} {} has {} microseconds; ISO labels are whole seconds",
                                show(&Value::String(label.clone())),
                                parsed.microsecond
                            ),
                        ),
                        Some(seconds) => labels[slot] = Some(seconds),
                    },
                    Err(error) => self.push(path, RuleId::IsoTimestamp, format!("{key}: {error}")),
                },
                Some(other) => self.push(
                    path,
                    RuleId::IsoTimestamp,
                    format!(
                        "{key} must be an ISO-8601 string, found {}",
                        describe(other)
                    ),
                ),
            }
        }
        if !has_ns {
            return;
        }
        let read_ns = |checker: &mut Checker, key: &str, value: Option<&Value>| -> Option<i128> {
            match value.and_then(as_int) {
                Some(ns) if ns >= 0 => Some(ns),
                _ => {
                    checker.push(
                        format!("$.{key}"),
                        RuleId::NanosecondFields,
                        format!(
                            "{key} is {}; when either nanosecond field exists both must be integers ≥ 0",
                            show_opt(value)
                        ),
                    );
                    None
                }
            }
        };
        let started = read_ns(self, "started_at_unix_ns", started_ns);
        let finished = read_ns(self, "finished_at_unix_ns", finished_ns);
        let (Some(started), Some(finished)) = (started, finished) else {
            return;
        };
        if finished < started {
            self.push(
                "$.finished_at_unix_ns",
                RuleId::NanosecondFields,
                format!(
                    "finished_at_unix_ns ({finished}) is before started_at_unix_ns ({started})"
                ),
            );
            return;
        }
        for ((key, ns), label) in [("started_at", started), ("finished_at", finished)]
            .into_iter()
            .zip(labels)
        {
            if let Some(label_seconds) = label {
                let ns_seconds = ns.div_euclid(1_000_000_000);
                if ns_seconds != i128::from(label_seconds) {
                    self.push(
                        format!("$.{key}_unix_ns"),
                        RuleId::NanosecondIsoSecond,
                        format!(
                            "{key}_unix_ns {ns} falls in Unix second {ns_seconds}, but {key} {} is second {label_seconds}",
                            show_opt(artifact.get(key))
                        ),
                    );
                }
            }
        }
        // A negative wall is already a `wall-clock-ms` violation; comparing it would only echo it.
        let wall = artifact
            .get("wall_clock_ms")
            .and_then(as_number)
            .filter(|wall| *wall >= 0.0);
        if let Some(wall) = wall {
            // Python: (finished − started) / 1_000_000.0 converts the int difference to a float.
            let interval_ms = (finished - started) as f64 / 1_000_000.0;
            let tolerance = WALL_TOLERANCE_MIN_MS.max(wall * WALL_TOLERANCE_RELATIVE);
            let delta = (interval_ms - wall).abs();
            if delta > tolerance {
                self.push(
                    "$.wall_clock_ms",
                    RuleId::WallClockReconciliation,
                    format!(
                        "the nanosecond interval is {interval_ms} ms but wall_clock_ms is {wall}: they differ by {delta} ms, more than the tolerance of {tolerance} ms"
                    ),
                );
            }
        }
    }

    pub(super) fn check_identifiers(&mut self, artifact: &Map<String, Value>) {
        if let Some(value) = present(artifact, "clock_domain_id") {
            let ok = value.as_str().is_some_and(is_clock_domain_id);
            if !ok {
                self.push(
                    "$.clock_domain_id",
                    RuleId::ClockDomainId,
                    format!(
                        "clock_domain_id must match [A-Za-z0-9._-]{{1,64}}, found {}",
                        show(value)
                    ),
                );
            }
        }
        if let Some(value) = present(artifact, "configuration_fingerprint") {
            let ok = value.as_str().is_some_and(is_configuration_fingerprint);
            if !ok {
                self.push(
                    "$.configuration_fingerprint",
                    RuleId::ConfigurationFingerprint,
                    format!("configuration_fingerprint must be \"sha256:\" followed by 64 lowercase hex digits, found {}", show(value)),
                );
            }
        }
    }
}
