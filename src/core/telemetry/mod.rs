//! The server's own view of a run: its `/metrics` answers read, named and summarized
//! (docs/telemetry.md). Pure, like the rest of the core: the page scrapes, stamps each answer
//! with the run's clock and hands the bytes here.
//!
//! In pipeline order:
//! - [`exposition`]: Prometheus text (0.0.4; OpenMetrics tolerated) to one flat map of names
//!   to values summed over label sets, hostile text bounded and noted, never a panic;
//! - [`engines`]: which engine's names an answer uses, and where vLLM, SGLang, llama.cpp and
//!   TGI keep the common series (running, waiting, KV-cache use, prefix-cache hits, tokens, …).

pub mod engines;
pub mod exposition;
