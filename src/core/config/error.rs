//! A setting that is out of bounds ([`ConfigError`]): which field to fix and what is allowed.

use thiserror::Error;

/// One setting that is out of bounds, with a message saying what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct ConfigError {
    /// The artifact field / query key to fix, e.g. `"max_tokens"`.
    pub field: &'static str,
    /// What is allowed, what was given, and what to change.
    pub message: String,
}

impl ConfigError {
    pub(crate) fn new(field: &'static str, message: impl Into<String>) -> Self {
        Self {
            field,
            message: message.into(),
        }
    }
}
