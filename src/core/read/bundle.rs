//! The artifacts inside a dropped `.zip` (a sweep's download, or any archive of artifact files):
//! every `.json` entry read out with its name, within limits that a hostile archive cannot get
//! past — entries, each entry's size as declared and as read, and the total
//! (docs/guide/results.md). Each entry is then read like a dropped file; so is each artifact a
//! dropped strobe report carries ([`open_report`]).

use std::io::{Cursor, Read};

use thiserror::Error;

use crate::core::read::carried::{carried_files, looks_like_html, CarriedError};
use crate::core::read::opened::foreign::{aiperf, read_aiperf_pair, ForeignRun};
use crate::core::read::opened::locust::records::looks_like_records;
use crate::core::read::opened::{OpenedArtifact, MAX_ARTIFACT_TEXT_BYTES};

/// Most entries read from one archive.
pub const MAX_BUNDLE_ENTRIES: usize = 1_000;
/// Most bytes read out of one archive in all (its entries after decompression).
pub const MAX_BUNDLE_BYTES: u64 = 256 * 1024 * 1024;

/// Whether `bytes` start like a zip archive (a local file header, or an empty archive's end).
pub fn looks_like_zip(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06")
}

/// One entry taken out of an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleEntry {
    /// The entry's file name, without the folders above it.
    pub name: String,
    /// Its bytes, decompressed.
    pub bytes: Vec<u8>,
}

/// What an archive held: the artifact entries, and what was left out and why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bundle {
    /// The `.json` entries, in archive order.
    pub entries: Vec<BundleEntry>,
    /// Entries not read, each with why (not JSON, too large, past the limits).
    pub skipped: Vec<String>,
}

impl Bundle {
    /// The names of the entries read, in archive order.
    pub fn names(&self) -> Vec<&str> {
        self.entries
            .iter()
            .map(|entry| entry.name.as_str())
            .collect()
    }
}

/// Why an archive could not be read at all.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum BundleError {
    /// Not a zip archive, or a broken one.
    #[error("this is not a zip archive strobe can read ({0}); drop the .json files themselves")]
    NotAZip(String),
}

/// Reads every `.json` entry of a zip archive, within the limits above.
pub fn read_bundle(bytes: &[u8]) -> Result<Bundle, BundleError> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|error| BundleError::NotAZip(error.to_string()))?;
    let mut bundle = Bundle::default();
    let mut total: u64 = 0;
    for position in 0..archive.len() {
        if position >= MAX_BUNDLE_ENTRIES {
            bundle.skipped.push(format!(
                "{} more entries: an archive is read up to {MAX_BUNDLE_ENTRIES} entries",
                archive.len() - position
            ));
            break;
        }
        let mut entry = match archive.by_index(position) {
            Ok(entry) => entry,
            Err(error) => {
                bundle.skipped.push(format!("entry {position}: {error}"));
                continue;
            }
        };
        if entry.is_dir() {
            continue;
        }
        let full_name = match entry.name() {
            Ok(name) => name.into_owned(),
            Err(error) => {
                bundle.skipped.push(format!("entry {position}: {error}"));
                continue;
            }
        };
        let name = full_name
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or_default()
            .to_owned();
        if !name.to_ascii_lowercase().ends_with(".json") {
            bundle.skipped.push(format!("{name}: not a .json file"));
            continue;
        }
        let limit = (MAX_ARTIFACT_TEXT_BYTES as u64).min(MAX_BUNDLE_BYTES - total);
        if entry.size() > limit {
            bundle.skipped.push(format!(
                "{name}: {} bytes, above the {limit}-byte limit",
                entry.size()
            ));
            continue;
        }
        // The declared size can lie: read one byte past the limit to know.
        let mut bytes = Vec::new();
        if let Err(error) = (&mut entry).take(limit + 1).read_to_end(&mut bytes) {
            bundle.skipped.push(format!("{name}: {error}"));
            continue;
        }
        if bytes.len() as u64 > limit {
            bundle
                .skipped
                .push(format!("{name}: larger than the {limit}-byte limit"));
            continue;
        }
        total += bytes.len() as u64;
        bundle.entries.push(BundleEntry { name, bytes });
    }
    Ok(bundle)
}

