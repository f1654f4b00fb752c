//! What runs on the measuring thread: the dedicated measurement worker by default
//! ([`worker`] is its entry), or the page's own thread with *Measure in: main*. The
//! [`scheduler`] warms the connections up, rehearses, and keeps `concurrency` requests in flight
//! through the fetch [`transport`]; nothing here renders. A workload file is read off the
//! page's thread too, by a worker of its own ([`reading`]).

pub mod live_run;
mod open_loop;
pub mod prepare;
pub mod reading;
mod request;
mod resource_timing;
pub mod scheduler;
mod sessions;
pub mod transport;
mod warmup;
pub mod worker;

#[cfg(feature = "bench-hooks")]
pub mod read_bench;
