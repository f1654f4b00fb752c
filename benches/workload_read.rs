//! How fast a workload file is read: `core::workload::read::read` (UTF-8 check, SHA-256, the
//! one pass that cuts records out and reads each into typed fields) on a ShareGPT-shaped file
//! that `scripts/gen-sharegpt.mjs` wrote, natively. In the browser the same code runs compiled
//! to wasm, off the page's thread.
//!
//! It prints, for the file, MB/s of the whole read and of the SHA-256 alone: the best and the
//! median of the repeats, with the usable sessions (so a broken file cannot pass as fast).
//!
//! Run with `scripts/bench-workload.sh [MB]`, or `STROBE_WORKLOAD_FILE=FILE cargo bench --bench
//! workload_read` on a file of your own (`STROBE_BENCH_REPEATS`, default 3).

use std::time::Instant;

use strobe::core::config::choices::WorkloadTurns;
use strobe::core::workload::read::{read, ReadOptions};
use strobe::core::workload::sha256::sha256_prefixed;

fn main() {
    let Ok(path) = std::env::var("STROBE_WORKLOAD_FILE") else {
        eprintln!(
            "workload_read: set STROBE_WORKLOAD_FILE to a file (scripts/bench-workload.sh writes one)"
        );
        return;
    };
    let repeats: usize = std::env::var("STROBE_BENCH_REPEATS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(3);
    let bytes = std::fs::read(&path).expect("the workload file reads");
    let megabytes = bytes.len() as f64 / 1e6;
    println!("{path}: {megabytes:.1} MB, {repeats} repeats");
    for turns in [WorkloadTurns::First, WorkloadTurns::All] {
        let options = ReadOptions { turns };
        let mut rates = Vec::with_capacity(repeats);
        let mut sessions = 0;
        for _ in 0..repeats {
            // A benchmark times with the host's clock; the core it times never reads one.
            #[allow(clippy::disallowed_methods)]
            #[allow(clippy::disallowed_methods)]
            let start = Instant::now();
            let workload = read(&bytes, Some("bench.json"), &options).expect("a workload");
            let seconds = start.elapsed().as_secs_f64();
            sessions = workload.summary.sessions;
            rates.push(megabytes / seconds);
            drop(workload);
        }
        report(&format!("read, --turns {turns}"), &mut rates, sessions);
    }
    let mut rates = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        #[allow(clippy::disallowed_methods)]
        let start = Instant::now();
        let hash = sha256_prefixed(&bytes);
        std::hint::black_box(hash);
        rates.push(megabytes / start.elapsed().as_secs_f64());
    }
    report("sha256 alone", &mut rates, 0);
}

/// Prints the best and the median of `rates` (MB/s).
fn report(stage: &str, rates: &mut [f64], sessions: u64) {
    rates.sort_by(f64::total_cmp);
    let best = rates.last().copied().unwrap_or(0.0);
    let median = rates[rates.len() / 2];
    let sessions = if sessions > 0 {
        format!(", {sessions} sessions")
    } else {
        String::new()
    };
    println!("  {stage:<22} best {best:>7.1} MB/s  median {median:>7.1} MB/s{sessions}");
}
