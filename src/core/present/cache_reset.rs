//! What the results say of a run's `prefix_cache_reset` block
//! (docs/guide/telemetry.md, *Did it empty the cache?*): one note with the verdict in words and
//! what it means for the run's numbers, e.g.
//! "prefix cache emptied before the run (vLLM POST /reset_prefix_cache answered 200; cached tokens 0 in the first 4 requests)". The same words serve a run measured in the page
//! and a dropped file; the block's URL, engine and reason are a file's data, shown as text.

use crate::core::config::cache_reset::ResetEngine;
use crate::core::read::opened::OpenedArtifact;
use crate::core::schema::cache_reset::{PrefixCacheResetBlock, ResetVerdict};

/// What the results say of the cache a run started with.
#[derive(Clone, Debug, PartialEq)]
pub struct ResetNote {
    /// The verdict's spelling in the file (`emptied`, `not_emptied`, `unchecked`), for the
    /// page's `data-verdict`.
    pub verdict: &'static str,
    /// The note.
    pub text: String,
}

/// The note for `run`'s `prefix_cache_reset` block, when it has one. Its first wave is as
/// many requests as ran at once (its concurrency), at most as many as it has rows.
pub fn reset_note_of(run: &OpenedArtifact) -> Option<ResetNote> {
    let block = run.prefix_cache_reset.as_ref()?;
    let rows = run.rows.len() as u64;
    let first_wave = run
        .workload
        .concurrency
        .map(|concurrency| concurrency.max(1))
        .map(|wave| if rows > 0 { wave.min(rows) } else { wave });
    Some(reset_note(block, first_wave))
}

/// The note for `block`, with `first_wave` the number of first requests its check read.
pub fn reset_note(block: &PrefixCacheResetBlock, first_wave: Option<u64>) -> ResetNote {
    let verdict = match block.check.verdict {
        ResetVerdict::Emptied => "emptied",
        ResetVerdict::NotEmptied => "not_emptied",
        ResetVerdict::Unchecked => "unchecked",
    };
    let Some(reset) = &block.reset else {
        return ResetNote {
            verdict,
            text: format!(
                "no prefix-cache reset before this run (reset_prefix_cache={} empties the \
                 cache only before the first run): it may have started with what earlier runs \
                 cached, which shortens its TTFT; before_each_step resets before every run",
                block.policy.as_str()
            ),
        };
    };
    let engine = engine_name(&reset.engine);
    let attempts = if reset.attempts > 1 {
        format!(" after {} attempts", reset.attempts)
    } else {
        String::new()
    };
    let who = if engine.is_empty() {
        String::new()
    } else {
        format!("{engine} ")
    };
    let call = format!(
        "{who}{} {} answered {}{attempts}",
        reset.method,
        shown_url(&reset.engine, &reset.url),
        reset.status
    );
    let first = match first_wave {
        Some(1) => "the first request".to_owned(),
        Some(count) => format!("the first {count} requests"),
        None => "the first requests".to_owned(),
    };
    let each_found = |tokens: u64| match first_wave {
        Some(1) => format!("the first request found {tokens} tokens cached"),
        _ => format!("each of {first} found at least {tokens} tokens cached"),
    };
    let reason = block.check.reason.trim();
    let text = match (
        block.check.verdict,
        block.check.first_wave_min_cached_tokens,
    ) {
        (ResetVerdict::Emptied, Some(0)) => format!(
            "prefix cache emptied before the run ({call}; cached tokens 0 in {first}): its \
             first requests met a cold cache"
        ),
        (ResetVerdict::Emptied, _) => {
            format!("prefix cache emptied before the run ({call}; {reason})")
        }
        (ResetVerdict::NotEmptied, tokens) => format!(
            "prefix cache NOT emptied before the run ({call}, yet {}): its first requests \
             skipped prefill, so its TTFT is a warm cache's. The reset did not empty this \
             server's cache, or another client filled it first; run again with no other \
             traffic on the server",
            match tokens {
                Some(tokens) => each_found(tokens),
                None => reason.to_owned(),
            }
        ),
        (ResetVerdict::Unchecked, _) => format!(
            "prefix cache reset before the run ({call}), not checked: {reason}. The answer \
             says only that the route ran; a shared prefix (prompt_cache_mode=shared) on a \
             server that reports cached_tokens shows whether the cache was empty"
        ),
    };
    ResetNote { verdict, text }
}

/// How the note names whose route was called: the engine's own name, nothing for a URL the
/// user gave (the URL says it), the file's text for one strobe does not know.
fn engine_name(engine: &str) -> String {
    [
        ResetEngine::Vllm,
        ResetEngine::Sglang,
        ResetEngine::StrobeSim,
        ResetEngine::Given,
    ]
    .into_iter()
    .find(|known| known.as_str() == engine)
    .map_or_else(
        || engine.trim().to_owned(),
        |known| match known {
            ResetEngine::Given => String::new(),
            known => known.name().to_owned(),
        },
    )
}

