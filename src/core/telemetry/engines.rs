//! Which engine a `/metrics` answer came from, and where each engine keeps the few series a
//! benchmark reads beside its own timeline (docs/guide/telemetry.md, *Common series*): requests
//! running and waiting, KV-cache use, prefix-cache hits, preemptions, tokens in and out, and
//! the server's own TTFT, end-to-end and queue-time histograms.
//!
//! The names are the engines' own (their sources are named in docs/guide/telemetry.md). A name no
//! table lists is still kept in every sample under its own name; only the summary is limited
//! to the common series.

/// The engine whose names a `/metrics` answer uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    /// vLLM (`vllm:` names); strobe-sim serves these too.
    Vllm,
    /// SGLang (`sglang:` names).
    Sglang,
    /// llama.cpp's `llama-server --metrics` (`llamacpp:` names).
    Llamacpp,
    /// Hugging Face TGI (`tgi_` names).
    Tgi,
    /// None of the above: every series is kept under its own name, none is common.
    Unknown,
}

impl Family {
    /// Every family, the unknown one last.
    pub const ALL: [Family; 5] = [
        Family::Vllm,
        Family::Sglang,
        Family::Llamacpp,
        Family::Tgi,
        Family::Unknown,
    ];

    /// The name the artifact's `server_metrics.family` uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Vllm => "vllm",
            Family::Sglang => "sglang",
            Family::Llamacpp => "llamacpp",
            Family::Tgi => "tgi",
            Family::Unknown => "unknown",
        }
    }

    /// The family named `name` in an artifact; an unknown name is [`Family::Unknown`].
    pub fn from_name(name: &str) -> Family {
        Family::ALL
            .into_iter()
            .find(|family| family.as_str() == name)
            .unwrap_or(Family::Unknown)
    }

    /// Whether the engine's prompt-token counter leaves out the tokens its prefix cache held
    /// (llama.cpp counts those apart, in `prompt_tokens_cached_total`).
    pub fn prompt_tokens_exclude_cached(self) -> bool {
        self == Family::Llamacpp
    }

    /// The prefix every metric name of this family starts with.
    fn prefix(self) -> Option<&'static str> {
        match self {
            Family::Vllm => Some("vllm:"),
            Family::Sglang => Some("sglang:"),
            Family::Llamacpp => Some("llamacpp:"),
            Family::Tgi => Some("tgi_"),
            Family::Unknown => None,
        }
    }

    /// The family most of `names` belong to (a server may also export Python's or the
    /// process's own series); [`Family::Unknown`] when none does.
    pub fn detect<'a>(names: impl IntoIterator<Item = &'a str>) -> Family {
        let mut counts = [0usize; 4];
        for name in names {
            for (count, family) in counts.iter_mut().zip(Family::ALL) {
                if family
                    .prefix()
                    .is_some_and(|prefix| name.starts_with(prefix))
                {
                    *count += 1;
                }
            }
        }
        counts
            .iter()
            .zip(Family::ALL)
            .filter(|(count, _)| **count > 0)
            // The first of equal counts wins, so the answer does not depend on order.
            .max_by(|(a, fa), (b, fb)| a.cmp(b).then(fb.cmp(fa)))
            .map_or(Family::Unknown, |(_, family)| family)
    }
}

/// How a common series is summarized over a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeriesKind {
    /// A level: min, mean and max of the samples.
    Gauge,
    /// A running total: its increase (counter resets handled) and rate.
    Counter,
    /// A distribution in seconds: mean and quantiles of the observations in the window, in ms.
    Histogram,
}

