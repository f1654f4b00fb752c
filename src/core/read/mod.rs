//! Reading artifact files: may strobe trust this file ([`validate`], every §9 rule with a path
//! and a rule id, for all four generations), and what do the results pages need from it
//! ([`opened`], extracted tolerantly, every string kept as capped data), and the artifacts inside
//! a dropped `.zip` ([`bundle`]), and other tools' results files ([`foreign`]: vLLM, GuideLLM,
//! AIPerf), and the records of a plan run on Locust's workers ([`locust`]), and the artifacts a
//! strobe report carries ([`carried`]), and the run a link carries in its fragment ([`link`]).

pub mod bundle;
pub mod carried;
pub mod foreign;
pub mod link;
pub mod locust;
pub mod opened;
pub mod validate;
