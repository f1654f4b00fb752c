//! The common series over a run's measured window (docs/guide/telemetry.md, *The summary*): gauges
//! as min / mean / max of the samples inside the window; counters as their growth between the
//! sample that opens the window and the one that closes it, a drop counted as a restart from
//! zero; histograms as the observations made between those two samples, with their mean and
//! quantiles interpolated inside buckets as Prometheus's `histogram_quantile` does.
//!
//! Everything is computed from the samples alone, so a reader can recompute a file's summary
//! from its `samples`.

use std::collections::BTreeMap;

use crate::core::schema::server_metrics::{
    CounterSummary, GaugeSummary, HistogramSummary, ServerMetricsSample, ServerMetricsSummary,
};
use crate::core::telemetry::engines::{CommonSeries, Family, SeriesKind};
use crate::core::telemetry::exposition::parse_bucket_key;

/// The quantiles a histogram summary gives.
pub const QUANTILES: [f64; 4] = [0.5, 0.9, 0.95, 0.99];

/// Seconds to milliseconds: every engine's latency histograms are in seconds.
const MS_PER_S: f64 = 1000.0;

/// The measured window on the run's clock, ms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// When the first measured request was sent.
    pub start_ms: f64,
    /// When the last measured request ended.
    pub end_ms: f64,
}

/// Min, mean and max of `values`; `None` when empty.
pub fn gauge_summary(values: &[f64]) -> Option<GaugeSummary> {
    let first = *values.first()?;
    let (min, max, sum) = values
        .iter()
        .fold((first, first, 0.0), |(min, max, sum), &value| {
            (min.min(value), max.max(value), sum + value)
        });
    Some(GaugeSummary {
        min,
        // Rounding can put the mean of equal values a hair outside them.
        mean: (sum / values.len() as f64).clamp(min, max),
        max,
        samples: values.len() as u64,
    })
}

/// The growth of a counter read at `points` (`(t_ms, value)`, oldest first): the sum of every
/// rise, and after a drop (the server restarted, so the counter began again at zero) the whole
/// new value, as Prometheus's `increase` counts it. `None` with fewer than two points.
pub fn counter_summary(points: &[(f64, f64)]) -> Option<CounterSummary> {
    let (&(first_t, _), &(last_t, _)) = (points.first()?, points.last()?);
    if points.len() < 2 {
        return None;
    }
    let mut delta = 0.0;
    let mut resets = 0;
    for pair in points.windows(2) {
        let (before, after) = (pair[0].1, pair[1].1);
        if after < before {
            resets += 1;
            delta += after;
        } else {
            delta += after - before;
        }
    }
    let seconds = (last_t - first_t) / MS_PER_S;
    Some(CounterSummary {
        delta,
        rate_per_s: (seconds > 0.0).then(|| delta / seconds),
        resets,
    })
}

/// A histogram read from one sample: cumulative buckets by upper bound, sum and count.
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    /// `(upper bound, observations ≤ bound)`, by bound; the last bound is `+Inf` when the
    /// server sent it.
    pub buckets: Vec<(f64, f64)>,
    /// The sum of every observation.
    pub sum: f64,
    /// How many observations.
    pub count: f64,
}

impl Histogram {
    /// The histogram `base` (e.g. `vllm:time_to_first_token_seconds`) in a sample's values;
    /// `None` without its `_count`.
    pub fn from_values(values: &BTreeMap<String, f64>, base: &str) -> Option<Histogram> {
        let count = *values.get(&format!("{base}_count"))?;
        let sum = values.get(&format!("{base}_sum")).copied().unwrap_or(0.0);
        let bucket_name = format!("{base}_bucket");
        let prefix = format!("{bucket_name}{{");
        let mut buckets: Vec<(f64, f64)> = values
            .range(prefix.clone()..)
            .take_while(|(key, _)| key.starts_with(&prefix))
            .filter_map(|(key, value)| {
                let (name, bound) = parse_bucket_key(key)?;
                (name == bucket_name).then_some((bound, *value))
            })
            .collect();
        buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        Some(Histogram {
            buckets,
            sum,
            count,
        })
    }

