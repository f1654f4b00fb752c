//! How fast a workload file is read: `core::workload::read::WorkloadReader` (UTF-8 check,
//! SHA-256, the one pass that cuts records out and reads each into typed fields) on a
//! ShareGPT-shaped file that `scripts/gen-sharegpt.mjs` wrote, natively, fed from disk in
//! 1 MiB pieces and keeping the first 10,000 sessions, as the page's reading worker does. In
//! the browser the same code runs compiled to wasm (`scripts/bench-workload-page.mjs`).
//!
//! It prints, for the file, MB/s of the whole read and of the SHA-256 alone: the best and the
//! median of the repeats, with the usable sessions (so a broken file cannot pass as fast).
//!
//! Run with `scripts/bench-workload.sh [MB]`, or `STROBE_WORKLOAD_FILE=FILE cargo bench --bench
//! workload_read` on a file of your own (`STROBE_BENCH_REPEATS`, default 3).

use std::io::Read;
use std::time::Instant;

use strobe::core::config::choices::WorkloadTurns;
use strobe::core::config::settings::MAX_REQUESTS;
use strobe::core::workload::read::{Keep, ReadOptions, WorkloadReader};
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
    let size = std::fs::metadata(&path)
        .expect("the workload file is there")
        .len();
    let megabytes = size as f64 / 1e6;
    println!("{path}: {megabytes:.1} MB, {repeats} repeats");
    for turns in [WorkloadTurns::First, WorkloadTurns::All] {
        let options = ReadOptions {
            turns,
            keep: Keep::First(MAX_REQUESTS),
        };
        let mut rates = Vec::with_capacity(repeats);
        let mut sessions = 0;
        for _ in 0..repeats {
            // A benchmark times with the host's clock; the core it times never reads one.
            #[allow(clippy::disallowed_methods)]
            let start = Instant::now();
            let mut file = std::fs::File::open(&path).expect("the workload file opens");
            let mut reader = WorkloadReader::new(Some("bench.json"), options.clone());
            let mut piece = vec![0_u8; 1 << 20];
            loop {
                let read = file.read(&mut piece).expect("the workload file reads");
                if read == 0 {
                    break;
                }
                reader.push(&piece[..read]).expect("a workload");
            }
            let workload = reader.finish().expect("a workload");
            let seconds = start.elapsed().as_secs_f64();
            sessions = workload.summary.sessions;
            rates.push(megabytes / seconds);
            drop(workload);
        }
        report(&format!("read, --turns {turns}"), &mut rates, sessions);
    }
    let bytes = std::fs::read(&path).expect("the workload file reads");
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
