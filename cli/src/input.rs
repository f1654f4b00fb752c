//! Reading artifact files: the one place the CLI touches the file system, with errors that say
//! what to do.

use std::io;
use std::path::{Path, PathBuf};

/// Why a file could not be read as text. Each is "unreadable" (exit 2), not "invalid".
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The path does not exist.
    #[error("{path}: no such file; check the path (the shell expands globs before the program sees them)")]
    NotFound {
        /// The path as given.
        path: PathBuf,
    },
    /// The path is a directory.
    #[error("{path}: is a directory; pass the artifact files inside it, e.g. {path}/*.json (an AIPerf run's folder is read when it holds profile_export.jsonl or profile_export_aiperf.json)")]
    IsDirectory {
        /// The path as given.
        path: PathBuf,
    },
    /// The bytes are not UTF-8, so they cannot be JSON text.
    #[error(
        "{path}: not UTF-8 text (first invalid byte at offset {offset}); artifacts are UTF-8 JSON, \
         so this is probably not an artifact or was saved in another encoding"
    )]
    NotUtf8 {
        /// The path as given.
        path: PathBuf,
        /// Byte offset of the first invalid sequence.
        offset: usize,
    },
    /// Any other I/O error (permissions, device errors).
    #[error("{path}: cannot read: {source}; check the file's permissions")]
    Io {
        /// The path as given.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

/// The files of an AIPerf run's folder strobe reads, best first: the per-request records, then
/// the summary alone.
pub const AIPERF_FILES: [&str; 2] = ["profile_export.jsonl", "profile_export_aiperf.json"];

/// What [`read_results`] read.
pub struct Results {
    /// The file read (inside the folder, for an AIPerf folder).
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    /// The text of an AIPerf folder's `profile_export_aiperf.json` when `path` is its
    /// `profile_export.jsonl`.
    pub aiperf_summary: Option<String>,
}

/// Reads a results file as UTF-8 text; of an AIPerf run's folder, its records (with its summary
/// beside them) or its summary alone.
pub fn read_results(path: &Path) -> Result<Results, ReadError> {
    if path.is_dir() {
        let [records, summary] = AIPERF_FILES.map(|name| path.join(name));
        if records.is_file() {
            let aiperf_summary = summary.is_file().then(|| read_text(&summary)).transpose()?;
            return Ok(Results {
                text: read_text(&records)?,
                path: records,
                aiperf_summary,
            });
        }
        if summary.is_file() {
            return Ok(Results {
                text: read_text(&summary)?,
                path: summary,
                aiperf_summary: None,
            });
        }
    }
    Ok(Results {
        text: read_text(path)?,
        path: path.to_path_buf(),
        aiperf_summary: None,
    })
}

/// The Locust records files at `paths`, as `(name, text)`: each file as given, and of a folder
/// every `*.jsonl` inside whose first line is a worker's header (docs/locust.md).
pub fn read_records(paths: &[PathBuf]) -> Result<Vec<(String, String)>, ReadError> {
    let mut files = Vec::new();
    for path in paths {
        if !path.is_dir() {
            files.push((path.display().to_string(), read_text(path)?));
            continue;
        }
        let entries = std::fs::read_dir(path).map_err(|source| ReadError::Io {
            path: path.clone(),
            source,
        })?;
        let mut inside: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|file| file.is_file() && file.extension().is_some_and(|ext| ext == "jsonl"))
            .collect();
        inside.sort();
        for file in inside {
            let text = read_text(&file)?;
            if strobe::core::read::locust::records::looks_like_records(&text) {
                files.push((file.display().to_string(), text));
            }
        }
    }
    Ok(files)
}

/// Reads a whole file as UTF-8 text.
pub fn read_text(path: &Path) -> Result<String, ReadError> {
    if path.is_dir() {
        return Err(ReadError::IsDirectory {
            path: path.to_path_buf(),
        });
    }
    let bytes = std::fs::read(path).map_err(|source| match source.kind() {
        io::ErrorKind::NotFound => ReadError::NotFound {
            path: path.to_path_buf(),
        },
        _ => ReadError::Io {
            path: path.to_path_buf(),
            source,
        },
    })?;
    String::from_utf8(bytes).map_err(|error| ReadError::NotUtf8 {
        path: path.to_path_buf(),
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
    fn directories_are_refused_with_a_hint() {
        let error = read_text(Path::new(env!("CARGO_MANIFEST_DIR"))).expect_err("dir");
        assert!(matches!(error, ReadError::IsDirectory { .. }));
    }
}
