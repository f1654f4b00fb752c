//! The one-file report of a synthetic run of 1,000 and of 10,000 requests (the runs `load_10k`
//! reads, built through the real pipeline): how long `report_html` takes, the best and the
//! median of 5, and how large the file is, split into the artifact it carries and the rest
//! (charts, hover values, text). The size target is 1.5 MB for 1,000 requests
//! (docs/guide/results.md, *The one-file report*).
//!
//! Run with `cargo bench --bench report`. Set `STROBE_BENCH_DUMP=DIR` to also write the
//! reports there (`report-1000.html`, `report-10000.html`): `scripts/bench-report.sh` then
//! times opening them in headless Chromium.

#[path = "common/synthetic.rs"]
mod synthetic;
#[path = "common/timing.rs"]
mod timing;

use strobe::core::config::slo::SloSpec;
use strobe::core::present::report::{report_html, ReportInput};
use strobe::core::read::opened::OpenedArtifact;
use synthetic::synthetic_artifact_text;
use timing::time;

const MB: f64 = 1_000_000.0;

fn main() {
    let dump = std::env::var("STROBE_BENCH_DUMP").ok();
    let slo: Option<SloSpec> = None;
    println!("| rows | report | of which the artifact | the rest | report_html, best / median |");
    println!("|---:|---:|---:|---:|---:|");
    for requests in [1_000_u64, 10_000] {
        let text = synthetic_artifact_text(requests);
        let run = OpenedArtifact::from_text(&format!("bench-{requests}.json"), &text);
        let runs = [&run];
        let (best, median, report) = time(|| {
            report_html(&ReportInput {
                runs: &runs,
                slo: slo.as_ref(),
                saved_at: None,
            })
        });
        let size = report.html.len() as f64;
        println!(
            "| {requests} | {:.2} MB | {:.2} MB | {:.2} MB | {best:.0} / {median:.0} ms |",
            size / MB,
            text.len() as f64 / MB,
            (size - text.len() as f64) / MB,
        );
        if let Some(dir) = &dump {
            let path = format!("{dir}/report-{requests}.html");
            if let Err(error) = std::fs::write(&path, &report.html) {
                panic!("write {path}: {error}");
            }
        }
    }
}
