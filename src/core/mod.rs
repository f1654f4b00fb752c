//! The pure core of strobe: everything that can be decided without a clock, a network or a DOM.
//!
//! Timestamps enter as `f64` milliseconds from the caller, so the same code is exact in native
//! tests and in the browser.

pub mod artifact;
pub mod charts;
pub mod chunk_json;
pub mod compare;
pub mod export;
pub mod form;
pub mod live;
pub mod loaded;
pub mod observe;
pub mod plan;
pub mod prompt;
pub mod pyjson;
pub mod pyrandom;
pub mod reading;
pub mod sse;
pub mod stats;
pub mod validate;