/// A dropped file as the library takes it: an artifact, or each artifact of a `.zip` (named
/// `archive.zip › entry.json`), with an unreadable card for each entry left out and for an
/// archive that cannot be read, saying why.
///
/// A strobe report (an HTML file, told by its content) gives the runs it carries, each under
/// the name it was saved with ([`open_report`]).
pub fn open_dropped(file_name: &str, bytes: &[u8]) -> Vec<OpenedArtifact> {
    if let Some(text) = utf8_text(bytes).filter(|text| looks_like_html(text)) {
        return open_report(file_name, text);
    }
    if !looks_like_zip(bytes) {
        return OpenedArtifact::all_from_bytes(file_name, bytes);
    }
    match read_bundle(bytes) {
        Ok(bundle) => {
            let mut opened: Vec<OpenedArtifact> = bundle
                .entries
                .iter()
                .flat_map(|entry| {
                    OpenedArtifact::all_from_bytes(
                        &format!("{file_name} › {}", entry.name),
                        &entry.bytes,
                    )
                })
                .collect();
            opened.extend(bundle.skipped.iter().map(|reason| {
                OpenedArtifact::unreadable(
                    &format!(
                        "{file_name} › {}",
                        reason.split(':').next().unwrap_or_default()
                    ),
                    &format!("left out of the archive: {reason}"),
                )
            }));
            if opened.is_empty() {
                opened.push(OpenedArtifact::unreadable(
                    file_name,
                    "the archive holds no .json artifact",
                ));
            }
            opened
        }
        Err(error) => vec![OpenedArtifact::unreadable(file_name, &error.to_string())],
    }
}

/// The runs a strobe report carries, read as the files they were read from when the report
/// was saved; one refused entry saying why when it carries none, or is no report at all.
pub fn open_report(file_name: &str, text: &str) -> Vec<OpenedArtifact> {
    let files = match carried_files(text) {
        Ok(files) if files.is_empty() => {
            Err(CarriedError::Damaged("it carries no artifact".to_owned()))
        }
        other => other,
    };
    match files {
        Ok(files) => files
            .iter()
            .flat_map(|file| OpenedArtifact::all_from_text(&file.name, &file.text))
            .collect(),
        Err(error) => vec![OpenedArtifact::not_a_report(file_name, text.len(), error)],
    }
}

/// `bytes` as text, when they are UTF-8.
fn utf8_text(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok()
}

/// Files dropped together, as the library takes them: each as [`open_dropped`], except that an
/// AIPerf run's two exports dropped together (exactly one `profile_export.jsonl` and one
/// `profile_export_aiperf.json`, told apart by content) become one run: the records' rows with
/// the summary's version and configuration, as `strobe-artifact summary FOLDER` reads them.
///
/// The records files of Locust's workers dropped together (told apart by their header line)
/// become the one run they make ([`OpenedArtifact::from_locust_records`]).
pub fn open_dropped_batch(files: &[(String, Vec<u8>)]) -> Vec<OpenedArtifact> {
    let mut locust: Vec<(String, String)> = Vec::new();
    let mut others: Vec<&(String, Vec<u8>)> = Vec::new();
    for file in files {
        match utf8_text(&file.1).filter(|text| looks_like_records(text)) {
            Some(text) => locust.push((file.0.clone(), text.to_owned())),
            None => others.push(file),
        }
    }
    let mut opened = Vec::new();
    if !locust.is_empty() {
        opened.push(OpenedArtifact::from_locust_records(&locust));
    }
    opened.extend(open_dropped_others(&others));
    opened
}

