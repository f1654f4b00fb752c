//! What the results pages show, built from [`crate::core::read`]'s opened runs and never the
//! reverse: chart options ([`charts`]), the comparison of runs with its workload-difference flags
//! ([`compare`]) and its verdict, whether a difference is more than noise ([`verdict`]), repeated
//! runs' groups ([`repeats`]), the capacity view's curves ([`capacity`]), where a running sweep is
//! in words ([`sweep_status`]) and its table of runs ([`sweep_table`]), the exports
//! ([`export`]), a conversation run's TTFT by turn ([`turns`]), and a finished run's headline
//! cards ([`headline`]) and its whole summary ([`summary`]) and the library's table
//! ([`library`]); and the one-file HTML report of
//! all of it ([`report`]); what a run says of its server ([`server`]) and of the prefix-cache
//! reset before it ([`cache_reset`]).

pub mod cache_reset;
pub mod capacity;
pub mod charts;
pub mod compare;
pub mod export;
pub mod headline;
pub mod library;
pub mod repeats;
pub mod report;
pub mod server;
pub mod summary;
pub mod sweep_status;
pub mod sweep_table;
pub mod turns;
pub mod verdict;
