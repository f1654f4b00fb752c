//! The `repeat` block strobe adds to each artifact of a repeated run (docs/spec/converted.md,
//! *The `repeat` block*): one run is one sample of a noisy system, so `repeats = N` runs the
//! same plan N times, and each repeat says which group it belongs to so a set of files regroups
//! by itself. Every v1 reader that does not know the key ignores it.

use serde::{Deserialize, Serialize};

use crate::core::config::load::REPEATS;

/// Most repeats one group may hold (the `repeats` setting's bound).
pub const MAX_REPEATS: u64 = *REPEATS.end();

/// The `repeat` block: `{"group_id", "index", "count"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepeatBlock {
    /// Shared by every repeat of one group, e.g. `repeat-20261202T120000Z`.
    pub group_id: String,
    /// This repeat's place in the group, from 0.
    pub index: u64,
    /// The repeats the group planned, 1 to [`MAX_REPEATS`].
    pub count: u64,
}
