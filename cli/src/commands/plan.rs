//! `strobe-artifact plan`: the plan the page's settings make, as `plan.json` in a folder beside
//! the project's `locustfile.py`, for Locust's workers to carry out (docs/locust.md). The same
//! settings give the same `plan.json` bytes as the page's *Export plan*.

use std::io::{self, Write};
use std::path::PathBuf;

use strobe::core::config::form::RunForm;
use strobe::core::plan::export::{plan_document, PlanExportError};

use super::{Command, Outcome};

/// The project's locustfile, shipped with each plan (one file for every plan: it reads the plan
/// from `STROBE_PLAN`).
const LOCUSTFILE: &str = include_str!("../../locust/locustfile.py");

/// The `plan` entry in the registry.
pub const COMMAND: Command = Command {
    name: "plan",
    summary: "write the plan of a page link's settings, and the locustfile, to DIR",
    help: "\
Usage: strobe-artifact plan --link 'QUERY' --out DIR

QUERY is the page's own link query (`base_url=...&model=...&requests=64&concurrency=16&...`,
the same keys and rules as the page's address bar). Writes DIR/plan.json: every request's
index, planned context, canary marker, prompt and exact request body, the endpoints, and the
load shape (the concurrency of a closed loop, or the arrival schedule of a rate load). The API
key is never in it: the plan names the environment variable to read it from (STROBE_API_KEY).
The page's *Export plan* writes the same bytes for the same settings. Also writes
DIR/locustfile.py, which runs the plan on Locust's workers (docs/locust.md).

Options:
  --link QUERY  the page's link query (with or without the leading `?`)
  --out DIR     the folder to write plan.json into (created when missing)
  -h, --help    print this help

Exit codes:
  0  wrote DIR/plan.json and DIR/locustfile.py
  1  the settings cannot be planned (each problem is named)
  2  bad usage, or DIR cannot be written
",
    run,
};

fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> io::Result<Outcome> {
    let mut link: Option<String> = None;
    let mut folder: Option<PathBuf> = None;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "-h" | "--help" => {
                write!(out, "{}", COMMAND.help)?;
                return Ok(Outcome::Success);
            }
            "--link" | "--out" => {
                let Some(value) = words.next() else {
                    writeln!(err, "strobe-artifact plan: {word} needs a value. Run `strobe-artifact plan --help`.")?;
                    return Ok(Outcome::Unusable);
                };
                if word == "--link" {
                    link = Some(value.clone());
                } else {
                    folder = Some(PathBuf::from(value));
                }
            }
            other => {
                writeln!(
                    err,
                    "strobe-artifact plan: unexpected {other:?}; usage: strobe-artifact plan \
                     --link 'QUERY' --out DIR"
                )?;
                return Ok(Outcome::Unusable);
            }
        }
    }
    let (Some(link), Some(folder)) = (link, folder) else {
        writeln!(
            err,
            "strobe-artifact plan: both --link 'QUERY' and --out DIR are needed. Run \
             `strobe-artifact plan --help`."
        )?;
        return Ok(Outcome::Unusable);
    };
    let (form, notices) = RunForm::from_query(&link);
    for notice in notices {
        writeln!(err, "strobe-artifact plan: note: {}", notice.message)?;
    }
    let document = match plan_document(&form) {
        Ok(document) => document,
        Err(error @ PlanExportError::Encoding(_)) => {
            writeln!(err, "strobe-artifact plan: {error}")?;
            return Ok(Outcome::Unusable);
        }
        Err(error) => {
            writeln!(err, "strobe-artifact plan: {error}")?;
            return Ok(Outcome::Invalid);
        }
    };
    for (name, text) in [
        ("plan.json", document.as_str()),
        ("locustfile.py", LOCUSTFILE),
    ] {
        let path = folder.join(name);
        let written = std::fs::create_dir_all(&folder).and_then(|()| std::fs::write(&path, text));
        if let Err(error) = written {
            writeln!(
                err,
                "strobe-artifact plan: cannot write {}: {error}",
                path.display()
            )?;
            return Ok(Outcome::Unusable);
        }
        writeln!(out, "wrote {}", path.display())?;
    }
    Ok(Outcome::Success)
}
