//! The pure core of strobe: everything that can be decided without a clock, a network or a DOM.
//!
//! Timestamps enter as `f64` milliseconds from the caller, so the same code is exact in native
//! tests and in the browser. The modules follow the pipeline, and each imports only from those
//! above it (`artifact::schema` holds the artifact's types for the stages that fill them):
//!
//! - [`format`](mod@format): leaf text helpers (numbers, counts, previews, file stems);
//! - [`python`]: bit-exact ports of the reference producer's Python (random, stats, JSON, time);
//! - [`config`]: the settings, their bounds, the form's fields, the form, the link, `/models`;
//! - [`workload`]: a user's own traffic read from a file (prompts, conversations, traces);
//! - [`load`]: open-loop load: the arrival schedule and the dispatcher that keeps it;
//! - [`plan`]: everything fixed before the first request; [`prompt`]: the prompts and bodies;
//! - [`stream`]: bytes to SSE events to the chunk fields the measurement reads;
//! - [`observe`]: timestamped events to a row or a failure record, per request;
//! - [`telemetry`]: the server's own `/metrics` read, mapped to common series, summarized;
//! - [`artifact`]: the artifact's types, its metrics, building it, recomputing a file;
//! - [`read`]: validating a file (§9) and reading it for the results pages;
//! - [`slo`]: requests judged against a service-level objective: attainment, goodput,
//!   capacity at SLO;
//! - [`live`]: the messages between the page and the measuring thread, and the running tally;
//! - [`inference`]: the statistical tests and intervals that say whether a difference is real;
//! - [`present`]: chart options, comparison, verdicts and exports.

pub mod format;
pub mod python;

pub mod config;
pub mod load;
pub mod plan;
pub mod prompt;
pub mod workload;

pub mod stream;

pub mod observe;

pub mod telemetry;

pub mod artifact;

pub mod read;

pub mod slo;

pub mod live;

pub mod inference;

pub mod present;
