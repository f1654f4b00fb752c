//! §9 *Distributions*: the ordered statistics of each family, and the context within the
//! model's window.

use serde_json::{Map, Value};

use super::Checker;
use super::DISTRIBUTION_FAMILIES;
use crate::core::read::validate::checks::ORDERED_STATISTICS;
use crate::core::read::validate::report::RuleId;
use crate::core::read::validate::values::{as_int, as_number, child_path, describe, present};

impl Checker {
    pub(super) fn check_distributions(&mut self, artifact: &Map<String, Value>) {
        let Some(metrics) = artifact.get("metrics").and_then(Value::as_object) else {
            return;
        };
        for (family, suffix) in DISTRIBUTION_FAMILIES {
            let read = |checker: &mut Checker, statistic: &str| -> Option<(String, f64)> {
                let key = format!("{family}_{statistic}{suffix}");
                let value = present(metrics, &key)?;
                let path = child_path("$.metrics", &key);
                match as_number(value) {
                    Some(number) if number >= 0.0 => Some((key, number)),
                    _ => {
                        checker.push(
                            path,
                            RuleId::DistributionValue,
                            format!(
                                "{key} must be a finite number ≥ 0 or null, found {}",
                                describe(value)
                            ),
                        );
                        None
                    }
                }
            };
            let mut previous: Option<(String, f64)> = None;
            let mut chain: Vec<(String, f64)> = Vec::new();
            for statistic in ORDERED_STATISTICS {
                if let Some((key, number)) = read(self, statistic) {
                    if let Some((previous_key, previous_number)) = &previous {
                        if number < *previous_number {
                            self.push(
                                child_path("$.metrics", &key),
                                RuleId::DistributionOrder,
                                format!("{key} ({number}) is below {previous_key} ({previous_number}); percentiles must not decrease from min to max"),
                            );
                        }
                    }
                    chain.push((key.clone(), number));
                    previous = Some((key, number));
                }
            }
            read(self, "stddev");
            if let Some((mean_key, mean)) = read(self, "mean") {
                let min = chain
                    .iter()
                    .find(|(key, _)| key == &format!("{family}_min{suffix}"));
                let max = chain
                    .iter()
                    .find(|(key, _)| key == &format!("{family}_max{suffix}"));
                let below = min.filter(|(_, min)| mean < *min);
                let above = max.filter(|(_, max)| mean > *max);
                if let Some((key, bound)) = below.or(above) {
                    self.push(
                        child_path("$.metrics", &mean_key),
                        RuleId::DistributionOrder,
                        format!("{mean_key} ({mean}) lies outside [min, max]: it is on the wrong side of {key} ({bound})"),
                    );
                }
            }
        }
    }

    pub(super) fn check_context_within_max(&mut self, artifact: &Map<String, Value>) {
        let context = artifact.get("context_tokens").and_then(as_int);
        let max = artifact.get("max_context_tokens").and_then(as_int);
        if let (Some(context), Some(max)) = (context, max) {
            if context > max {
                self.push(
                    "$.context_tokens",
                    RuleId::ContextWithinMax,
                    format!("context_tokens ({context}) exceeds max_context_tokens ({max})"),
                );
            }
        }
    }
}
