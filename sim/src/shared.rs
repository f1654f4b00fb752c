//! The state every connection of one server shares: its settings, clock, truth log and engine.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use crate::config::SimConfig;
use crate::engine::Engine;
use crate::truth::{SimClock, TruthLog};

/// State shared by every connection of one server.
pub(crate) struct Shared {
    pub(crate) config: SimConfig,
    pub(crate) clock: SimClock,
    pub(crate) truth: Arc<TruthLog>,
    pub(crate) engine: Arc<Engine>,
    pub(crate) next_request: AtomicU64,
    pub(crate) started_unix_s: u64,
}
