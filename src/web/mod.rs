//! The browser layer of strobe (compiled for wasm32 only): components, transport, clock,
//! scheduler, files and storage. Everything here is glue around `crate::core`.

mod analysis;
mod app;
mod clock;
mod echart;
mod files;
mod library;
mod live_charts;
mod measure_worker;
mod measurement;
mod preflight;
mod read_bench;
mod results;
mod run_view;
mod runner;
mod scope;
mod state;
mod storage;
mod timers;
mod transport;

pub use app::App;
pub use measure_worker::serve_measurements;
