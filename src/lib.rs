//! strobe: benchmark LLM serving endpoints from the browser.
//!
//! [`core`] is pure: it never reads a clock, touches the DOM or depends on a browser crate, so
//! `cargo test` on the host proves it. `web` is the browser layer (transport, clock, scheduler,
//! components, files) and exists only when compiling for `wasm32`.

pub mod core;

#[cfg(target_arch = "wasm32")]
pub mod web;
