//! The page's side of a run, on the page's thread: the endpoint check before it ([`preflight`])
//! and the context calibration ([`calibrate`]), starting it ([`start`]), one measurement planned, followed and filed ([`context`]), a
//! sweep's steps in turn ([`sweep`]), running the measurement on the chosen thread and hosting
//! the measurement worker ([`host`]), and why a run can end without an artifact ([`error`]).

pub mod calibrate;
pub mod context;
pub mod error;
pub mod host;
pub mod preflight;
pub mod start;
pub mod sweep;