/// A series every engine that has it means the same by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CommonSeries {
    /// Requests in the running batch.
    Running,
    /// Requests queued, not yet admitted.
    Waiting,
    /// Share of the KV cache in use, 0 to 1.
    KvCacheUse,
    /// An engine's own prefix-cache hit rate, 0 to 1 (SGLang; vLLM's is from its counters).
    PrefixCacheHitRate,
    /// Prompt tokens looked up in the prefix cache.
    PrefixCacheQueries,
    /// Prompt tokens the prefix cache held.
    PrefixCacheHits,
    /// Requests preempted (their KV cache given up and recomputed later).
    Preemptions,
    /// Prompt tokens processed.
    PromptTokens,
    /// Tokens generated.
    GenerationTokens,
    /// The server's time to first token.
    Ttft,
    /// The server's end-to-end request latency.
    E2e,
    /// Time requests spent queued.
    QueueTime,
}

impl CommonSeries {
    /// Every common series, in the order summaries list them.
    pub const ALL: [CommonSeries; 12] = [
        CommonSeries::Running,
        CommonSeries::Waiting,
        CommonSeries::KvCacheUse,
        CommonSeries::PrefixCacheHitRate,
        CommonSeries::PrefixCacheQueries,
        CommonSeries::PrefixCacheHits,
        CommonSeries::Preemptions,
        CommonSeries::PromptTokens,
        CommonSeries::GenerationTokens,
        CommonSeries::Ttft,
        CommonSeries::E2e,
        CommonSeries::QueueTime,
    ];

