//! A repeated run read back: its artifact's `repeat` block ([`RepeatView`]).
//! [`crate::core::present::repeats`] gathers loaded runs into their groups.

use serde_json::{Map, Value};

use crate::core::read::opened::text::{capped_string, CappedText};

/// What an artifact's `repeat` block says, read tolerantly (the validator judges it).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RepeatView {
    /// The group's id, shared by its repeats.
    pub group_id: Option<CappedText>,
    /// This repeat's place, from 0.
    pub index: Option<u64>,
    /// The repeats the group planned.
    pub count: Option<u64>,
}

impl RepeatView {
    /// Reads a `repeat` object.
    pub fn from_json(repeat: &Map<String, Value>) -> Self {
        Self {
            group_id: capped_string(repeat.get("group_id")),
            index: repeat.get("index").and_then(Value::as_u64),
            count: repeat.get("count").and_then(Value::as_u64),
        }
    }
}
