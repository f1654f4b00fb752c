//! The `load` block of an open-loop artifact as the results show it ([`LoadView`]): the shape
//! that was asked for, how the client kept it, and the warning a reader needs before reading any
//! latency when it did not (docs/guide/load.md).

use serde_json::{Map, Value};

use crate::core::format::or_missing;
use crate::core::read::opened::text::{capped_string, CappedText};
use crate::core::read::opened::views::finite_f64;
use crate::core::schema::load::{LoadBlock, LATE_SEND_MS};

/// What an artifact's `load` block says, every field optional (a file is hostile until read).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadView {
    /// `load.mode` (`rate`).
    pub mode: Option<CappedText>,
    /// The rate asked for, req/s.
    pub rate: Option<f64>,
    /// `poisson`, `constant` or `gamma`.
    pub arrivals: Option<CappedText>,
    /// The gamma shape.
    pub burstiness: Option<f64>,
    /// The seed of the gaps.
    pub seed: Option<i64>,
    /// The cap on requests in flight.
    pub cap: Option<u64>,
    /// The ramp's length, s.
    pub ramp_s: Option<f64>,
    /// The ramp's start rate, req/s.
    pub ramp_start_rate: Option<f64>,
    /// The duration that bounded the schedule, s.
    pub duration_s: Option<f64>,
    /// Requests on the schedule.
    pub scheduled_requests: Option<u64>,
    /// Requests that went out.
    pub sent_requests: Option<u64>,
    /// The schedule's rate, req/s.
    pub offered_rate: Option<f64>,
    /// The rate requests went out at, req/s.
    pub achieved_rate: Option<f64>,
    /// Completions per second of wall time.
    pub completed_per_s: Option<f64>,
    /// The most requests in flight at once.
    pub max_in_flight: Option<u64>,
    /// Dispatch lag p50 / p95 / max, ms.
    pub lag_ms: [Option<f64>; 3],
    /// Sends more than 5 ms late.
    pub late_sends: Option<u64>,
    /// Sends the cap held back.
    pub capped_sends: Option<u64>,
    /// Whether the client kept the schedule (p95 lag within 5 ms).
    pub schedule_kept: Option<bool>,
    /// Whether the cap held any request back.
    pub throttled: Option<bool>,
}

impl LoadView {
    /// Reads a `load` object tolerantly: a missing or mistyped field is `None`.
    pub fn from_json(load: &Map<String, Value>) -> Self {
        let number = |key: &str| finite_f64(load.get(key));
        let count = |key: &str| load.get(key).and_then(Value::as_u64);
        let lag = load.get("dispatch_lag_ms").and_then(Value::as_object);
        let lag_of = |key: &str| finite_f64(lag.and_then(|lag| lag.get(key)));
        Self {
            mode: capped_string(load.get("mode")),
            rate: number("rate"),
            arrivals: capped_string(load.get("arrivals")),
            burstiness: number("burstiness"),
            seed: load.get("seed").and_then(Value::as_i64),
            cap: count("cap"),
            ramp_s: number("ramp_s"),
            ramp_start_rate: number("ramp_start_rate"),
            duration_s: number("duration_s"),
            scheduled_requests: count("scheduled_requests"),
            sent_requests: count("sent_requests"),
            offered_rate: number("offered_rate"),
            achieved_rate: number("achieved_rate"),
            completed_per_s: number("completed_per_s"),
            max_in_flight: count("max_in_flight"),
            lag_ms: [lag_of("p50"), lag_of("p95"), lag_of("max")],
            late_sends: count("late_sends"),
            capped_sends: count("capped_sends"),
            schedule_kept: load.get("schedule_kept").and_then(Value::as_bool),
            throttled: load.get("throttled").and_then(Value::as_bool),
        }
    }

    /// The view of a `load` block strobe itself just wrote.
    pub fn of_block(load: &LoadBlock) -> Self {
        match serde_json::to_value(load) {
            Ok(Value::Object(map)) => Self::from_json(&map),
            _ => Self::default(),
        }
    }

