//! What runs on the measuring thread: the dedicated measurement worker by default
//! ([`worker`] is its entry), or the page's own thread with *Measure in: main*. Nothing here
//! renders. The modules, from the bottom up, as `tests/architecture.rs` holds them:
//!
//! - [`reading`]: a workload file read off the page's thread, by a worker of its own;
//! - [`transport`]: one `fetch()` and its stream's reads (or a synthetic stream, with nothing
//!   sent); [`live_run`]: a run's shared state and setup; `resource_timing`: what the browser
//!   says about each request's connection;
//! - `send`: one request on the wire under the run's watch; `body`: what it sends; `request`:
//!   one measured request from its body to its row;
//! - the loops of a measured run: `slots` (closed loop), `open_loop` (arrival schedule),
//!   `sessions` (conversations);
//! - the stages before it: [`prepare`] (bodies ahead, rehearsal, dry run) and `warmup`;
//! - [`scheduler`]: the stages in order, then the artifact; [`worker`]: the worker's entry.

mod body;
pub mod live_run;
mod open_loop;
pub mod prepare;
pub mod reading;
mod request;
mod resource_timing;
pub mod scheduler;
mod send;
mod sessions;
mod slots;
pub mod transport;
mod warmup;
pub mod worker;

#[cfg(feature = "bench-hooks")]
pub mod read_bench;
