//! `strobe-sim`: an OpenAI-compatible streaming endpoint whose timing is known.
//!
//! It serves `/v1/models`, `/v1/chat/completions` and `/v1/completions` (streaming and not) like
//! an inference server, paces tokens on an explicit latency model (admission queue, serial
//! prefill with a prefix cache, decode that slows with load), obeys the benchmark's output contract, injects
//! faults on demand, and records for every request what it really sent and when, readable at
//! `GET /sim/truth`. Like vLLM it answers `GET /metrics` from its true state and
//! `POST /reset_prefix_cache` (like SGLang, `/flush_cache`), and the truth log records each of those too. Start one
//! in-process with [`spawn`]; the `strobe-sim` binary wraps it.
//!
//! Module map: pure parts first — [`model`] (latency model on a virtual clock),
//! [`prefix_cache`], [`contract`] (what the model says), [`faults`], [`wire`] (bytes on the
//! wire), [`metrics`] (its `/metrics` in vLLM's names), [`rng`] — then the runtime:
//! [`engine`], [`http`], [`truth`], and the private parts:
//! the shared state, replies (with CORS), the request pipeline both endpoints share (`request`, `job`,
//! then `respond`) with what each reads of its body (`chat`, `completions`), and the server that
//! routes to them.

pub mod config;
pub mod contract;
pub mod engine;
pub mod faults;
pub mod http;
pub mod metrics;
pub mod model;
pub mod prefix_cache;
pub mod rng;
pub mod truth;
pub mod wire;

mod chat;
mod completions;
mod job;
mod reply;
mod request;
mod respond;
mod server;
mod shared;

pub use config::{Args, ConfigError, SimConfig};
pub use faults::Fault;
pub use server::{spawn, Running, SimError};
pub use truth::{
    Api, Outcome, ReceivedJson, ScrapeEndpoint, ScrapeRecord, Stamp, TruthLog, TruthPage,
    TruthRecord, TruthTimes,
};
