//! Reading artifact files: may strobe trust this file ([`validate`], every §9 rule with a path
//! and a rule id, for all four generations), and what do the results pages need from a dropped
//! file ([`opened`]: an artifact extracted tolerantly, every string kept as capped data, or
//! another tool's results, or the records of a plan run on Locust's workers), and the artifacts
//! inside a dropped `.zip` ([`bundle`]), and the artifacts a strobe report carries
//! ([`carried`]), and the run a link carries in its fragment ([`link`]).
//!
//! From the bottom up: `validate` and `carried`, then `opened`, then `bundle` and `link`, which
//! open what they find.

pub mod bundle;
pub mod carried;
pub mod link;
pub mod opened;
pub mod validate;
