//! Reading what the command line names: the one place the CLI touches the file system, with
//! errors that say what the path is and what to do. A command reads one file ([`read_one`]),
//! several with folders and zip archives opened up ([`read_each`]), or Locust's records
//! ([`read_records`]); [`identify`] says what a file's text is when it is not what a command
//! reads.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;
use strobe::core::format::counted;
use strobe::core::read::bundle::{looks_like_zip, read_bundle};
use strobe::core::read::opened::foreign::{read_json_lines, read_parsed};
use strobe::core::read::opened::locust::records::{looks_like_records, WORKER_KIND};

use crate::PROGRAM;

/// Why a path could not be read as what a command reads. Each is "unreadable" (exit 2), not
/// "invalid".
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The path does not exist.
    #[error("{name}: no such file; check the path (the shell expands globs before the program sees them)")]
    NotFound {
        /// The path as given.
        name: String,
    },
    /// A folder, given to a command that reads one file.
    #[error("{name}: is a folder; {}", folder_hint(name, command, inside))]
    IsDirectory {
        /// The path as given.
        name: String,
        /// The command that reads one file.
        command: &'static str,
        /// The `.json` and `.zip` files in it, sorted.
        inside: Vec<String>,
    },
    /// A zip archive, given to a command that reads one file.
    #[error(
        "{name}: is a zip archive of {} ({}), e.g. a sweep's download; `{PROGRAM} validate {name}` \
         checks every one; to {command} one, unzip it (`unzip {name}`) and pass its file",
        counted(members.len() as u64, "artifact", "artifacts"),
        listed(members, 3)
    )]
    Zip {
        /// The path as given.
        name: String,
        /// The command that reads one file.
        command: &'static str,
        /// The `.json` members' names.
        members: Vec<String>,
    },
    /// Bytes that start like a zip archive but do not read as one.
    #[error("{name}: starts like a zip archive but cannot be read ({reason}); download it again, or pass the .json files themselves")]
    BrokenZip {
        /// The path as given.
        name: String,
        /// The zip reader's reason.
        reason: String,
    },
    /// A folder or an archive without one artifact in it.
    #[error("{name}: the {what} holds no .json artifact (nor a .zip of them); pass the artifact files themselves")]
    NoArtifacts {
        /// The path as given.
        name: String,
        /// `folder` or `archive`.
        what: &'static str,
    },
    /// The bytes are not UTF-8, so they cannot be JSON text.
    #[error(
        "{name}: not UTF-8 text (first invalid byte at offset {offset}); artifacts are UTF-8 JSON, \
         so this is probably not an artifact or was saved in another encoding"
    )]
    NotUtf8 {
        /// The path as given.
        name: String,
        /// Byte offset of the first invalid sequence.
        offset: usize,
    },
    /// Any other I/O error (permissions, device errors).
    #[error("{name}: cannot read: {source}; check the file's permissions")]
    Io {
        /// The path as given.
        name: String,
        /// The underlying error.
        source: io::Error,
    },
    /// A file given to `import-locust` that no worker wrote.
    #[error(
        "{name}: not a worker's records file: {what}; import-locust reads the worker-*.jsonl \
         files the locustfile's workers write into STROBE_RECORDS (docs/operate/locust.md)"
    )]
    NotRecords {
        /// The path as given.
        name: String,
        /// What the file is instead.
        what: String,
    },
}

impl ReadError {
    /// The path (or archive member) the error is about, as shown.
    pub fn name(&self) -> &str {
        match self {
            ReadError::NotFound { name }
            | ReadError::IsDirectory { name, .. }
            | ReadError::Zip { name, .. }
            | ReadError::BrokenZip { name, .. }
            | ReadError::NoArtifacts { name, .. }
            | ReadError::NotUtf8 { name, .. }
            | ReadError::Io { name, .. }
            | ReadError::NotRecords { name, .. } => name,
        }
    }
}

/// The first `shown` names of a list, joined, then how many more: "a, b and 3 more".
pub fn listed<T: AsRef<str>>(names: &[T], shown: usize) -> String {
    let mut text = names
        .iter()
        .take(shown)
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > shown {
        text.push_str(&format!(" and {} more", names.len() - shown));
    }
    text
}

