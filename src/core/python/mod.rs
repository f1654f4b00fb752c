//! Bit-exact ports of what the reference producer (Python 3.11) computes, so an artifact strobe
//! writes is the artifact the reference tool would write from the same inputs:
//!
//! - [`random`]: CPython's `random.Random(int)` (MT19937 keyed from an integer seed, and
//!   `random()`), which fixes the sampled context plan;
//! - [`stats`]: `math.fsum`, `statistics.fmean` / `stdev` / `mean` on exact fractions, the
//!   nearest-rank percentile and the 13-key distribution summary;
//! - [`json`]: `json.dumps(…, indent=2, sort_keys=True)` with Python's float `repr`;
//! - [`time`]: UTC-second labels from Unix nanoseconds and ISO-8601 labels read like
//!   `datetime.fromisoformat`.
//!
//! Nothing here knows the artifact's fields; the modules above decide what to feed them.

pub mod json;
pub mod random;
pub mod stats;
pub mod time;
