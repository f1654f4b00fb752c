//! The bounds of every numeric setting, written once ([`WholeBounds`], [`DecimalBounds`] and
//! the constants they are made of): the field table ([`FIELDS`](super::fields::FIELDS)) holds
//! them for its inputs and help texts, and the rules of
//! [`RunConfig::validate`](super::settings::RunConfig::validate) and the form check values and
//! word their messages with the same constants. A leaf: it imports nothing, so every config
//! module may read it.

use std::fmt;
use std::ops::RangeInclusive;

/// Inclusive bounds of a whole-number setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WholeBounds {
    /// Smallest accepted value.
    pub min: i64,
    /// Largest accepted value.
    pub max: i64,
}

impl WholeBounds {
    /// Any `i64` (a seed): no bound to name.
    pub const ANY: Self = Self {
        min: i64::MIN,
        max: i64::MAX,
    };

    /// The bounds of a `u64` setting; every such bound here is far below `i64::MAX`, and a
    /// larger one saturates instead of wrapping.
    pub const fn unsigned(min: u64, max: u64) -> Self {
        const fn saturate(value: u64) -> i64 {
            if value > i64::MAX as u64 {
                i64::MAX
            } else {
                value as i64
            }
        }
        Self {
            min: saturate(min),
            max: saturate(max),
        }
    }

    /// The bounds of an inclusive `u64` range.
    pub const fn of(range: RangeInclusive<u64>) -> Self {
        Self::unsigned(*range.start(), *range.end())
    }

    /// Whether `value` is within the bounds.
    pub fn admits(self, value: u64) -> bool {
        (i128::from(self.min)..=i128::from(self.max)).contains(&i128::from(value))
    }

    /// Whether a signed `value` is within the bounds.
    pub fn admits_signed(self, value: i64) -> bool {
        (self.min..=self.max).contains(&value)
    }

    /// Whether these are [`Self::ANY`], which a help text does not spell out.
    pub fn is_any(self) -> bool {
        self == Self::ANY
    }
}

/// `min–max`, as help texts write a range (`1–10000`).
impl fmt::Display for WholeBounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}–{}", self.min, self.max)
    }
}

/// Bounds of a finite decimal setting: `min` (exclusive when `min_exclusive`) to `max`
/// (inclusive).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DecimalBounds {
    /// Lower bound.
    pub min: f64,
    /// Upper bound (inclusive).
    pub max: f64,
    /// Whether `min` itself is refused (`timeout_s` and `top_p` must be above 0).
    pub min_exclusive: bool,
}

impl DecimalBounds {
    /// From `min` to `max`, both accepted.
    pub const fn from_to(min: f64, max: f64) -> Self {
        Self {
            min,
            max,
            min_exclusive: false,
        }
    }

    /// Above `min` and at most `max`.
    pub const fn above(min: f64, max: f64) -> Self {
        Self {
            min,
            max,
            min_exclusive: true,
        }
    }

    /// Whether `value` is finite and within the bounds.
    pub fn admits(self, value: f64) -> bool {
        let above_min = if self.min_exclusive {
            value > self.min
        } else {
            value >= self.min
        };
        value.is_finite() && above_min && value <= self.max
    }
}

/// `min–max`, or `above min and at most max` when `min` is refused, as help texts and messages
/// write a range (`f64`'s Display: `0.01`, `10000`).
impl fmt::Display for DecimalBounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.min_exclusive {
            write!(f, "above {} and at most {}", self.min, self.max)
        } else {
            write!(f, "{}–{}", self.min, self.max)
        }
    }
}

/// Largest `requests` value (`--requests` is 1..=10000).
pub const MAX_REQUESTS: u64 = 10_000;
/// Largest `concurrency` and `burst` value.
pub const MAX_CONCURRENCY: u64 = 256;
/// Largest `shared_prefix_tokens` value.
pub const MAX_SHARED_PREFIX_TOKENS: u64 = 262_144;
/// Largest value of the token-count settings `context_tokens`, `max_model_len` and `margin`.
pub const MAX_CONTEXT_SETTING_TOKENS: u64 = 1_048_576;
/// Smallest nonzero `context_tokens` value.
pub const MIN_FIXED_CONTEXT_TOKENS: u64 = 32;
/// Largest `max_tokens` and `response_words` value.
pub const MAX_OUTPUT_SETTING: u64 = 65_536;
/// Smallest `max_tokens` when request canaries are on (the marker itself needs room).
pub const MIN_MAX_TOKENS_WITH_CANARIES: u64 = 16;
/// Largest `timeout_s` value, in seconds.
pub const MAX_TIMEOUT_S: f64 = 3_600.0;
/// Largest `temperature` value.
pub const MAX_TEMPERATURE: f64 = 2.0;

/// Lowest and highest `rate` and `ramp_start_rate`, requests per second.
pub const MIN_RATE: f64 = 0.01;
/// Highest request rate.
pub const MAX_RATE: f64 = 10_000.0;
/// Highest `burstiness` (the gamma shape); above 0.
pub const MAX_BURSTINESS: f64 = 100.0;
/// Longest ramp, seconds.
pub const MAX_RAMP_S: f64 = 3_600.0;
/// Longest `duration_s`, seconds (a day).
pub const MAX_DURATION_S: f64 = 86_400.0;
/// Fewest and most steps of an `auto` sweep (the synchronous and throughput steps included).
pub const AUTO_STEPS: RangeInclusive<u64> = 3..=20;
/// The longest cool-down between steps, seconds.
pub const MAX_COOLDOWN_S: f64 = 600.0;
/// How many times `repeats` may run the same plan (issue #36: one run is one sample).
pub const REPEATS: RangeInclusive<u64> = 1..=20;

