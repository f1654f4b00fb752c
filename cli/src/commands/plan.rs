//! `strobe-artifact plan`: the plan the page's settings make, as `plan.json` in a folder beside
//! the project's `locustfile.py`, for Locust's workers to carry out (docs/operate/locust.md). The
//! same settings give the same `plan.json` bytes as the page's *Export plan*. With `--workload
//! FILE` the plan carries the file's requests, read by the page's own reader, and the command
//! says on standard error that plan.json holds the file's prompts.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use strobe::core::prompt::export::{plan_of_link, PlanExportError, WorkloadBytes};

use super::{fail, HelpFlag, Outcome};

/// The project's locustfile, shipped with each plan (one file for every plan: it reads the plan
/// from `STROBE_PLAN`).
const LOCUSTFILE: &str = include_str!("../../locust/locustfile.py");

/// The whole help's description of `plan`.
const LONG_ABOUT: &str = "\
LINK is the page's link: its whole address as the address bar holds it
(`http://host:8080/?base_url=...&model=...`), or only its query
(`base_url=...&model=...&requests=64&concurrency=16&...`, the same keys and rules as the
page's). It must name the server with base_url= and the engine with engine=; nothing falls back
to the simulator's address. Writes DIR/plan.json: every request's index, planned context,
canary marker, prompt and exact request body, the endpoints, and the load shape (the
concurrency of a closed loop, or the arrival schedule of a rate load). The API key is never in
it: the plan names the environment variable to read it from (STROBE_API_KEY). The page's
*Export plan* writes the same bytes for the same settings. Also writes DIR/locustfile.py, which
runs the plan on Locust's workers (docs/operate/locust.md). What the link holds that is no setting is
noted on standard error.

With --workload FILE the plan sends the file's requests as the page sends them (the link's
workload settings apply: workload_turns, workload_order, output_lengths, trace_speed, endpoint,
history=recorded for conversations): every body as sent, byte for byte, so plan.json then holds
the file's prompts; keep it as private as the file. The records and the imported artifact hold
none (docs/guide/workloads.md).";

/// `plan --link LINK --out DIR`
#[derive(Debug, clap::Args)]
#[command(
    about = "Write the plan of a page link's settings, and the locustfile, to DIR",
    long_about = LONG_ABOUT,
    override_usage = "strobe-artifact plan --link LINK --out DIR [--workload FILE]",
    after_help = "\
Exit codes:
  0  wrote DIR/plan.json and DIR/locustfile.py
  1  the settings cannot be planned (each problem is named, with the key to add when the link
     leaves it out: base_url, engine, model), or the workload cannot be sent with them
  2  bad usage, DIR cannot be written (e.g. it is a file), or FILE cannot be read"
)]
pub struct Args {
    /// The page's whole address, or its query (with or without the `?`).
    #[arg(long, value_name = "LINK")]
    link: String,
    /// The folder for plan.json and locustfile.py (created when missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// A workload file whose requests the plan sends (plan.json then holds its prompts).
    #[arg(long, value_name = "FILE")]
    workload: Option<PathBuf>,
    #[command(flatten)]
    help: HelpFlag,
}

/// Runs `plan`.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    let file = match &args.workload {
        None => None,
        Some(path) => match std::fs::read(path) {
            Ok(bytes) => Some((workload_name(path), bytes)),
            Err(error) => {
                return fail(
                    err,
                    "plan",
                    format!("--workload {}: cannot read it: {error}", path.display()),
                    Outcome::Unusable,
                )
            }
        },
    };
    let workload = file.as_ref().map(|(name, bytes)| WorkloadBytes {
        name,
        bytes: bytes.as_slice(),
    });
    // A link pasted from the address bar may bring the line's end or spaces with it.
    let plan = match plan_of_link(args.link.trim(), workload) {
        Ok(plan) => plan,
        Err(error @ PlanExportError::Encoding(_)) => {
            return fail(err, "plan", error, Outcome::Unusable)
        }
        Err(error) => return fail(err, "plan", error, Outcome::Invalid),
    };
    for notice in &plan.notices {
        writeln!(err, "strobe-artifact plan: note: {}", notice.message)?;
    }
    if let Some(holds) = &plan.holds_prompts {
        writeln!(err, "strobe-artifact plan: note: {holds}")?;
    }
    let folder = &args.out;
    if let Some(problem) = unwritable(folder) {
        return fail(err, "plan", problem, Outcome::Unusable);
    }
    for (name, text) in [
        ("plan.json", plan.document.as_str()),
        ("locustfile.py", LOCUSTFILE),
    ] {
        let path = folder.join(name);
        let written = std::fs::create_dir_all(folder).and_then(|()| std::fs::write(&path, text));
        if let Err(error) = written {
            return fail(
                err,
                "plan",
                format!(
                    "cannot write {}: {error}; pass a folder you may write to with --out",
                    path.display()
                ),
                Outcome::Unusable,
            );
        }
        writeln!(out, "wrote {}", path.display())?;
    }
    Ok(Outcome::Success)
}

/// The name a workload file is recorded by: its own, without the folder (as the page's file
/// input gives it).
fn workload_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Why `folder` cannot take the plan, when it cannot: it, or a path above it, is no folder.
fn unwritable(folder: &Path) -> Option<String> {
    let blocking = folder
        .ancestors()
        .filter(|path| !path.as_os_str().is_empty())
        .find(|path| path.exists() && !path.is_dir())?;
    Some(if blocking == folder {
        format!(
            "--out {}: is a file, not a folder; pass a folder for plan.json and locustfile.py \
             (it is created when missing)",
            folder.display()
        )
    } else {
        format!(
            "--out {}: {} is a file, so the folder cannot be made there; pass another folder",
            folder.display(),
            blocking.display()
        )
    })
}
