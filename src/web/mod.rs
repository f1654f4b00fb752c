//! The browser layer of strobe (compiled for wasm32 only): components, transport, clock, files.

mod app;

pub use app::App;
