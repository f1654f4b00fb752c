//! What runs on the measuring thread: the dedicated measurement worker by default
//! ([`worker`] is its entry), or the page's own thread with *Measure in: main*. The
//! [`scheduler`] warms the connections up, rehearses, and keeps `concurrency` requests in flight
//! through the fetch [`transport`]; nothing here renders.

pub mod live_run;
mod open_loop;
pub mod prepare;
mod request;
mod resource_timing;
pub mod scheduler;
mod sessions;
pub mod transport;
mod warmup;
pub mod worker;

#[cfg(feature = "bench-hooks")]
pub mod read_bench;
