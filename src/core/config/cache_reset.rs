//! Where a server's prefix cache is emptied, as a setting sees it
//! (docs/guide/telemetry.md, *A clean prefix cache*): the route each engine serves for it
//! ([`reset_route`]), or, for an engine without one, the reason in words that name the setting to
//! change ([`NoResetRoute`]). The call itself is the page's; what its answer means is
//! [`telemetry::reset`](crate::core::telemetry::reset)'s.

use thiserror::Error;

use crate::core::config::metrics::server_origin;

/// vLLM's route, served only when the server runs with `VLLM_SERVER_DEV_MODE=1`.
pub const VLLM_RESET_PATH: &str = "/reset_prefix_cache";
/// SGLang's route (GET or POST).
pub const SGLANG_RESET_PATH: &str = "/flush_cache";

/// The engines whose prefix cache strobe can empty, and who answers for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResetEngine {
    /// vLLM: `POST /reset_prefix_cache`, only with `VLLM_SERVER_DEV_MODE=1`; 200 proves nothing.
    Vllm,
    /// SGLang: `POST /flush_cache`; 400 while requests run or wait.
    Sglang,
    /// strobe-sim, which serves vLLM's route and keeps a truth log of it.
    StrobeSim,
    /// A URL the user gave (`reset_prefix_cache_url`): any 2xx is success, as AIPerf takes it.
    Given,
}

impl ResetEngine {
    /// The engine's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Vllm => "vLLM",
            Self::Sglang => "SGLang",
            Self::StrobeSim => "strobe-sim",
            Self::Given => "the server",
        }
    }

    /// The spelling the artifact records.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Vllm => "vllm",
            Self::Sglang => "sglang",
            Self::StrobeSim => "strobe-sim",
            Self::Given => "given",
        }
    }
}

/// The request that empties a server's prefix cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResetRoute {
    /// Who answers it.
    pub engine: ResetEngine,
    /// `POST` for every engine strobe knows.
    pub method: &'static str,
    /// The base URL's origin and the engine's path, or the URL given; never with credentials.
    pub url: String,
}

/// Why a run cannot reset the prefix cache, in words that say what to change.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum NoResetRoute {
    /// llama.cpp erases one slot at a time, and only with `--slot-save-path`.
    #[error(
        "llama.cpp has no reset of its whole prefix cache: it erases one slot at a time \
         (POST /slots/{{id}}?action=erase), and only when llama-server runs with \
         --slot-save-path; set reset_prefix_cache to off (restart llama-server for a cold \
         cache), or give reset_prefix_cache_url if something in front of it resets it"
    )]
    LlamaCpp,
    /// An engine known to have no reset route.
    #[error(
        "{0} has no route that empties its prefix cache; set reset_prefix_cache to off \
         (restart the server for a cold cache)"
    )]
    Without(&'static str),
    /// An engine label strobe does not know.
    #[error(
        "strobe knows no prefix-cache reset for engine \"{0}\" (it knows vllm and sglang): set \
         engine to vllm or sglang if the server is one, give reset_prefix_cache_url, or set \
         reset_prefix_cache to off"
    )]
    Unknown(String),
    /// The base URL has no origin to put the route on.
    #[error("the prefix-cache reset needs an http:// or https:// base URL")]
    NoOrigin,
}

/// Longest engine label quoted in a message.
const MAX_QUOTED_ENGINE_CHARS: usize = 40;

