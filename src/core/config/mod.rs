//! What a user chooses, before anything is planned: the settings and their bounds, the spellings
//! of each choice, the form's field table, the form itself, the page's link (query string), and
//! what a server's `/models` answer tells about them.
//!
//! - [`bounds`]: the bounds of every numeric setting, written once for the table and the rules;
//! - [`choices`]: the settings with fixed spellings (one table each);
//! - [`error`]: a setting out of bounds, with the field to fix and what is allowed;
//! - [`settings`]: [`RunConfig`](settings::RunConfig), its bounds and validation;
//! - [`load`]: the load shape (closed loop, or a request rate with its arrivals);
//! - [`metrics`]: where a server's metrics are, and the scrape interval's bounds;
//! - [`cache_reset`]: where each engine empties its prefix cache, or why it cannot;
//! - [`fields`]: the field table the form, the link and their help text read;
//! - [`form`]: the run form (raw text per field) and its parsing into a `RunConfig`;
//! - [`link`]: the page's query string, both ways, with secrets refused;
//! - [`models`]: model ids and the context window from a `/models` body;
//! - [`pool`]: endpoint pools strobe makes itself (a local server's loopback aliases);
//! - [`sweep`]: a sweep as asked for (its variable, values, stop rules);
//! - [`slo`]: a service-level objective as written (`ttft:500,tpot:50`) and its target;
//! - [`workload`]: how a workload file's records are sent (turns, order, history, speed).

pub mod bounds;
pub mod cache_reset;
pub mod choices;
pub mod error;
pub mod fields;
pub mod form;
pub mod link;
pub mod load;
pub mod metrics;
pub mod models;
pub mod pool;
pub mod settings;
pub mod slo;
pub mod sweep;
pub mod workload;
