//! The pure core of strobe: everything that can be decided without a clock, a network or a DOM.
//!
//! Timestamps enter as `f64` milliseconds from the caller, so the same code is exact in native
//! tests and in the browser. The modules follow the pipeline, listed here from the bottom up, and
//! each imports only from those before it (`tests/architecture.rs` holds them to this order):
//!
//! - [`format`](mod@format): leaf text helpers (numbers, counts, previews, file stems);
//! - [`python`]: bit-exact ports of the reference producer's Python (random, stats, JSON, time);
//! - [`inference`]: the statistical tests and intervals that say whether a difference is real;
//! - [`config`]: the settings, their bounds, the form's fields, the form, the link, `/models`;
//! - [`schema`]: every serde type of the artifact file, the values its fields take, its
//!   generation, and why one cannot be written: the vocabulary the stages above fill and read;
//! - [`workload`]: a user's own traffic read from a file (prompts, conversations, traces);
//! - [`load`]: open-loop load: the arrival schedule and the dispatcher that keeps it;
//! - [`plan`]: everything fixed before the first request;
//! - [`stream`]: bytes to SSE events to the chunk fields the measurement reads;
//! - [`observe`]: timestamped events to a row or a failure record, per request;
//! - [`telemetry`]: the server's own `/metrics` read, mapped to common series, summarized;
//! - [`prompt`]: the prompts and request bodies, a session's next turn from the last reply;
//! - [`artifact`]: the artifact built from a plan and what was observed, its metrics, a
//!   download's file, a file's fields recomputed;
//! - [`read`]: validating a file (§9) and reading it for the results pages;
//! - [`slo`]: requests judged against a service-level objective: attainment, goodput,
//!   capacity at SLO;
//! - [`live`]: the messages between the page and the measuring thread, and the running tally;
//! - [`present`]: chart options, comparison, verdicts and exports.

pub mod format;
pub mod inference;
pub mod python;

pub mod config;
pub mod schema;

pub mod load;
pub mod plan;
pub mod workload;

pub mod observe;
pub mod stream;
pub mod telemetry;

pub mod artifact;
pub mod prompt;

pub mod read;

pub mod live;
pub mod slo;

pub mod present;
