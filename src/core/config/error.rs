//! A setting that is out of bounds ([`ConfigError`]): which field to fix and what is allowed.

use thiserror::Error;

use crate::core::config::fields::FieldKey;

/// One setting that is out of bounds, with a message saying what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{message}")]
pub struct ConfigError {
    /// The field to fix; its [`as_str`](FieldKey::as_str) is the artifact field name and query
    /// key, e.g. `"max_tokens"`.
    pub field: FieldKey,
    /// What is allowed, what was given, and what to change.
    pub message: String,
}

impl ConfigError {
    pub(crate) fn new(field: FieldKey, message: impl Into<String>) -> Self {
        Self {
            field,
            message: message.into(),
        }
    }
}
