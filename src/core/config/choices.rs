//! The settings whose values are fixed spellings (prompt cache mode, thinking mode, reasoning
//! effort, controlled-output policy, measurement thread, live view): one table per setting that
//! serde, `as_str`, `Display` and `FromStr` all read, so the artifact, the form and the link
//! never disagree on a spelling.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A string that is not one of a setting's allowed spellings.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{field} must be one of {} (got {got:?})", .allowed.join(", "))]
pub struct ParseChoiceError {
    /// The setting (artifact field / query key), e.g. `"thinking_mode"`.
    pub field: &'static str,
    /// The rejected text.
    pub got: String,
    /// The accepted spellings.
    pub allowed: &'static [&'static str],
}

/// Declares a setting whose values are fixed lowercase strings in the artifact, with serde,
/// `as_str`, `Display`, `FromStr` and the list of all values agreeing on one spelling table.
macro_rules! choice_enum {
    (
        $(#[$meta:meta])*
        $name:ident for $field:literal {
            $( $(#[$variant_meta:meta])* $variant:ident => $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $( $(#[$variant_meta])* #[serde(rename = $text)] $variant, )+
        }

        impl $name {
            /// Every value, in the order the spec lists them (for pickers).
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The spelling the artifact and the CLI use.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Self::$variant => $text, )+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = ParseChoiceError;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                match text {
                    $( $text => Ok(Self::$variant), )+
                    _ => Err(ParseChoiceError {
                        field: $field,
                        got: text.to_owned(),
                        allowed: &[$($text),+],
                    }),
                }
            }
        }
    };
}

choice_enum! {
    /// Which OpenAI API the requests go to (the `endpoint` link key).
    #[derive(Default)]
    ApiEndpoint for "endpoint" {
        /// `POST {base_url}/chat/completions` with `messages`, reading `choices[].delta.content`.
        #[default]
        Chat => "chat",
        /// `POST {base_url}/completions` with `prompt`, reading `choices[].text` (the default
        /// of `vllm bench serve`).
        Completions => "completions",
    }
}

choice_enum! {
    /// The order a workload's records are sent in (the `workload_order` key).
    #[derive(Default)]
    WorkloadOrder for "workload_order" {
        /// The file's order.
        #[default]
        File => "file",
        /// Shuffled by `workload_seed` (the same seed gives the same order).
        Shuffle => "shuffle",
    }
}

choice_enum! {
    /// Where a workload request's `max_tokens` comes from (the `output_lengths` key).
    #[derive(Default)]
    OutputLengths for "output_lengths" {
        /// The record's own output length, the form's `max_tokens` where it has none.
        #[default]
        File => "file",
        /// The form's `max_tokens` for every request.
        Fixed => "fixed",
    }
}

choice_enum! {
    /// Which assistant messages a session's later turns carry as history (the `history` key).
    #[derive(Default)]
    HistoryMode for "history" {
        /// The server's own replies to the earlier turns, as they streamed in.
        #[default]
        Live => "live",
        /// The replies the file recorded (every server gets the same bytes).
        Recorded => "recorded",
    }
}

choice_enum! {
    /// Whether requests share one long prefix (exercising the server's prefix cache) or each
    /// carries its own content (`prompt_cache_mode`).
    #[derive(Default)]
    PromptCacheMode for "prompt_cache_mode" {
        /// One shared prefix of `shared_prefix_tokens` before each request's own filler.
        #[default]
        Shared => "shared",
        /// No shared prefix; each prompt opens with a per-request header.
        Unique => "unique",
    }
}

choice_enum! {
    /// What a response that misses the `response_words` contract does to the request
    /// (`controlled_output_policy`).
    #[derive(Default)]
    ControlledOutputPolicy for "controlled_output_policy" {
        /// Record adherence, keep the request (historical behaviour).
        #[default]
        Observe => "observe",
        /// Reject non-exact or truncated completions as failures.
        Strict => "strict",
    }
}

choice_enum! {
    /// How the request controls the model's thinking (`serve_flags.thinking_mode`).
    #[derive(Default)]
    ThinkingMode for "thinking_mode" {
        /// Send no thinking control; the server's template decides.
        #[default]
        Default => "default",
        /// Send `chat_template_kwargs.enable_thinking = true`.
        Enabled => "enabled",
        /// Send `chat_template_kwargs.enable_thinking = false`.
        Disabled => "disabled",
        /// The model has no thinking control; send none and record that.
        Unsupported => "unsupported",
    }
}

choice_enum! {
    /// The `reasoning_effort` request field.
    ReasoningEffort for "reasoning_effort" {
        /// `"none"`: ask for no reasoning.
        None => "none",
        /// `"minimal"`.
        Minimal => "minimal",
        /// `"low"`.
        Low => "low",
        /// `"medium"`.
        Medium => "medium",
        /// `"high"`.
        High => "high",
        /// `"max"`.
        Max => "max",
        /// `"xhigh"`.
        Xhigh => "xhigh",
    }
}

choice_enum! {
    /// Which thread of the browser takes the measurements (the `measurement` link key).
    #[derive(Default)]
    MeasurementThread for "measurement" {
        /// A dedicated Web Worker runs the transport, the clock and the stream decoding; the
        /// page's thread only renders, so drawing, layout and garbage collection there cannot
        /// delay a read's timestamp.
        #[default]
        Worker => "worker",
        /// The page's own thread, shared with rendering: kept to compare against.
        Main => "main",
    }
}

choice_enum! {
    /// When the page shows a run's progress (the `live_view` link key).
    #[derive(Default)]
    LiveView for "live_view" {
        /// Counters and running medians four times a second, charts too when asked for.
        #[default]
        During => "during",
        /// Nothing new until the run ends: no page work competes with the measurement (on
        /// the page's own thread, drawing shares the thread that stamps the reads).
        End => "end",
    }
}

choice_enum! {
    /// How requests are sent (the `load` link key): a fixed number in flight, or on a schedule.
    #[derive(Default)]
    LoadMode for "load" {
        /// Closed loop: exactly `concurrency` requests in flight until all are done.
        #[default]
        Concurrency => "concurrency",
        /// Open loop: each request sent at its scheduled time, `rate` a second, with at most
        /// `concurrency` in flight.
        Rate => "rate",
    }
}

choice_enum! {
    /// How the gaps between scheduled requests are drawn (the `arrivals` link key).
    #[derive(Default)]
    Arrivals for "arrivals" {
        /// Exponential gaps of mean `1 / rate`: a Poisson process.
        #[default]
        Poisson => "poisson",
        /// Every gap exactly `1 / rate`.
        Constant => "constant",
        /// Gamma gaps of shape `burstiness` and mean `1 / rate`: 1 is Poisson, below 1
        /// burstier, above 1 smoother (vLLM's meaning of burstiness).
        Gamma => "gamma",
    }
}

choice_enum! {
    /// How many turns of a recorded conversation a workload file plays (the `workload_turns`
    /// link key): ShareGPT and OpenAI chat records with several user turns.
    #[derive(Default)]
    WorkloadTurns for "workload_turns" {
        /// One request a record, as vLLM and SGLang read ShareGPT: the first turn is the prompt,
        /// the recorded reply's length its output length (chat records: all messages at once).
        #[default]
        First => "first",
        /// Every user turn is a turn of a session, sent with the history before it.
        All => "all",
    }
}

choice_enum! {
    /// When the server's prefix cache is emptied (the `reset_prefix_cache` link key;
    /// docs/guide/telemetry.md, *A clean prefix cache*): a run that finds the cache its last step
    /// filled measures the cache, not the load.
    #[derive(Default)]
    PrefixCacheReset for "reset_prefix_cache" {
        /// Never: the cache keeps what earlier runs and other clients put into it.
        #[default]
        Off => "off",
        /// Once, before the first run's warm-up (a sweep's first step, a group's first repeat).
        BeforeRun => "before_run",
        /// Before the warm-up of every run: each sweep step and each repeat.
        BeforeEachStep => "before_each_step",
    }
}

impl PrefixCacheReset {
    /// Whether the run numbered `run_index` (0 for the first of one press of Run) starts with
    /// a reset.
    pub fn resets_before(self, run_index: u64) -> bool {
        match self {
            Self::Off => false,
            Self::BeforeRun => run_index == 0,
            Self::BeforeEachStep => true,
        }
    }
}