/// What works instead of a folder for `command`.
fn folder_hint(name: &str, command: &str, inside: &[String]) -> String {
    let aiperf = if matches!(command, "summary" | "convert") {
        " (an AIPerf run's folder is read when it holds profile_export.jsonl or \
         profile_export_aiperf.json)"
    } else {
        ""
    };
    match inside.first() {
        None => format!(
            "{command} reads one file, and it holds no .json or .zip file; pass the artifact \
             file itself{aiperf}"
        ),
        Some(first) => format!(
            "{command} reads one file: pass one of the {} in it, e.g. `{PROGRAM} {command} {}`, \
             or check them all with `{PROGRAM} validate {name}`{aiperf}",
            counted(inside.len() as u64, "file", "files"),
            Path::new(name).join(first).display()
        ),
    }
}

/// The files of an AIPerf run's folder strobe reads, best first: the per-request records, then
/// the summary alone.
pub const AIPERF_FILES: [&str; 2] = ["profile_export.jsonl", "profile_export_aiperf.json"];

/// One text read: a file, a zip archive's member, or an AIPerf run's folder.
#[derive(Debug)]
pub struct Results {
    /// Its name as shown: the path, `archive.zip › member.json`, or the file read inside an
    /// AIPerf folder.
    pub name: String,
    /// Its text.
    pub text: String,
    /// The text of an AIPerf folder's `profile_export_aiperf.json` when `name` is its
    /// `profile_export.jsonl`.
    pub aiperf_summary: Option<String>,
}

/// The shown name of a path.
fn name_of(path: &Path) -> String {
    path.display().to_string()
}

/// The text of one file for a command that reads one (`command`): a file's UTF-8 text, or of
/// an AIPerf run's folder its records (with its summary beside them) or its summary alone.
/// Another folder or a zip archive is an error that says what works instead.
pub fn read_one(path: &Path, command: &'static str) -> Result<Results, ReadError> {
    if path.is_dir() {
        if let Some(results) = read_aiperf_folder(path)? {
            return Ok(results);
        }
        return Err(ReadError::IsDirectory {
            name: name_of(path),
            command,
            inside: artifact_files(path)?
                .iter()
                .filter_map(|file| file.file_name())
                .map(|file| file.to_string_lossy().into_owned())
                .collect(),
        });
    }
    let bytes = read_bytes(path)?;
    if looks_like_zip(&bytes) {
        let bundle = read_bundle(&bytes).map_err(|error| ReadError::BrokenZip {
            name: name_of(path),
            reason: error.to_string(),
        })?;
        return Err(ReadError::Zip {
            name: name_of(path),
            command,
            members: bundle.names().into_iter().map(str::to_owned).collect(),
        });
    }
    Ok(Results {
        name: name_of(path),
        text: utf8(&name_of(path), bytes)?,
        aiperf_summary: None,
    })
}

/// Everything at `paths` for a command that reads several: each file; each `.json` member of
/// a zip archive (`archive.zip › member.json`); of a folder, its `.json` and `.zip` files
/// (sorted, not recursively), or the run of an AIPerf folder. Each entry is read or says why
/// not; `notes` gets the archive members left out, with why.
pub fn read_each(paths: &[PathBuf], notes: &mut Vec<String>) -> Vec<Result<Results, ReadError>> {
    let mut entries = Vec::new();
    for path in paths {
        if !path.is_dir() {
            read_file_entries(path, &mut entries, notes);
            continue;
        }
        match read_aiperf_folder(path) {
            Ok(Some(results)) => entries.push(Ok(results)),
            Ok(None) => match artifact_files(path) {
                Ok(files) if files.is_empty() => entries.push(Err(ReadError::NoArtifacts {
                    name: name_of(path),
                    what: "folder",
                })),
                Ok(files) => {
                    for file in files {
                        read_file_entries(&file, &mut entries, notes);
                    }
                }
                Err(error) => entries.push(Err(error)),
            },
            Err(error) => entries.push(Err(error)),
        }
    }
    entries
}