    /// The observations made after `earlier` up to this reading. When the count fell the
    /// server restarted, and this reading is all there is since.
    pub fn since(&self, earlier: &Histogram) -> Histogram {
        if self.count < earlier.count {
            return self.clone();
        }
        let before = |bound: f64| {
            earlier
                .buckets
                .iter()
                .find(|(other, _)| *other == bound)
                .map_or(0.0, |(_, count)| *count)
        };
        Histogram {
            buckets: self
                .buckets
                .iter()
                .map(|&(bound, count)| (bound, (count - before(bound)).max(0.0)))
                .collect(),
            sum: self.sum - earlier.sum,
            count: self.count - earlier.count,
        }
    }

    /// The mean observation; `None` without observations.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0.0).then(|| self.sum / self.count)
    }

    /// The `q` quantile (0 to 1) as `histogram_quantile` estimates it: the rank `q × total`
    /// falls in a bucket, and the value is interpolated linearly between that bucket's lower
    /// and upper bound (0 below the first bucket when its bound is positive). A rank in the
    /// `+Inf` bucket gives the highest finite bound. `None` without observations or buckets.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if !(0.0..=1.0).contains(&q) {
            return None;
        }
        // Counts must not fall from one bucket to the next; rounding in a sum over label
        // sets can make them, so each is raised to the one below (Prometheus does the same).
        let mut cumulative = Vec::with_capacity(self.buckets.len());
        let mut highest = 0.0f64;
        for &(bound, count) in &self.buckets {
            highest = highest.max(count);
            cumulative.push((bound, highest));
        }
        let total = cumulative.last()?.1;
        if total <= 0.0 {
            return None;
        }
        let rank = q * total;
        let index = cumulative.iter().position(|&(_, count)| count >= rank)?;
        let (upper, count_here) = cumulative[index];
        if upper == f64::INFINITY {
            // Nothing bounds the rank from above: answer the highest finite bound.
            return index.checked_sub(1).map(|below| cumulative[below].0);
        }
        let (lower, count_below) = match index.checked_sub(1) {
            Some(below) => cumulative[below],
            None if upper > 0.0 => (0.0, 0.0),
            None => return Some(upper),
        };
        let in_bucket = count_here - count_below;
        if in_bucket <= 0.0 {
            return Some(upper);
        }
        Some(lower + (upper - lower) * (rank - count_below) / in_bucket)
    }

    /// Count, mean and quantiles, seconds turned to ms.
    pub fn summary_ms(&self) -> HistogramSummary {
        let quantile = |q: f64| self.quantile(q).map(|seconds| seconds * MS_PER_S);
        HistogramSummary {
            count: self.count,
            mean_ms: self.mean().map(|seconds| seconds * MS_PER_S),
            p50_ms: quantile(QUANTILES[0]),
            p90_ms: quantile(QUANTILES[1]),
            p95_ms: quantile(QUANTILES[2]),
            p99_ms: quantile(QUANTILES[3]),
        }
    }
}

