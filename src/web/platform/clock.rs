//! The browser's clocks: `performance.now()` for every measured interval, and
//! `performance.timeOrigin + performance.now()` for the artifact's wall-clock fields.
//!
//! Only this module reads a clock (and the browser's Resource Timing entries, which are stamped
//! on the same clock); the core receives plain millisecond timestamps.

use wasm_bindgen::JsCast;
use web_sys::{Performance, PerformanceResourceTiming};

use crate::core::observe::transport::ResourceTimingEntry;

use crate::web::platform::scope;

/// A handle on the page's monotonic clock.
#[derive(Clone)]
pub struct Clock {
    performance: Performance,
}

impl Clock {
    /// This thread's clock (the page's or the worker's), or `None` where the browser exposes
    /// no `performance` object.
    pub fn of_this_thread() -> Option<Self> {
        let performance = scope::performance()?;
        Some(Self { performance })
    }

    /// Milliseconds since the page's time origin (monotonic, sub-millisecond).
    pub fn now_ms(&self) -> f64 {
        self.performance.now()
    }

    /// Now as Unix epoch milliseconds: how two threads, whose `now_ms` start at different
    /// moments, talk about the same instant.
    pub fn now_unix_ms(&self) -> f64 {
        self.performance.time_origin() + self.now_ms()
    }

    /// The Unix epoch ms of a reading of [`now_ms`](Self::now_ms).
    pub fn unix_ms_at(&self, now_ms: f64) -> f64 {
        self.performance.time_origin() + now_ms
    }

    /// The Unix epoch time in whole nanoseconds of a reading of [`now_ms`](Self::now_ms).
    pub fn unix_ns_at(&self, now_ms: f64) -> i64 {
        let epoch_ms = self.performance.time_origin() + now_ms;
        (epoch_ms * 1_000_000.0).round() as i64
    }

    /// The smallest step the clock actually takes, measured by reading it in a tight loop
    /// (5 µs when the page is cross-origin isolated, 100 µs or coarser otherwise). If the clock
    /// never moved during the 20 ms probe, the probe's length is the honest upper bound.
    pub fn measure_resolution_ms(&self) -> f64 {
        let mut smallest = f64::INFINITY;
        let mut previous = self.now_ms();
        const PROBE_MS: f64 = 20.0;
        let deadline = previous + PROBE_MS;
        let mut steps = 0;
        while steps < 50 {
            let now = self.now_ms();
            let step = now - previous;
            if step > 0.0 {
                smallest = smallest.min(step);
                steps += 1;
                previous = now;
            }
            if now > deadline {
                break;
            }
        }
        if smallest.is_finite() {
            smallest
        } else {
            PROBE_MS
        }
    }
}

pub use scope::{cross_origin_isolated, user_agent};

/// The `nextHopProtocol` values (e.g. `http/1.1`, `h2`) of the Resource Timing entries whose
/// URL starts with `url_prefix`, deduplicated and sorted. Empty when the server withholds timing
/// (no `Timing-Allow-Origin`) or the browser recorded nothing.
pub fn protocols_seen(url_prefix: &str) -> Vec<String> {
    let Some(performance) = scope::performance() else {
        return Vec::new();
    };
    let entries = performance.get_entries_by_type("resource");
    let mut protocols: Vec<String> = entries
        .iter()
        .filter_map(|entry| entry.dyn_into::<PerformanceResourceTiming>().ok())
        .filter(|entry| entry.name().starts_with(url_prefix))
        .map(|entry| entry.next_hop_protocol())
        .filter(|protocol| !protocol.is_empty())
        .collect();
    protocols.sort();
    protocols.dedup();
    protocols
}

/// The browser's Resource Timing entries for each of `urls` (exactly that URL, as the browser
/// resolves it), in the browser's order, with the fields the core's transport accounting reads:
/// `result[i]` holds the entries of `urls[i]`. The browser's entry list is read once for all.
pub fn resource_timing_entries(urls: &[&str]) -> Vec<Vec<ResourceTimingEntry>> {
    let mut by_url: Vec<Vec<ResourceTimingEntry>> = vec![Vec::new(); urls.len()];
    let Some(performance) = scope::performance() else {
        return by_url;
    };
    // An entry's name is the resolved URL (lower-case host, no default port, …).
    let resolved: Vec<String> = urls
        .iter()
        .map(|url| {
            web_sys::Url::new(url)
                .map(|parsed| parsed.href())
                .unwrap_or_else(|_| (*url).to_owned())
        })
        .collect();
    for entry in performance
        .get_entries_by_type("resource")
        .iter()
        .filter_map(|entry| entry.dyn_into::<PerformanceResourceTiming>().ok())
    {
        let name = entry.name();
        let Some(url) = resolved.iter().position(|resolved| *resolved == name) else {
            continue;
        };
        by_url[url].push(ResourceTimingEntry {
            start_time_ms: entry.start_time(),
            fetch_start_ms: entry.fetch_start(),
            connect_start_ms: entry.connect_start(),
            connect_end_ms: entry.connect_end(),
            request_start_ms: entry.request_start(),
            next_hop_protocol: entry.next_hop_protocol(),
            response_end_ms: entry.response_end(),
        });
    }
    by_url
}

/// Runs `work` and records its duration as a User Timing measure named `name` (visible in the
/// browser's performance tools and read by the load benchmark). Carries no data, only a time.
pub fn measured<T>(name: &str, work: impl FnOnce() -> T) -> T {
    let performance = scope::performance();
    let started = performance.as_ref().map(|p| p.now());
    let result = work();
    if let (Some(performance), Some(started)) = (performance, started) {
        // `performance.measure(name, {start, end})`, called through Reflect because web-sys
        // gates its options dictionary behind unstable APIs.
        let options = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&options, &"start".into(), &started.into());
        let _ = js_sys::Reflect::set(&options, &"end".into(), &performance.now().into());
        if let Ok(measure) = js_sys::Reflect::get(&performance, &"measure".into()) {
            if let Some(measure) = measure.dyn_ref::<js_sys::Function>() {
                let _ = measure.call2(&performance, &name.into(), &options);
            }
        }
    }
    result
}