    /// The key in the summary (`running`, `kv_cache_use`, `ttft`, …).
    pub fn key(self) -> &'static str {
        match self {
            CommonSeries::Running => "running",
            CommonSeries::Waiting => "waiting",
            CommonSeries::KvCacheUse => "kv_cache_use",
            CommonSeries::PrefixCacheHitRate => "prefix_cache_hit_rate",
            CommonSeries::PrefixCacheQueries => "prefix_cache_queries",
            CommonSeries::PrefixCacheHits => "prefix_cache_hits",
            CommonSeries::Preemptions => "preemptions",
            CommonSeries::PromptTokens => "prompt_tokens",
            CommonSeries::GenerationTokens => "generation_tokens",
            CommonSeries::Ttft => "ttft",
            CommonSeries::E2e => "e2e",
            CommonSeries::QueueTime => "queue_time",
        }
    }

    /// How the series is summarized.
    pub fn kind(self) -> SeriesKind {
        match self {
            CommonSeries::Running
            | CommonSeries::Waiting
            | CommonSeries::KvCacheUse
            | CommonSeries::PrefixCacheHitRate => SeriesKind::Gauge,
            CommonSeries::PrefixCacheQueries
            | CommonSeries::PrefixCacheHits
            | CommonSeries::Preemptions
            | CommonSeries::PromptTokens
            | CommonSeries::GenerationTokens => SeriesKind::Counter,
            CommonSeries::Ttft | CommonSeries::E2e | CommonSeries::QueueTime => {
                SeriesKind::Histogram
            }
        }
    }

    /// The names `family` may give this series, preferred first: a gauge's or counter's key
    /// in a sample's `values`, or a histogram's base name (its keys add `_bucket{le=…}`,
    /// `_sum` and `_count`). Empty when the engine has no such series.
    pub fn names(self, family: Family) -> &'static [&'static str] {
        use CommonSeries as S;
        match (family, self) {
            (Family::Vllm, S::Running) => &["vllm:num_requests_running"],
            (Family::Vllm, S::Waiting) => &["vllm:num_requests_waiting"],
            // `gpu_cache_usage_perc` is the deprecated name of the same gauge.
            (Family::Vllm, S::KvCacheUse) => {
                &["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"]
            }
            (Family::Vllm, S::PrefixCacheHitRate) => &["vllm:gpu_prefix_cache_hit_rate"],
            (Family::Vllm, S::PrefixCacheQueries) => &[
                "vllm:prefix_cache_queries_total",
                "vllm:prefix_cache_queries",
                "vllm:gpu_prefix_cache_queries_total",
                "vllm:gpu_prefix_cache_queries",
            ],
            (Family::Vllm, S::PrefixCacheHits) => &[
                "vllm:prefix_cache_hits_total",
                "vllm:prefix_cache_hits",
                "vllm:gpu_prefix_cache_hits_total",
                "vllm:gpu_prefix_cache_hits",
            ],
            (Family::Vllm, S::Preemptions) => {
                &["vllm:num_preemptions_total", "vllm:num_preemptions"]
            }
            (Family::Vllm, S::PromptTokens) => &["vllm:prompt_tokens_total", "vllm:prompt_tokens"],
            (Family::Vllm, S::GenerationTokens) => {
                &["vllm:generation_tokens_total", "vllm:generation_tokens"]
            }
            (Family::Vllm, S::Ttft) => &["vllm:time_to_first_token_seconds"],
            (Family::Vllm, S::E2e) => &["vllm:e2e_request_latency_seconds"],
            (Family::Vllm, S::QueueTime) => &["vllm:request_queue_time_seconds"],

            (Family::Sglang, S::Running) => &["sglang:num_running_reqs"],
            (Family::Sglang, S::Waiting) => &["sglang:num_queue_reqs"],
            (Family::Sglang, S::KvCacheUse) => &["sglang:token_usage"],
            (Family::Sglang, S::PrefixCacheHitRate) => &["sglang:cache_hit_rate"],
            (Family::Sglang, S::PromptTokens) => {
                &["sglang:prompt_tokens_total", "sglang:prompt_tokens"]
            }
            (Family::Sglang, S::GenerationTokens) => {
                &["sglang:generation_tokens_total", "sglang:generation_tokens"]
            }
            (Family::Sglang, S::Ttft) => &["sglang:time_to_first_token_seconds"],
            (Family::Sglang, S::E2e) => &["sglang:e2e_request_latency_seconds"],
            (Family::Sglang, S::QueueTime) => &["sglang:queue_time_seconds"],

            (Family::Llamacpp, S::Running) => &["llamacpp:requests_processing"],
            (Family::Llamacpp, S::Waiting) => &["llamacpp:requests_deferred"],
            // Removed from current llama.cpp; older builds still answer it.
            (Family::Llamacpp, S::KvCacheUse) => &["llamacpp:kv_cache_usage_ratio"],
            // Newer builds count cached prompt tokens apart from the processed ones.
            (Family::Llamacpp, S::PrefixCacheHits) => &["llamacpp:prompt_tokens_cached_total"],
            (Family::Llamacpp, S::PromptTokens) => &["llamacpp:prompt_tokens_total"],
            (Family::Llamacpp, S::GenerationTokens) => &["llamacpp:tokens_predicted_total"],

            (Family::Tgi, S::Running) => &["tgi_batch_current_size"],
            (Family::Tgi, S::Waiting) => &["tgi_queue_size"],
            // TGI counts tokens only in per-request histograms; their sums only grow.
            (Family::Tgi, S::PromptTokens) => &["tgi_request_input_length_sum"],
            (Family::Tgi, S::GenerationTokens) => &["tgi_request_generated_tokens_sum"],
            (Family::Tgi, S::E2e) => &["tgi_request_duration"],
            (Family::Tgi, S::QueueTime) => &["tgi_request_queue_duration"],

            _ => &[],
        }
    }

    /// The name this series has in `keys` (a sample's `values` keys) for `family`: the first
    /// of [`CommonSeries::names`] present (for a histogram, whose `_count` is present).
    pub fn name_in(self, family: Family, has_key: impl Fn(&str) -> bool) -> Option<&'static str> {
        self.names(family)
            .iter()
            .copied()
            .find(|name| match self.kind() {
                SeriesKind::Histogram => has_key(&format!("{name}_count")),
                SeriesKind::Gauge | SeriesKind::Counter => has_key(name),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::telemetry::exposition::read_exposition;

    fn fixture(engine: &str) -> Vec<u8> {
        let path = format!(
            "{}/tests/fixtures/engines/{engine}-metrics.txt",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(path).expect("the fixture")
    }

    /// The common series found in an engine's answer, with their values (a histogram's by
    /// its `_count`).
    fn common(engine: &str) -> (Family, Vec<(&'static str, f64)>) {
        let reading = read_exposition(&fixture(engine));
        let family = Family::detect(reading.values.keys().map(String::as_str));
        let found = CommonSeries::ALL
            .into_iter()
            .filter_map(|series| {
                let name = series.name_in(family, |key| reading.values.contains_key(key))?;
                let key = match series.kind() {
                    SeriesKind::Histogram => format!("{name}_count"),
                    _ => name.to_owned(),
                };
                Some((series.key(), reading.values[&key]))
            })
            .collect();
        (family, found)
    }

    #[test]
    fn vllm_names_map_to_every_common_series_it_has() {
        let (family, found) = common("vllm");
        assert_eq!(family, Family::Vllm);
        assert_eq!(
            found,
            [
                ("running", 12.0),
                ("waiting", 3.0),
                ("kv_cache_use", 0.6),
                ("prefix_cache_queries", 61440.0),
                ("prefix_cache_hits", 24576.0),
                ("preemptions", 3.0),
                ("prompt_tokens", 92160.0),
                ("generation_tokens", 13500.0),
                ("ttft", 60.0),
                ("e2e", 40.0),
            ]
        );
    }

    #[test]
    fn sglang_names_map_with_its_own_hit_rate() {
        let (family, found) = common("sglang");
        assert_eq!(family, Family::Sglang);
        assert_eq!(
            found,
            [
                ("running", 12.0),
                ("waiting", 4.0),
                ("kv_cache_use", 0.87),
                ("prefix_cache_hit_rate", 0.41),
                ("prompt_tokens", 128000.0),
                ("generation_tokens", 64000.0),
                ("ttft", 100.0),
                ("e2e", 100.0),
            ]
        );
    }

    #[test]
    fn llamacpp_names_map_without_labels_or_kv_use() {
        // Recorded from a real llama-server after three requests.
        let (family, found) = common("llamacpp");
        assert_eq!(family, Family::Llamacpp);
        assert_eq!(
            found,
            [
                ("running", 0.0),
                ("waiting", 0.0),
                ("prefix_cache_hits", 14.0),
                ("prompt_tokens", 31.0),
                ("generation_tokens", 48.0),
            ]
        );
        assert!(Family::Llamacpp.prompt_tokens_exclude_cached());
        assert!(!Family::Vllm.prompt_tokens_exclude_cached());
    }

    #[test]
    fn tgi_names_map_its_queue_batch_and_token_histograms() {
        let (family, found) = common("tgi");
        assert_eq!(family, Family::Tgi);
        assert_eq!(
            found,
            [
                ("running", 16.0),
                ("waiting", 6.0),
                ("prompt_tokens", 150000.0),
                ("generation_tokens", 38144.0),
                ("e2e", 298.0),
                ("queue_time", 298.0),
            ]
        );
    }

    #[test]
    fn the_family_is_the_one_most_names_belong_to() {
        assert_eq!(Family::detect([]), Family::Unknown);
        assert_eq!(
            Family::detect(["process_cpu_seconds_total", "go_goroutines"]),
            Family::Unknown
        );
        assert_eq!(
            Family::detect(["vllm:a", "python_gc", "tgi_x", "vllm:b"]),
            Family::Vllm
        );
        assert_eq!(Family::detect(["tgi_x", "vllm:a"]), Family::Vllm);
        for family in Family::ALL {
            assert_eq!(Family::from_name(family.as_str()), family);
        }
        assert_eq!(Family::from_name("ollama"), Family::Unknown);
    }

    #[test]
    fn every_series_kind_is_covered_and_unknown_engines_map_nothing() {
        for series in CommonSeries::ALL {
            assert!(series.names(Family::Unknown).is_empty(), "{series:?}");
            assert!(!series.key().is_empty());
        }
    }
}