/// The reset of the server at `base_url` whose engine is labelled `engine`, or the URL given in
/// `reset_prefix_cache_url` (`given`, used as it is with `POST`).
///
/// Labels are matched ignoring case and surrounding space, by the names engines give
/// themselves in `/models` (`owned_by`) or their probes: `vllm…`, `sglang…`, `strobe-sim`,
/// `llamacpp` / `llama.cpp` / `llama-server`, `tgi` / `text-generation-inference`, `ollama`,
/// `lmstudio`.
pub fn reset_route(
    engine: &str,
    base_url: &str,
    given: Option<&str>,
) -> Result<ResetRoute, NoResetRoute> {
    if let Some(url) = given.map(str::trim).filter(|url| !url.is_empty()) {
        return Ok(ResetRoute {
            engine: ResetEngine::Given,
            method: "POST",
            url: url.to_owned(),
        });
    }
    let label = engine.trim().to_ascii_lowercase();
    let (engine, path) = if label.starts_with("vllm") {
        (ResetEngine::Vllm, VLLM_RESET_PATH)
    } else if label.starts_with("sglang") {
        (ResetEngine::Sglang, SGLANG_RESET_PATH)
    } else if label == "strobe-sim" {
        (ResetEngine::StrobeSim, VLLM_RESET_PATH)
    } else if label.starts_with("llama") {
        return Err(NoResetRoute::LlamaCpp);
    } else if label == "tgi" || label.starts_with("text-generation") {
        return Err(NoResetRoute::Without("Hugging Face TGI"));
    } else if label.starts_with("ollama") {
        return Err(NoResetRoute::Without("Ollama"));
    } else if label == "lmstudio" || label == "lm studio" {
        return Err(NoResetRoute::Without("LM Studio"));
    } else {
        let quoted: String = engine
            .trim()
            .chars()
            .take(MAX_QUOTED_ENGINE_CHARS)
            .collect();
        return Err(NoResetRoute::Unknown(quoted));
    };
    let origin = server_origin(base_url).ok_or(NoResetRoute::NoOrigin)?;
    Ok(ResetRoute {
        engine,
        method: "POST",
        url: format!("{origin}{path}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vllm_and_sglang_are_reset_at_the_base_urls_origin() {
        let vllm = reset_route(" vLLM ", "http://user:pw@gpu-box:8000/v1", None).unwrap();
        assert_eq!(vllm.engine, ResetEngine::Vllm);
        assert_eq!(vllm.method, "POST");
        assert_eq!(vllm.url, "http://gpu-box:8000/reset_prefix_cache");
        let sglang = reset_route("sglang", "https://host/api/v1/", None).unwrap();
        assert_eq!(sglang.url, "https://host/flush_cache");
        let sim = reset_route("strobe-sim", "http://127.0.0.1:8011/v1", None).unwrap();
        assert_eq!(sim.engine, ResetEngine::StrobeSim);
        assert_eq!(sim.url, "http://127.0.0.1:8011/reset_prefix_cache");
    }

    #[test]
    fn a_given_url_wins_over_the_engine() {
        let given = reset_route("tgi", "http://a:1/v1", Some(" http://b:2/cache/reset ")).unwrap();
        assert_eq!(given.engine, ResetEngine::Given);
        assert_eq!(given.url, "http://b:2/cache/reset");
        assert!(reset_route("tgi", "http://a:1/v1", Some("  ")).is_err());
    }

    #[test]
    fn engines_without_a_reset_are_named_with_what_to_do() {
        let base = "http://a:1/v1";
        let llama = reset_route("llamacpp", base, None).unwrap_err().to_string();
        assert!(llama.contains("llama.cpp") && llama.contains("--slot-save-path"));
        assert!(llama.contains("reset_prefix_cache to off"));
        for (label, name) in [
            ("tgi", "Hugging Face TGI"),
            ("text-generation-inference", "Hugging Face TGI"),
            ("ollama", "Ollama"),
            ("lmstudio", "LM Studio"),
        ] {
            let message = reset_route(label, base, None).unwrap_err().to_string();
            assert!(message.starts_with(name), "{message}");
            assert!(message.contains("reset_prefix_cache to off"), "{message}");
        }
        let unknown = reset_route("my-fork", base, None).unwrap_err().to_string();
        assert!(unknown.contains("\"my-fork\"") && unknown.contains("reset_prefix_cache_url"));
        let long = "x".repeat(500);
        let unknown = reset_route(&long, base, None).unwrap_err().to_string();
        assert!(unknown.len() < 300, "a long label is shortened");
        assert_eq!(
            reset_route("vllm", "ftp://a/v1", None),
            Err(NoResetRoute::NoOrigin)
        );
    }
}