/// An engine's route by its path (`/reset_prefix_cache`: the origin is the run's base URL's);
/// a URL the user gave, or any other, whole.
fn shown_url(engine: &str, url: &str) -> String {
    let engine_route = matches!(engine, "vllm" | "sglang" | "strobe-sim");
    let path = url
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|start| &rest[start..]));
    match path {
        Some(path) if engine_route => path.to_owned(),
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::choices::PrefixCacheReset;
    use crate::core::schema::cache_reset::{ResetCheck, ResetRecord};

    fn block(verdict: ResetVerdict, min: Option<u64>, reason: &str) -> PrefixCacheResetBlock {
        PrefixCacheResetBlock {
            policy: PrefixCacheReset::BeforeEachStep,
            reset: Some(ResetRecord {
                engine: "vllm".into(),
                method: "POST".into(),
                url: "http://gpu-box:8000/reset_prefix_cache".into(),
                status: 200,
                attempts: 1,
                t_ms: -812.4,
                latency_ms: 2.3,
                counters_before: None,
                counters_after: None,
            }),
            check: ResetCheck {
                verdict,
                first_wave_min_cached_tokens: min,
                reason: reason.into(),
            },
        }
    }

    #[test]
    fn an_emptied_cache_names_the_route_its_answer_and_the_first_wave() {
        let note = reset_note(&block(ResetVerdict::Emptied, Some(0), "…"), Some(4));
        assert_eq!(note.verdict, "emptied");
        assert_eq!(
            note.text,
            "prefix cache emptied before the run (vLLM POST /reset_prefix_cache answered 200; \
             cached tokens 0 in the first 4 requests): its first requests met a cold cache"
        );
        let by_counters = reset_note(
            &block(
                ResetVerdict::Emptied,
                None,
                "the server's KV-cache use fell from 0.31 to 0 across the reset",
            ),
            Some(1),
        );
        assert_eq!(
            by_counters.text,
            "prefix cache emptied before the run (vLLM POST /reset_prefix_cache answered 200; \
             the server's KV-cache use fell from 0.31 to 0 across the reset)"
        );
    }

    #[test]
    fn a_cache_not_emptied_says_what_that_does_to_the_numbers() {
        let mut sglang = block(ResetVerdict::NotEmptied, Some(512), "…");
        if let Some(reset) = sglang.reset.as_mut() {
            reset.engine = "sglang".into();
            reset.url = "http://gpu-box:30000/flush_cache".into();
            reset.attempts = 3;
        }
        let note = reset_note(&sglang, Some(1));
        assert_eq!(note.verdict, "not_emptied");
        assert_eq!(
            note.text,
            "prefix cache NOT emptied before the run (SGLang POST /flush_cache answered 200 \
             after 3 attempts, yet the first request found 512 tokens cached): its first requests skipped prefill, so its TTFT is a warm cache's. The \
             reset did not empty this server's cache, or another client filled it first; run \
             again with no other traffic on the server"
        );
    }

    #[test]
    fn unchecked_says_why_and_what_would_check_it() {
        let mut given = block(
            ResetVerdict::Unchecked,
            None,
            "the prompts share no prefix, so no request shows what the cache held",
        );
        if let Some(reset) = given.reset.as_mut() {
            reset.engine = "given".into();
            reset.url = "http://cache-admin:9000/flush".into();
            reset.status = 204;
        }
        let note = reset_note(&given, Some(8));
        assert_eq!(note.verdict, "unchecked");
        assert_eq!(
            note.text,
            "prefix cache reset before the run (POST http://cache-admin:9000/flush answered \
             204), not checked: the prompts share no prefix, so no request shows what the \
             cache held. The answer says only that the route ran; a shared prefix \
             (prompt_cache_mode=shared) on a server that reports cached_tokens shows whether \
             the cache was empty"
        );
        let mut later = block(ResetVerdict::Unchecked, None, "no reset was sent");
        later.policy = PrefixCacheReset::BeforeRun;
        later.reset = None;
        assert_eq!(
            reset_note(&later, None).text,
            "no prefix-cache reset before this run (reset_prefix_cache=before_run empties the \
             cache only before the first run): it may have started with what earlier runs \
             cached, which shortens its TTFT; before_each_step resets before every run"
        );
    }

    #[test]
    fn a_files_hostile_engine_and_reason_stay_text() {
        let mut hostile = block(ResetVerdict::Emptied, Some(3), "<script>alert(1)</script>");
        if let Some(reset) = hostile.reset.as_mut() {
            reset.engine = "<b>engine</b>".into();
        }
        let note = reset_note(&hostile, None);
        assert_eq!(
            note.text,
            "prefix cache emptied before the run (<b>engine</b> POST \
             http://gpu-box:8000/reset_prefix_cache answered 200; <script>alert(1)</script>)"
        );
    }

    #[test]
    fn a_loaded_file_gives_the_note_with_its_first_wave() {
        let text = serde_json::json!({
            "schema": "capacity-benchmark-v1",
            "concurrency": 2,
            "prefix_cache_reset": serde_json::to_value(block(ResetVerdict::Emptied, Some(0), "…")).unwrap(),
        })
        .to_string();
        let run = OpenedArtifact::from_text("run.json", &text);
        let note = reset_note_of(&run).expect("a note");
        assert!(
            note.text
                .contains("cached tokens 0 in the first 2 requests"),
            "{}",
            note.text
        );
        let none = OpenedArtifact::from_text("run.json", r#"{"schema": "capacity-benchmark-v1"}"#);
        assert_eq!(reset_note_of(&none), None);
    }
}
