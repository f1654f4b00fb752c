//! The browser layer of strobe (compiled for wasm32 only), glue around [`crate::core`], by
//! thread and role:
//!
//! - `ui`: the page's components (forms, live numbers, results, library, charts): they render
//!   view models from `core::present` and call the state's verbs;
//! - `run`: the page's side of a run: checking the endpoint, starting the measurement on the
//!   chosen thread (hosting the measurement worker), following its progress;
//! - `state`: the page's state (a type with verbs) and the library, below `ui` and `run`;
//! - `measure`: what runs on the measuring thread (the worker, or the page in main-thread
//!   mode): the worker's entry, the scheduler, warm-up, rehearsal and dry run, Resource Timing,
//!   the fetch transport;
//! - `platform`: the browser's clocks, timers, global scope, storage and files;
//! - `js`: the JavaScript this layer runs (`.js` modules) and its typed bindings.
//!
//! Arrows point down: `ui` uses `run` and `state`; `run` uses `state`, `measure` and `platform`;
//! `state` imports neither; nothing imports `ui` but the entry point (`tests/architecture.rs`).
//! See docs/design/architecture.md for how a byte becomes a row.

mod js;
mod measure;
mod platform;
mod run;
mod state;
mod ui;

pub use measure::reading::{is_reader, serve_reading};
pub use measure::worker::serve_measurements;
pub use ui::app::App;
