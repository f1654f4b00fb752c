//! strobe: benchmark LLM serving endpoints from the browser.
//!
//! [`core`] is pure: it never reads a clock, touches the DOM or depends on a browser crate, so
//! `cargo test` on the host proves it. `web` is the browser layer (transport, clock, scheduler,
//! components, files) and exists only when compiling for `wasm32`.

// The size benchmark's probe build leaves out the results side (Cargo.toml, `size-probe`), so
// what only it uses, and imports of it, are unused there; the shipped build keeps every warning.
#![cfg_attr(feature = "size-probe", allow(dead_code, unused_imports))]

pub mod core;

#[cfg(target_arch = "wasm32")]
pub mod web;
