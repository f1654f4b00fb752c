//! `strobe-artifact plan`: the plan the page's settings make, as `plan.json` in a folder beside
//! the project's `locustfile.py`, for Locust's workers to carry out (docs/locust.md). The same
//! settings give the same `plan.json` bytes as the page's *Export plan*.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use strobe::core::plan::export::{plan_of_link, PlanExportError};

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
runs the plan on Locust's workers (docs/locust.md). What the link holds that is no setting is
noted on standard error.";

/// `plan --link LINK --out DIR`
#[derive(Debug, clap::Args)]
#[command(
    about = "Write the plan of a page link's settings, and the locustfile, to DIR",
    long_about = LONG_ABOUT,
    override_usage = "strobe-artifact plan --link LINK --out DIR",
    after_help = "\
Exit codes:
  0  wrote DIR/plan.json and DIR/locustfile.py
  1  the settings cannot be planned (each problem is named, with the key to add when the link
     leaves it out: base_url, engine, model)
  2  bad usage, or DIR cannot be written (e.g. it is a file)"
)]
pub struct Args {
    /// The page's whole address, or its query (with or without the `?`).
    #[arg(long, value_name = "LINK")]
    link: String,
    /// The folder for plan.json and locustfile.py (created when missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    #[command(flatten)]
    help: HelpFlag,
}

/// Runs `plan`.
pub fn run(args: &Args, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    // A link pasted from the address bar may bring the line's end or spaces with it.
    let plan = match plan_of_link(args.link.trim()) {
        Ok(plan) => plan,
        Err(error @ PlanExportError::Encoding(_)) => {
            return fail(err, "plan", error, Outcome::Unusable)
        }
        Err(error) => return fail(err, "plan", error, Outcome::Invalid),
    };
    for notice in &plan.notices {
        writeln!(err, "strobe-artifact plan: note: {}", notice.message)?;
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
