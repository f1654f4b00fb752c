//! The page's side of a run, on the page's thread: the endpoint check before it ([`preflight`])
//! and the context calibration ([`calibrate`]), starting it ([`start`]), one measurement planned, followed and filed ([`context`]), a
//! sweep's steps in turn ([`sweep`]), the library kept across reloads ([`keep`]) with the
//! checkpoints of a run in progress ([`checkpoint`]) and the runs links carry ([`link`]), the server's metrics beside a run ([`metrics`]), the prefix-cache reset before it ([`reset`]), reading a workload file off the page's thread ([`workload`]), running the measurement on the chosen thread and hosting
//! the measurement worker ([`host`]). What it changes on the page goes through the verbs of
//! [`AppState`](crate::web::state::AppState); it never imports a component.

pub mod calibrate;
pub mod checkpoint;
pub mod context;
pub mod host;
pub mod keep;
pub mod link;
pub mod metrics;
pub mod preflight;
pub mod reset;
pub mod start;
pub mod sweep;
pub mod workload;
