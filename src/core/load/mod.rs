//! Load shapes beyond the reference tool's closed loop: the arrival schedule of a request-rate
//! run, drawn up front from its seed ([`schedule`]), and the open-loop dispatcher that sends
//! each request at its time without exceeding the cap on requests in flight ([`dispatch`]), and
//! sweeps: a series of runs over one variable ([`sweep`]).
//! Pure: times are milliseconds from the run's start, given by the caller.

pub mod dispatch;
pub mod schedule;
pub mod sweep;
