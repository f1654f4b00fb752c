//! The page's components: the application shell, the run form and live numbers, the results
//! of the last run (and sweep), the artifact library with its charts and comparisons, and the one
//! `<EChart>` component that owns every ECharts instance. Components only: the work they start
//! is [`crate::web::run`]'s, what they change goes through [`crate::web::state`]'s verbs, and
//! every number they show comes from [`crate::core`].

pub mod analysis;
pub mod app;
pub mod capacity;
pub mod controls;
pub mod echart;
pub mod library;
pub mod live_charts;
pub mod notes;
pub mod part;
pub mod repeats;
pub mod report;
pub mod results;
pub mod run_view;
pub mod share;
pub mod slo;
pub mod sweep;
pub mod turns;
pub mod verdict;
pub mod workload;