    /// What to read before any latency, when the client did not deliver the load it was asked
    /// for: it fell behind its schedule, or the cap held requests back. `None` when it did.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.schedule_kept == Some(false) {
            warnings.push(format!(
                "The client did not keep the schedule: requests went out {} ms late at p95 \
                 (more than {LATE_SEND_MS} ms), so the server got a later, lighter load than the \
                 {} offered; read these latencies as that load's. A lower rate, a pool or the \
                 worker thread may keep it.",
                show(self.lag_ms[1]),
                rate_text(self.offered_rate),
            ));
        }
        if self.throttled == Some(true) {
            warnings.push(format!(
                "The concurrency cap ({}) held back {} of {} requests: they waited for a free \
                 slot, so the server got a throttled load, not the {} asked for. Raise \
                 concurrency or lower the rate to measure the rate itself.",
                self.cap.map_or("?".to_owned(), |cap| cap.to_string()),
                self.capped_sends.unwrap_or(0),
                self.sent_requests.unwrap_or(0),
                rate_text(self.rate),
            ));
        }
        warnings
    }

    /// The load in sentences: the shape, offered against achieved, and the dispatch lag.
    pub fn notes(&self) -> Vec<String> {
        let mut shape = format!(
            "Open loop at {}, {} arrivals",
            rate_text(self.rate),
            self.arrivals
                .as_ref()
                .map_or("unknown".to_owned(), ToString::to_string),
        );
        if let Some(burstiness) = self.burstiness {
            shape.push_str(&format!(" (burstiness {burstiness})"));
        }
        if let Some(seed) = self.seed {
            shape.push_str(&format!(", seed {seed}"));
        }
        if let Some(cap) = self.cap {
            shape.push_str(&format!(", at most {cap} in flight"));
        }
        if let (Some(ramp_s), Some(start)) =
            (self.ramp_s.filter(|&s| s > 0.0), self.ramp_start_rate)
        {
            shape.push_str(&format!(
                ", ramped from {} over {ramp_s} s",
                rate_text(Some(start))
            ));
        }
        if let Some(duration) = self.duration_s {
            shape.push_str(&format!(", scheduled for {duration} s"));
        }
        shape.push('.');
        let delivered = format!(
            "Offered {}, achieved {} ({} of {} requests sent); {} completed a second; at most {} \
             in flight.",
            rate_text(self.offered_rate),
            rate_text(self.achieved_rate),
            self.sent_requests.unwrap_or(0),
            self.scheduled_requests.unwrap_or(0),
            show(self.completed_per_s),
            self.max_in_flight
                .map_or("?".to_owned(), |most| most.to_string()),
        );
        let lag = format!(
            "Dispatch lag (sent − due): p50 {} / p95 {} / max {} ms; {} sends more than \
             {LATE_SEND_MS} ms late.",
            show(self.lag_ms[0]),
            show(self.lag_ms[1]),
            show(self.lag_ms[2]),
            self.late_sends.unwrap_or(0),
        );
        vec![shape, delivered, lag]
    }
}

/// What an artifact's `sweep` block says: which sweep and step it was.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepView {
    /// The sweep's id, shared by its steps.
    pub id: Option<CappedText>,
    /// From 0.
    pub step_index: Option<u64>,
    /// The steps the sweep planned.
    pub step_count: Option<u64>,
    /// `concurrency` or `rate`.
    pub variable: Option<CappedText>,
    /// This step's value.
    pub value: Option<f64>,
    /// The `sweep` setting it was started with.
    pub spec: Option<CappedText>,
    /// Why the sweep stopped at this step, if it did.
    pub stop_reason: Option<CappedText>,
}

impl SweepView {
    /// Reads a `sweep` object tolerantly.
    pub fn from_json(sweep: &Map<String, Value>) -> Self {
        Self {
            id: capped_string(sweep.get("id")),
            step_index: sweep.get("step_index").and_then(Value::as_u64),
            step_count: sweep.get("step_count").and_then(Value::as_u64),
            variable: capped_string(sweep.get("variable")),
            value: finite_f64(sweep.get("value")),
            spec: capped_string(sweep.get("spec")),
            stop_reason: capped_string(sweep.get("stop_reason")),
        }
    }

