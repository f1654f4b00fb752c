//! What the results page says about a run another load engine's workers carried out from
//! strobe's plan (`client.distributed`, docs/operate/locust.md): who sent it, from how many
//! processes and hosts, and which clock its timeline is on. Every string is capped data.

use serde_json::{Map, Value};

use crate::core::format::{counted, format_duration_ms};
use crate::core::read::opened::text::{capped_string, CappedText};
use crate::core::read::opened::views::finite_f64;

/// Most warnings of a file shown; a hostile file cannot fill the page with them.
pub const WARNINGS_SHOWN: usize = 8;

/// `client.distributed` as read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DistributedView {
    /// `distributed.engine`, e.g. `locust`.
    pub engine: Option<CappedText>,
    /// `distributed.engine_version`.
    pub engine_version: Option<CappedText>,
    /// `distributed.python_version`.
    pub python_version: Option<CappedText>,
    /// `distributed.workers`.
    pub workers: Option<u64>,
    /// `distributed.hosts`.
    pub hosts: Vec<CappedText>,
    /// `distributed.clock_domain`.
    pub clock_domain: Option<CappedText>,
    /// `distributed.clock_offset_estimate_ms`.
    pub clock_offset_estimate_ms: Option<f64>,
    /// `distributed.clock_offset_uncertainty_ms`.
    pub clock_offset_uncertainty_ms: Option<f64>,
    /// `distributed.warnings`, the first [`WARNINGS_SHOWN`].
    pub warnings: Vec<CappedText>,
}

impl DistributedView {
    pub(crate) fn from_json(block: &Map<String, Value>) -> Self {
        let strings = |key: &str, most: usize| -> Vec<CappedText> {
            block
                .get(key)
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|item| capped_string(Some(item)))
                        .take(most)
                        .collect()
                })
                .unwrap_or_default()
        };
        Self {
            engine: capped_string(block.get("engine")),
            engine_version: capped_string(block.get("engine_version")),
            python_version: capped_string(block.get("python_version")),
            workers: block.get("workers").and_then(Value::as_u64),
            hosts: strings("hosts", 64),
            clock_domain: capped_string(block.get("clock_domain")),
            clock_offset_estimate_ms: finite_f64(block.get("clock_offset_estimate_ms")),
            clock_offset_uncertainty_ms: finite_f64(block.get("clock_offset_uncertainty_ms")),
            warnings: strings("warnings", WARNINGS_SHOWN),
        }
    }

    /// The engine and its version, e.g. `Locust 2.47.0`.
    pub fn engine_and_version(&self) -> String {
        match (&self.engine, &self.engine_version) {
            (Some(engine), Some(version)) => format!("{} {version}", engine_name(engine.as_str())),
            (Some(engine), None) => engine_name(engine.as_str()),
            _ => "another load engine".to_owned(),
        }
    }

    /// One sentence each: who sent the requests from where, which clock the timeline is on and
    /// how well the workers' clocks agree, then the file's own warnings.
    pub fn notes(&self) -> Vec<String> {
        let engine = self.engine_and_version();
        let python = self
            .python_version
            .as_ref()
            .map(|version| format!(" (Python {version})"))
            .unwrap_or_default();
        let workers = self
            .workers
            .map(|count| counted(count, "worker process", "worker processes"))
            .unwrap_or_else(|| "workers".to_owned());
        let hosts = match self.hosts.as_slice() {
            [] => String::new(),
            [only] => format!(" on 1 host ({only})"),
            many => format!(" on {}", counted(many.len() as u64, "host", "hosts")),
        };
        let mut notes = vec![format!(
            "Sent by {engine}{python} from {workers}{hosts}, from strobe's plan; each request's \
             TTFO, TTFT, TPOT and E2E are read on its worker's own monotonic clock."
        )];
        if let Some(domain) = &self.clock_domain {
            let agreement = match (
                self.clock_offset_estimate_ms,
                self.clock_offset_uncertainty_ms,
            ) {
                (Some(estimate), Some(uncertainty)) => format!(
                    "; the workers' clocks differ by up to {} (known to ±{})",
                    format_duration_ms(estimate),
                    format_duration_ms(uncertainty)
                ),
                (Some(estimate), None) => {
                    format!(
                        "; the workers' clocks differ by up to {}",
                        format_duration_ms(estimate)
                    )
                }
                _ => String::new(),
            };
            notes.push(format!("The timeline is on {domain}{agreement}."));
        }
        notes.extend(self.warnings.iter().map(ToString::to_string));
        notes
    }
}

fn engine_name(engine: &str) -> String {
    match engine {
        "locust" => "Locust".to_owned(),
        other => other.to_owned(),
    }
}