/// The longest wait before a session's next turn, in ms (10 minutes).
pub const MAX_THINK_TIME_MS: u64 = 600_000;
/// Slowest and fastest trace replay: a trace plays at its timestamps divided by the speed.
pub const MIN_TRACE_SPEED: f64 = 0.01;
/// See [`MIN_TRACE_SPEED`].
pub const MAX_TRACE_SPEED: f64 = 1000.0;

/// The scrape interval's bounds, ms.
pub const INTERVAL_MS: RangeInclusive<u64> = 100..=60_000;

/// `server_metrics_interval_ms`.
pub const SERVER_METRICS_INTERVAL_MS_BOUNDS: WholeBounds = WholeBounds::of(INTERVAL_MS);
/// `requests`.
pub const REQUESTS_BOUNDS: WholeBounds = WholeBounds::unsigned(1, MAX_REQUESTS);
/// `concurrency` (also a concurrency sweep's values).
pub const CONCURRENCY_BOUNDS: WholeBounds = WholeBounds::unsigned(1, MAX_CONCURRENCY);
/// `burst` (0 sends no burst).
pub const BURST_BOUNDS: WholeBounds = WholeBounds::unsigned(0, MAX_CONCURRENCY);
/// `rate` and `ramp_start_rate` (also a rate sweep's values), requests per second.
pub const RATE_BOUNDS: DecimalBounds = DecimalBounds::from_to(MIN_RATE, MAX_RATE);
/// `burstiness`.
pub const BURSTINESS_BOUNDS: DecimalBounds = DecimalBounds::above(0.0, MAX_BURSTINESS);
/// `ramp_s`, seconds.
pub const RAMP_S_BOUNDS: DecimalBounds = DecimalBounds::from_to(0.0, MAX_RAMP_S);
/// `duration_s`, seconds.
pub const DURATION_S_BOUNDS: DecimalBounds = DecimalBounds::above(0.0, MAX_DURATION_S);
/// `sweep_steps`.
pub const SWEEP_STEPS_BOUNDS: WholeBounds = WholeBounds::of(AUTO_STEPS);
/// `sweep_max_error`, a share.
pub const SWEEP_MAX_ERROR_BOUNDS: DecimalBounds = DecimalBounds::from_to(0.0, 1.0);
/// `sweep_min_attainment`, a percentage.
pub const SWEEP_MIN_ATTAINMENT_BOUNDS: DecimalBounds = DecimalBounds::from_to(0.0, 100.0);
/// `sweep_cooldown_s`, seconds.
pub const SWEEP_COOLDOWN_S_BOUNDS: DecimalBounds = DecimalBounds::from_to(0.0, MAX_COOLDOWN_S);
/// `repeats`.
pub const REPEATS_BOUNDS: WholeBounds = WholeBounds::of(REPEATS);
/// `slo_target`, a percentage.
pub const SLO_TARGET_BOUNDS: DecimalBounds = DecimalBounds::above(0.0, 100.0);
/// `context_tokens`: 0 (sample the distribution) or a fixed context in
/// [`FIXED_CONTEXT_TOKENS_BOUNDS`].
pub const CONTEXT_TOKENS_BOUNDS: WholeBounds = WholeBounds::unsigned(0, MAX_CONTEXT_SETTING_TOKENS);
/// A fixed (nonzero) `context_tokens`.
pub const FIXED_CONTEXT_TOKENS_BOUNDS: WholeBounds =
    WholeBounds::unsigned(MIN_FIXED_CONTEXT_TOKENS, MAX_CONTEXT_SETTING_TOKENS);
/// `shared_prefix_tokens`.
pub const SHARED_PREFIX_TOKENS_BOUNDS: WholeBounds =
    WholeBounds::unsigned(0, MAX_SHARED_PREFIX_TOKENS);
/// `max_tokens` (at least [`MIN_MAX_TOKENS_WITH_CANARIES`] with request canaries).
pub const MAX_TOKENS_BOUNDS: WholeBounds = WholeBounds::unsigned(1, MAX_OUTPUT_SETTING);
/// `response_words`.
pub const RESPONSE_WORDS_BOUNDS: WholeBounds = WholeBounds::unsigned(0, MAX_OUTPUT_SETTING);
/// `think_time_ms`.
pub const THINK_TIME_MS_BOUNDS: WholeBounds = WholeBounds::unsigned(0, MAX_THINK_TIME_MS);
/// `trace_speed`.
pub const TRACE_SPEED_BOUNDS: DecimalBounds =
    DecimalBounds::from_to(MIN_TRACE_SPEED, MAX_TRACE_SPEED);
/// `temperature`.
pub const TEMPERATURE_BOUNDS: DecimalBounds = DecimalBounds::from_to(0.0, MAX_TEMPERATURE);
/// `top_p`.
pub const TOP_P_BOUNDS: DecimalBounds = DecimalBounds::above(0.0, 1.0);
/// `timeout_s`, seconds.
pub const TIMEOUT_S_BOUNDS: DecimalBounds = DecimalBounds::above(0.0, MAX_TIMEOUT_S);
/// `max_model_len` (0 discovers it).
pub const MAX_MODEL_LEN_BOUNDS: WholeBounds = WholeBounds::unsigned(0, MAX_CONTEXT_SETTING_TOKENS);
/// `margin`.
pub const MARGIN_BOUNDS: WholeBounds = WholeBounds::unsigned(0, MAX_CONTEXT_SETTING_TOKENS);