/// The entries of one file: itself, or a zip archive's members.
fn read_file_entries(
    path: &Path,
    entries: &mut Vec<Result<Results, ReadError>>,
    notes: &mut Vec<String>,
) {
    let name = name_of(path);
    let bytes = match read_bytes(path) {
        Ok(bytes) => bytes,
        Err(error) => return entries.push(Err(error)),
    };
    if !looks_like_zip(&bytes) {
        entries.push(utf8(&name, bytes).map(|text| Results {
            name,
            text,
            aiperf_summary: None,
        }));
        return;
    }
    let bundle = match read_bundle(&bytes) {
        Ok(bundle) => bundle,
        Err(error) => {
            return entries.push(Err(ReadError::BrokenZip {
                name,
                reason: error.to_string(),
            }))
        }
    };
    notes.extend(
        bundle
            .skipped
            .iter()
            .map(|reason| format!("{name}: left out {reason}")),
    );
    if bundle.entries.is_empty() {
        entries.push(Err(ReadError::NoArtifacts {
            name,
            what: "archive",
        }));
        return;
    }
    for member in bundle.entries {
        let member_name = format!("{name} › {}", member.name);
        entries.push(utf8(&member_name, member.bytes).map(|text| Results {
            name: member_name,
            text,
            aiperf_summary: None,
        }));
    }
}

/// The run of an AIPerf folder (its records with its summary, or its summary alone); `None`
/// for any other folder.
fn read_aiperf_folder(path: &Path) -> Result<Option<Results>, ReadError> {
    let [records, summary] = AIPERF_FILES.map(|name| path.join(name));
    if records.is_file() {
        let aiperf_summary = summary.is_file().then(|| read_text(&summary)).transpose()?;
        return Ok(Some(Results {
            name: name_of(&records),
            text: read_text(&records)?,
            aiperf_summary,
        }));
    }
    if summary.is_file() {
        return Ok(Some(Results {
            name: name_of(&summary),
            text: read_text(&summary)?,
            aiperf_summary: None,
        }));
    }
    Ok(None)
}

/// The `.json` and `.zip` files directly in a folder, sorted.
fn artifact_files(folder: &Path) -> Result<Vec<PathBuf>, ReadError> {
    files_in(folder, &["json", "zip"])
}

/// The files directly in `folder` whose extension is one of `extensions` (any case), sorted.
fn files_in(folder: &Path, extensions: &[&str]) -> Result<Vec<PathBuf>, ReadError> {
    let entries = std::fs::read_dir(folder).map_err(|source| ReadError::Io {
        name: name_of(folder),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|file| {
            file.is_file()
                && file.extension().is_some_and(|ext| {
                    extensions
                        .iter()
                        .any(|wanted| ext.eq_ignore_ascii_case(wanted))
                })
        })
        .collect();
    files.sort();
    Ok(files)
}

/// The Locust records files at `paths`, as `(name, text)`: each file as given, and of a folder
/// every `*.jsonl` inside whose first line is a worker's header (docs/operate/locust.md). A file
/// given by name whose first line is no worker's header at all is [`ReadError::NotRecords`], saying
/// what it is instead; an empty one or one with a broken header is left to the records
/// reader, which names the line.
pub fn read_records(paths: &[PathBuf]) -> Result<Vec<(String, String)>, ReadError> {
    let mut files = Vec::new();
    for path in paths {
        if !path.is_dir() {
            let text = read_text(path)?;
            let first = text.lines().find(|line| !line.trim().is_empty());
            if first.is_some_and(|line| !line.contains(WORKER_KIND)) {
                return Err(ReadError::NotRecords {
                    name: name_of(path),
                    what: identify(&text).described(),
                });
            }
            files.push((name_of(path), text));
            continue;
        }
        for file in files_in(path, &["jsonl"])? {
            let text = read_text(&file)?;
            if looks_like_records(&text) {
                files.push((name_of(&file), text));
            }
        }
    }
    Ok(files)
}

/// What a file's text is, by its content, for a message about a file a command does not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileKind {
    /// Nothing but whitespace.
    Empty,
    /// Another tool's results.
    Foreign {
        /// The tool's id: `vllm`, `guidellm`, `aiperf`.
        tool: &'static str,
        /// What the file is, e.g. "a vLLM results file (`bench serve` result with per-request
        /// arrays)".
        what: String,
    },
    /// Another tool's results with a broken field.
    BrokenForeign {
        /// The tool's id.
        tool: &'static str,
        /// The reader's message, naming the field.
        error: String,
    },
    /// A Locust worker's records file.
    LocustRecords,
    /// A JSON object with a `schema` key: an artifact (the validator judges it).
    Artifact,
    /// Any other JSON, or text that is no JSON at all.
    Other,
}