/// [`open_dropped_batch`] of files that are no Locust records.
fn open_dropped_others(files: &[&(String, Vec<u8>)]) -> Vec<OpenedArtifact> {
    let records: Vec<usize> = files
        .iter()
        .enumerate()
        .filter(|(_, (_, bytes))| utf8_text(bytes).is_some_and(aiperf::looks_like_records))
        .map(|(position, _)| position)
        .collect();
    let summaries: Vec<usize> = files
        .iter()
        .enumerate()
        .filter(|(_, (_, bytes))| {
            // A substring scan first, so an artifact is not parsed twice.
            utf8_text(bytes)
                .filter(|text| {
                    text.contains("\"aiperf_version\"") || text.contains("\"input_config\"")
                })
                .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
                .and_then(|value| value.as_object().map(aiperf::looks_like_summary))
                .unwrap_or(false)
        })
        .map(|(position, _)| position)
        .collect();
    // The paired run, when the two read together; otherwise each file says what it holds.
    let pair: Option<(usize, usize, ForeignRun)> = match (records.as_slice(), summaries.as_slice())
    {
        ([records], [summary]) => read_aiperf_pair(
            utf8_text(&files[*records].1).unwrap_or_default(),
            utf8_text(&files[*summary].1).unwrap_or_default(),
        )
        .ok()
        .map(|run| (*records, *summary, run)),
        _ => None,
    };
    let (paired_records, paired_summary) =
        pair.as_ref().map_or((None, None), |(records, summary, _)| {
            (Some(*records), Some(*summary))
        });
    let mut run = pair.map(|(_, _, run)| run);
    let mut opened = Vec::new();
    for (position, (name, bytes)) in files.iter().enumerate() {
        if Some(position) == paired_summary {
            continue;
        }
        if Some(position) == paired_records {
            if let Some(run) = run.take() {
                opened.push(OpenedArtifact::from_foreign(name, bytes.len(), run));
            }
            continue;
        }
        opened.extend(open_dropped(name, bytes));
    }
    opened
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zip_of(entries: &[(&str, &[u8])], method: zip::CompressionMethod) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default().compression_method(method);
        for (name, bytes) in entries {
            writer.start_file(*name, options).expect("entry");
            writer.write_all(bytes).expect("write");
        }
        writer.finish().expect("finish").into_inner()
    }

    #[test]
    fn json_entries_come_out_with_their_names_stored_or_deflated() {
        for method in [
            zip::CompressionMethod::Stored,
            zip::CompressionMethod::Deflated,
        ] {
            let bytes = zip_of(
                &[
                    ("sweep/step-1.json", b"{\"a\":1}"),
                    ("README.txt", b"hi"),
                    ("b.JSON", b"{}"),
                ],
                method,
            );
            assert!(looks_like_zip(&bytes));
            let bundle = read_bundle(&bytes).expect("reads");
            assert_eq!(bundle.names(), ["step-1.json", "b.JSON"]);
            assert_eq!(bundle.entries[0].bytes, b"{\"a\":1}");
            assert_eq!(bundle.skipped, ["README.txt: not a .json file"]);
        }
    }

    #[test]
    fn what_is_not_a_zip_says_so() {
        assert!(!looks_like_zip(b"{\"schema\":1}"));
        let error = read_bundle(b"PK\x03\x04garbage").expect_err("broken");
        assert!(
            error
                .to_string()
                .contains("drop the .json files themselves"),
            "{error}"
        );
    }

    #[test]
    fn a_bomb_is_stopped_at_the_limit() {
        // 65 MiB of zeros deflates to a few dozen KiB.
        let zeros = vec![0u8; MAX_ARTIFACT_TEXT_BYTES + 1024 * 1024];
        let bytes = zip_of(
            &[("big.json", &zeros), ("small.json", b"{}")],
            zip::CompressionMethod::Deflated,
        );
        assert!(bytes.len() < 1024 * 1024);
        let bundle = read_bundle(&bytes).expect("reads");
        assert_eq!(bundle.entries.len(), 1, "only the small entry");
        assert!(
            bundle.skipped[0].starts_with("big.json:"),
            "{:?}",
            bundle.skipped
        );
    }

    #[test]
    fn a_dropped_zip_becomes_one_card_per_entry_and_says_what_it_left_out() {
        let bytes = zip_of(
            &[("a.json", br#"{"concurrency": 1}"#), ("notes.txt", b"hi")],
            zip::CompressionMethod::Deflated,
        );
        let opened = open_dropped("sweep.zip", &bytes);
        let labels: Vec<String> = opened.iter().map(OpenedArtifact::label).collect();
        assert_eq!(labels, ["sweep.zip › a.json", "sweep.zip › notes.txt"]);
        assert_eq!(opened[0].workload.concurrency, Some(1));
        assert!(opened[1].rows.is_empty());
        assert_eq!(open_dropped("plain.json", b"{}").len(), 1);
        let broken = open_dropped("broken.zip", b"PK\x03\x04broken");
        assert_eq!(broken.len(), 1);
    }

    #[test]
    fn an_aiperf_runs_two_exports_dropped_together_are_one_run() {
        let folder = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/peers/aiperf/aiperf-0.13.0-c4");
        let read = |name: &str| std::fs::read(folder.join(name)).expect("fixture");
        let records = (
            "profile_export.jsonl".to_owned(),
            read("profile_export.jsonl"),
        );
        let summary = (
            "profile_export_aiperf.json".to_owned(),
            read("profile_export_aiperf.json"),
        );
        let other = ("plain.json".to_owned(), b"{}".to_vec());
        let opened = open_dropped_batch(&[summary.clone(), other.clone(), records.clone()]);
        let labels: Vec<String> = opened.iter().map(OpenedArtifact::label).collect();
        assert_eq!(labels, ["plain.json", "profile_export.jsonl"]);
        let run = &opened[1];
        assert_eq!(run.rows.len(), 48);
        assert_eq!(run.workload.concurrency, Some(4));
        assert_eq!(run.verdict_label(), "read as AIPerf 0.13.0");
        // Alone, or with a second records file, each file stays what it is.
        assert_eq!(open_dropped_batch(std::slice::from_ref(&summary)).len(), 1);
        let twice = open_dropped_batch(&[records.clone(), records, summary]);
        assert_eq!(twice.len(), 3);
    }
}
