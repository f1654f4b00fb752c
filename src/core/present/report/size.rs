//! How large a report will be, and when that is worth a word (docs/guide/results.md, *The one-file
//! report*): the page says it before a large report is saved and again with its size once it
//! is, so nobody mails a file the other side cannot open or load again.

use crate::core::format::format_bytes;
use crate::core::present::report::carried_of;
use crate::core::read::opened::{OpenedArtifact, MAX_ARTIFACT_TEXT_BYTES};

/// From this size on a report gets a note: 5 MiB. A report of 10,000 rows is about 10 MB
/// (docs/develop/benchmarks.md); it opens in under half a second on a computer, but many mail and
/// chat tools refuse attachments of 10 to 25 MB, and a phone opens it slowly.
pub const LARGE_REPORT_BYTES: usize = 5 * 1024 * 1024;

/// A report's bytes per byte of the files it carries, roughly: the carried artifacts are most
/// of it (8.6 of 9.9 MB at 10,000 rows, docs/develop/benchmarks.md), the charts and text the rest.
const REPORT_BYTES_PER_CARRIED_BYTE: f64 = 1.2;

/// About how many bytes the report of `runs` will have, from the files it will carry.
pub fn estimated_report_bytes(runs: &[&OpenedArtifact]) -> usize {
    let (carried, _) = carried_of(runs);
    let carried: usize = carried.iter().map(|file| file.text.len()).sum();
    (carried as f64 * REPORT_BYTES_PER_CARRIED_BYTE) as usize
}

/// What to say of a report of `bytes` (`estimated`: before it is made), or `None` when it is
/// small enough to pass around without a thought.
pub fn report_size_note(bytes: usize, estimated: bool) -> Option<String> {
    if bytes < LARGE_REPORT_BYTES {
        return None;
    }
    let size = if estimated {
        format!("about {}", format_bytes(bytes))
    } else {
        format_bytes(bytes)
    };
    let will = if estimated { "will be" } else { "is" };
    if bytes > MAX_ARTIFACT_TEXT_BYTES {
        return Some(format!(
            "This report {will} {size}: more than the {} strobe reads from a dropped file, so \
             it opens in a browser but dropped on strobe it will not load its runs again. Save \
             fewer runs per report, or share the artifacts themselves.",
            format_bytes(MAX_ARTIFACT_TEXT_BYTES)
        ));
    }
    Some(format!(
        "This report {will} {size}: it opens in about a second on a computer, but many mail \
         and chat tools refuse attachments of 10 to 25 MB and a phone opens it slowly. To send \
         less, save fewer runs per report, or share the artifact (.json) or the Markdown \
         summary."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_reports_pass_without_a_word_and_large_ones_say_their_size() {
        assert_eq!(report_size_note(1_300_000, true), None);
        assert_eq!(report_size_note(LARGE_REPORT_BYTES - 1, false), None);
        let note = report_size_note(10_400_000, false).expect("a note");
        assert!(note.starts_with("This report is 9.9 MB:"), "{note}");
        assert!(note.contains("mail and chat tools"), "{note}");
        let before = report_size_note(10_400_000, true).expect("a note");
        assert!(
            before.starts_with("This report will be about 9.9 MB:"),
            "{before}"
        );
        let huge = report_size_note(MAX_ARTIFACT_TEXT_BYTES + 1, false).expect("a note");
        assert!(huge.contains("will not load its runs again"), "{huge}");
    }

    #[test]
    fn the_estimate_follows_the_files_carried_once() {
        let text = include_str!("../../../../tests/fixtures/reference-artifact.json");
        let run = OpenedArtifact::from_text("reference-artifact.json", text);
        let one = estimated_report_bytes(&[&run]);
        assert_eq!(one, (text.len() as f64 * 1.2) as usize);
        // The same file twice is carried once.
        assert_eq!(estimated_report_bytes(&[&run, &run]), one);
        assert_eq!(estimated_report_bytes(&[]), 0);
    }
}