impl FileKind {
    /// What the file is, as a clause: "it is a vLLM results file (…), which `summary` and
    /// `convert` read".
    pub fn described(&self) -> String {
        match self {
            FileKind::Empty => "the file is empty".to_owned(),
            FileKind::Foreign { what, .. } => {
                format!("it is {what}, which `{PROGRAM} summary` and `{PROGRAM} convert` read")
            }
            FileKind::BrokenForeign { error, .. } => error.clone(),
            FileKind::LocustRecords => format!(
                "it is a Locust worker's records file, which `{PROGRAM} import-locust` reads"
            ),
            FileKind::Artifact => format!(
                "it is an anvil-serving.benchmark/v1 artifact, which `{PROGRAM} summary` and \
                 `{PROGRAM} validate` read as it is"
            ),
            FileKind::Other => {
                format!("its first line is no worker header (`{{\"kind\": \"{WORKER_KIND}\", …}}`)")
            }
        }
    }
}

/// What `text` is ([`FileKind`]).
pub fn identify(text: &str) -> FileKind {
    if text.trim().is_empty() {
        return FileKind::Empty;
    }
    if looks_like_records(text) {
        return FileKind::LocustRecords;
    }
    // One parse serves both questions: whose results, and whether an artifact.
    let (foreign, is_artifact) = match serde_json::from_str::<Value>(text) {
        Ok(value) => (
            read_parsed(&value, text),
            value
                .as_object()
                .is_some_and(|object| object.contains_key("schema")),
        ),
        Err(_) => (read_json_lines(text), false),
    };
    match foreign {
        Some(Ok(runs)) => match runs.as_slice() {
            [] => FileKind::Other,
            [first, ..] => FileKind::Foreign {
                tool: first.source.tool.id(),
                what: match runs.len() {
                    1 => format!(
                        "{}'s results file ({})",
                        first.source.tool.name(),
                        first.source.file_kind
                    ),
                    count => format!(
                        "{}'s results file ({}, {count} benchmarks)",
                        first.source.tool.name(),
                        first.source.file_kind
                    ),
                },
            },
        },
        Some(Err(error)) => FileKind::BrokenForeign {
            tool: error.tool.id(),
            error: error.to_string(),
        },
        None if is_artifact => FileKind::Artifact,
        None => FileKind::Other,
    }
}

/// Reads a whole file as UTF-8 text.
pub fn read_text(path: &Path) -> Result<String, ReadError> {
    utf8(&name_of(path), read_bytes(path)?)
}

/// Reads a whole file.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, ReadError> {
    std::fs::read(path).map_err(|source| match source.kind() {
        io::ErrorKind::NotFound => ReadError::NotFound {
            name: name_of(path),
        },
        _ => ReadError::Io {
            name: name_of(path),
            source,
        },
    })
}

/// `bytes` as text, or where they stop being UTF-8.
fn utf8(name: &str, bytes: Vec<u8>) -> Result<String, ReadError> {
    String::from_utf8(bytes).map_err(|error| ReadError::NotUtf8 {
        name: name.to_owned(),
        offset: error.utf8_error().valid_up_to(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_files_say_to_check_the_path() {
        let error = read_text(Path::new("/definitely/not/here.json")).expect_err("missing");
        assert!(matches!(error, ReadError::NotFound { .. }));
        assert!(error.to_string().contains("check the path"));
    }

    #[test]
    fn a_folder_for_a_one_file_command_names_what_works() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let error = read_one(&folder, "summary").expect_err("a folder");
        let message = error.to_string();
        assert!(message.contains("is a folder"), "{message}");
        assert!(message.contains("no .json or .zip file"), "{message}");
    }

    #[test]
    fn file_kinds_are_told_apart_by_content() {
        assert_eq!(identify(" \n"), FileKind::Empty);
        assert_eq!(identify("{\"schema\": \"x\"}"), FileKind::Artifact);
        assert_eq!(identify("{\"a\": 1}"), FileKind::Other);
        assert_eq!(identify("not json"), FileKind::Other);
        let header = format!("{{\"kind\": \"{WORKER_KIND}\"}}\n");
        assert_eq!(identify(&header), FileKind::LocustRecords);
        assert!(FileKind::Artifact.described().contains("summary"));
    }
}
