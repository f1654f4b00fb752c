//! A run carried out on Locust's workers from strobe's plan, read back (docs/operate/locust.md):
//! the workers' records files ([`records`]) become one artifact through the same SSE decoder,
//! accumulator and disposition as a run from the page ([`import`]), with a `client` block
//! naming the engine, the workers, their hosts and how far their clocks agree.

pub mod import;
pub mod records;

#[cfg(test)]
mod tests;

use thiserror::Error;

/// Why records cannot become an artifact: the file (and line) and what to do.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{}{reason}", where_of(.file, .line))]
pub struct LocustError {
    /// The file at fault, when one is.
    pub file: Option<String>,
    /// Its line (1-based), when one is.
    pub line: Option<usize>,
    /// What is wrong and what to do.
    pub reason: String,
}

impl LocustError {
    /// An error in `file` (at `line`, when known).
    pub fn in_file(file: &str, line: Option<usize>, reason: impl Into<String>) -> Self {
        Self {
            file: Some(file.to_owned()),
            line,
            reason: reason.into(),
        }
    }

    /// An error of the files together (they do not make one run).
    pub fn of_run(reason: impl Into<String>) -> Self {
        Self {
            file: None,
            line: None,
            reason: reason.into(),
        }
    }
}

fn where_of(file: &Option<String>, line: &Option<usize>) -> String {
    match (file, line) {
        (Some(file), Some(line)) => format!("{file}, line {line}: "),
        (Some(file), None) => format!("{file}: "),
        _ => String::new(),
    }
}