/// The common series of `family` over `window`, from `samples` (oldest first; any order is
/// sorted). Counters and histograms count from the last sample at or before the window's start
/// (the baseline; the first sample when none is) to the first at or after its end (the last
/// when none is); gauges take the samples inside the window.
pub fn summarize(
    samples: &[ServerMetricsSample],
    family: Family,
    window: Window,
) -> ServerMetricsSummary {
    let mut ordered: Vec<&ServerMetricsSample> = samples.iter().collect();
    ordered.sort_by(|a, b| a.t_ms.total_cmp(&b.t_ms));
    let from = ordered
        .iter()
        .rposition(|sample| sample.t_ms <= window.start_ms)
        .unwrap_or(0);
    let to = ordered
        .iter()
        .position(|sample| sample.t_ms >= window.end_ms)
        .unwrap_or(ordered.len().saturating_sub(1));
    let span: &[&ServerMetricsSample] = if ordered.is_empty() || to < from {
        &[]
    } else {
        &ordered[from..=to]
    };
    let inside: Vec<&ServerMetricsSample> = ordered
        .iter()
        .copied()
        .filter(|sample| (window.start_ms..=window.end_ms).contains(&sample.t_ms))
        .collect();
    let mut summary = ServerMetricsSummary {
        window_start_ms: window.start_ms,
        window_end_ms: window.end_ms,
        from_t_ms: span.first().map(|sample| sample.t_ms),
        to_t_ms: span.last().map(|sample| sample.t_ms),
        ..ServerMetricsSummary::default()
    };
    for series in CommonSeries::ALL {
        let Some(name) = series.names(family).iter().copied().find(|name| {
            ordered.iter().any(|sample| match series.kind() {
                SeriesKind::Histogram => sample.values.contains_key(&format!("{name}_count")),
                SeriesKind::Gauge | SeriesKind::Counter => sample.values.contains_key(*name),
            })
        }) else {
            continue;
        };
        let key = series.key().to_owned();
        match series.kind() {
            SeriesKind::Gauge => {
                let values: Vec<f64> = inside
                    .iter()
                    .filter_map(|sample| sample.values.get(name).copied())
                    .collect();
                if let Some(gauge) = gauge_summary(&values) {
                    summary.gauges.insert(key, gauge);
                }
            }
            SeriesKind::Counter => {
                let points: Vec<(f64, f64)> = span
                    .iter()
                    .filter_map(|sample| Some((sample.t_ms, *sample.values.get(name)?)))
                    .collect();
                if let Some(counter) = counter_summary(&points) {
                    summary.counters.insert(key, counter);
                }
            }
            SeriesKind::Histogram => {
                let readings: Vec<Histogram> = span
                    .iter()
                    .filter_map(|sample| Histogram::from_values(&sample.values, name))
                    .collect();
                if let Some(window_histogram) = histogram_over(&readings) {
                    summary
                        .histograms
                        .insert(key, window_histogram.summary_ms());
                }
            }
        }
    }
    summary.prefix_cache_hit_rate = hit_rate(&summary, family);
    summary
}

/// The observations between the first and last of `readings`, restarts in between included.
fn histogram_over(readings: &[Histogram]) -> Option<Histogram> {
    if readings.len() < 2 {
        return None;
    }
    let mut total: Option<Histogram> = None;
    for pair in readings.windows(2) {
        let step = pair[1].since(&pair[0]);
        total = Some(match total {
            None => step,
            Some(sum) => add(&sum, &step),
        });
    }
    total
}

fn add(a: &Histogram, b: &Histogram) -> Histogram {
    let mut buckets = a.buckets.clone();
    for &(bound, count) in &b.buckets {
        match buckets.iter_mut().find(|(other, _)| *other == bound) {
            Some((_, existing)) => *existing += count,
            None => buckets.push((bound, count)),
        }
    }
    buckets.sort_by(|x, y| x.0.total_cmp(&y.0));
    Histogram {
        buckets,
        sum: a.sum + b.sum,
        count: a.count + b.count,
    }
}

/// Hits over queries in the window from the counters; else the hit-rate gauge's mean. An
/// engine whose prompt counter leaves cached tokens out (llama.cpp) has no queries counter:
/// its queries are its prompt tokens plus its hits.
fn hit_rate(summary: &ServerMetricsSummary, family: Family) -> Option<f64> {
    let counted = |series: CommonSeries| summary.counters.get(series.key()).map(|c| c.delta);
    let hits = counted(CommonSeries::PrefixCacheHits);
    let queries = counted(CommonSeries::PrefixCacheQueries).or_else(|| {
        family
            .prompt_tokens_exclude_cached()
            .then(|| Some(counted(CommonSeries::PromptTokens)? + hits?))
            .flatten()
    });
    match (hits, queries) {
        (Some(hits), Some(queries)) if queries > 0.0 => Some((hits / queries).clamp(0.0, 1.0)),
        _ => summary
            .gauges
            .get(CommonSeries::PrefixCacheHitRate.key())
            .map(|gauge| gauge.mean),
    }
}

#[cfg(test)]
mod tests;
