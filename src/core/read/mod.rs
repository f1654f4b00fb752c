//! Reading artifact files: may strobe trust this file ([`validate`], every §9 rule with a path
//! and a rule id, for all four generations), and what do the results pages need from it
//! ([`loaded`], extracted tolerantly, every string kept as capped data), and the artifacts inside
//! a dropped `.zip` ([`bundle`]).

pub mod bundle;
pub mod loaded;
pub mod validate;