    /// "Step 2 of 4 of sweep-… (concurrency 8)", and why it stopped there.
    pub fn note(&self) -> String {
        let mut note = format!(
            "Step {} of {} of {} ({} {}).",
            self.step_index
                .map_or("?".to_owned(), |index| (index + 1).to_string()),
            self.step_count
                .map_or("?".to_owned(), |count| count.to_string()),
            self.id
                .as_ref()
                .map_or("a sweep".to_owned(), ToString::to_string),
            self.variable
                .as_ref()
                .map_or("value".to_owned(), ToString::to_string),
            self.value.map_or("?".to_owned(), |value| value.to_string()),
        );
        if let Some(reason) = &self.stop_reason {
            note.push_str(&format!(" The sweep stopped after this step: {reason}."));
        }
        note
    }
}

fn show(value: Option<f64>) -> String {
    or_missing(value.map(|value| format!("{value:.2}")))
}

fn rate_text(rate: Option<f64>) -> String {
    rate.map_or("an unknown rate".to_owned(), |rate| {
        format!("{rate:.2} req/s")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view(value: Value) -> LoadView {
        LoadView::from_json(value.as_object().expect("object"))
    }

    #[test]
    fn a_sweep_block_reads_as_its_step_and_why_it_stopped() {
        let sweep = |value: Value| SweepView::from_json(value.as_object().expect("object"));
        let step = sweep(json!({
            "id": "sweep-benchmark-1", "step_index": 1, "step_count": 4,
            "variable": "concurrency", "value": 2, "spec": "concurrency:1,2,4,8",
            "stop_reason": "saturated"
        }));
        assert_eq!(
            step.note(),
            "Step 2 of 4 of sweep-benchmark-1 (concurrency 2). The sweep stopped after this \
             step: saturated."
        );
        // Mistyped fields read as unknown, not as errors.
        let odd = sweep(json!({ "step_index": "one", "value": "many", "stop_reason": null }));
        assert_eq!(odd.note(), "Step ? of ? of a sweep (value ?).");
    }

    #[test]
    fn a_kept_schedule_reads_as_notes_without_warnings() {
        let load = view(json!({
            "mode": "rate", "rate": 20.0, "arrivals": "poisson", "burstiness": null, "seed": 7,
            "cap": 16, "ramp_s": 0.0, "ramp_start_rate": null, "duration_s": null,
            "scheduled_requests": 40, "sent_requests": 40, "offered_rate": 20.31,
            "achieved_rate": 20.12, "completed_per_s": 18.5, "max_in_flight": 6,
            "dispatch_lag_ms": {"p50": 0.31, "p95": 1.2, "max": 3.9},
            "late_sends": 0, "capped_sends": 0, "schedule_kept": true, "throttled": false
        }));
        assert!(load.warnings().is_empty());
        assert_eq!(
            load.notes(),
            [
                "Open loop at 20.00 req/s, poisson arrivals, seed 7, at most 16 in flight.",
                "Offered 20.31 req/s, achieved 20.12 req/s (40 of 40 requests sent); 18.50 \
                 completed a second; at most 6 in flight.",
                "Dispatch lag (sent − due): p50 0.31 / p95 1.20 / max 3.90 ms; 0 sends more \
                 than 5 ms late."
            ]
        );
    }

    #[test]
    fn a_missed_schedule_and_a_full_cap_are_said_first() {
        let load = view(json!({
            "rate": 500.0, "offered_rate": 498.0, "cap": 4, "sent_requests": 100,
            "capped_sends": 37, "dispatch_lag_ms": {"p95": 41.0},
            "schedule_kept": false, "throttled": true
        }));
        let warnings = load.warnings();
        assert_eq!(warnings.len(), 2);
        assert!(warnings[0].contains("41.00 ms late at p95"), "{warnings:?}");
        assert!(
            warnings[1].contains("cap (4) held back 37 of 100"),
            "{warnings:?}"
        );
    }

    #[test]
    fn hostile_or_missing_fields_are_none_not_errors() {
        let load = view(json!({"rate": "fast", "arrivals": "<b>x</b>", "cap": -1, "seed": 1.5}));
        assert_eq!(load.rate, None);
        assert_eq!(load.cap, None);
        assert_eq!(load.seed, None);
        assert_eq!(
            load.arrivals.map(|text| text.to_string()),
            Some("<b>x</b>".to_owned())
        );
        assert!(view(json!({})).warnings().is_empty());
    }
}
