//! How the native benchmarks that time whole stages (`load_10k`, `report`) time them: each
//! stage [`REPEATS`] times, reported as the best and the median, in ms.

use std::time::Instant;

/// Times each stage is run.
pub const REPEATS: usize = 5;

/// Runs `work` [`REPEATS`] times; returns (best, median) in ms and the last result.
pub fn time<T>(mut work: impl FnMut() -> T) -> (f64, f64, T) {
    let mut samples = Vec::with_capacity(REPEATS);
    let mut last = None;
    for _ in 0..REPEATS {
        // A native benchmark times itself; nothing in the app reads this clock.
        #[allow(clippy::disallowed_methods)]
        let started = Instant::now();
        let result = work();
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
        last = Some(std::hint::black_box(result));
    }
    samples.sort_by(f64::total_cmp);
    match last {
        Some(result) => (samples[0], samples[REPEATS / 2], result),
        None => unreachable!("REPEATS is at least 1"),
    }
}
