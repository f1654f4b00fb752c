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
    #[error("{path}: is a directory; pass the artifact files inside it, e.g. {path}/*.json")]
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
