//! The `anvil-serving.benchmark/v1` artifact built from a run, and a file's recomputation. The
//! file's types are [`crate::core::schema`]'s, below every stage that fills them; this folder
//! stands above those stages (`observe`, `load`, `telemetry`, `plan`) and assembles their work.
//!
//! In order: [`metrics`] (the §7 metrics from the rows), [`client`] (the `client` block from a
//! run's observations) and [`from_wire`] (`client.from_wire` from the rows), [`load`] (the `load`
//! block of an open-loop run), [`workload`] (the `workload` block and each row's place in a
//! workload file), [`build`] (a plan, one outcome per planned request and the caller's
//! [`RunTiming`](build::RunTiming) to an [`ArtifactV1`](crate::core::schema::ArtifactV1): §7
//! metrics, §8.1 fields, §8.2 `metric_population`, §8.3 `timing_methodology`), [`file`](mod@file)
//! (an artifact as the file a download saves, redacted or not), [`recompute`] (every field of an
//! artifact file that its rows determine, recomputed and compared bit for bit).
//!
//! Like the rest of the core it never reads a clock: the caller supplies the run's timing.

pub mod build;
pub mod client;
pub mod file;
pub mod from_wire;
pub mod load;
pub mod metrics;
pub mod recompute;
pub mod workload;

#[cfg(test)]
mod tests;
