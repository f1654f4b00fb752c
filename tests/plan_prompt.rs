//! The run plan and the prompt builder against published evidence: the reference artifact's
//! plan fields, the SHA-256 of its six prompts and of a strict-capacity prompt (ARTIFACT.md §2),
//! and the request body's key order (§3).

mod common;

use common::{reference_config, reference_json};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use strobe::core::config::choices::{PromptCacheMode, ReasoningEffort, ThinkingMode};
use strobe::core::config::settings::RunConfig;
use strobe::core::plan::RunPlan;
use strobe::core::prompt::{fill, request_body, PromptError, PromptSpec};

/// SHA-256 of requests 0-5 of the reference artifact, as its publisher recorded them.
const REFERENCE_PROMPT_SHA256: [&str; 6] = [
    "5bc0b321a88ce74ee234a12baa15b289be121b9c9985d125da35b3ae5397d9ae",
    "a5eb5fdaeae516771e14d41e1694b7a277f7332a1f0fd4a652e3cf4d87929f8d",
    "29f83da6480f1506a805acd5db11f0cca1300e69a66eeba746a633ae23af7fac",
    "0382b63842d8abb7a032f24c54c4e462c9535a17d3f46d47ad9e295d6df84236",
    "e2f6136090d43f013c48d9f36e4809e7a769efa3d80de292e8b50fde335f404a",
    "332dcce1d70a4ac4b4a1b44aa72b03fe5db7738b820ba9c82efcc305c1f92eb8",
];

/// SHA-256 of a published strict-capacity prompt: seed 17, request 0, budget 8192, W = 128,
/// unique mode, canaries on.
const STRICT_CAPACITY_PROMPT_SHA256: &str =
    "5ae0a69cf362644ec791b9e8d8eea58c365b27f6d3e4d285bf627b17492fe669";

fn sha256_hex(text: &str) -> String {
    format!("{:x}", Sha256::digest(text.as_bytes()))
}

fn reference_plan() -> RunPlan {
    RunPlan::new(&reference_config(), Some(262_144))
        .unwrap_or_else(|error| panic!("reference plan: {error}"))
}

#[test]
fn plan_reproduces_the_reference_artifact_fields() {
    let artifact = reference_json();
    let plan = reference_plan();
    assert_eq!(json!(plan.requests()), artifact["requests"]);
    assert_eq!(json!(plan.concurrency()), artifact["concurrency"]);
    assert_eq!(
        json!(plan.context_tokens_field()),
        artifact["context_tokens"]
    );
    assert_eq!(json!(plan.context_seed()), artifact["context_seed"]);
    assert_eq!(
        json!(plan.context_distribution()),
        artifact["context_distribution"]
    );
    assert_eq!(
        json!(plan.max_context_tokens()),
        artifact["max_context_tokens"]
    );
    assert_eq!(
        json!(plan.shared_prefix_tokens()),
        artifact["shared_prefix_tokens"]
    );
    assert_eq!(
        json!(plan.prompt_cache_mode()),
        artifact["prompt_cache_mode"]
    );
    assert_eq!(plan.sampling_block(), artifact["sampling"]);
    assert_eq!(plan.serve_flags(), artifact["serve_flags"]);
    assert_eq!(plan.prompt_budget_cap(), Some(252_928));
    let rows = artifact["request_timings"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(rows.len(), 6);
    for row in rows {
        let index = row["request_index"].as_u64().unwrap_or(u64::MAX) as usize;
        assert_eq!(
            json!(plan.planned_context_tokens()[index]),
            row["planned_context_tokens"]
        );
    }
}

#[test]
fn reference_prompts_match_the_published_hashes() {
    let plan = reference_plan();
    let spec = PromptSpec::for_plan(&plan);
    for (index, expected_sha256) in REFERENCE_PROMPT_SHA256.iter().enumerate() {
        let budget = plan.planned_context_tokens()[index];
        let prompt = spec
            .build(index, budget)
            .unwrap_or_else(|error| panic!("{index}: {error}"));
        assert_eq!(prompt.len(), 196_608, "request {index}");
        assert_eq!(&sha256_hex(&prompt), expected_sha256, "request {index}");
    }
}

#[test]
fn reference_prompt_0_has_its_header_first_and_its_tail_last() {
    let plan = reference_plan();
    let prompt = PromptSpec::for_plan(&plan).build(0, plan.planned_context_tokens()[0]);
    let prompt = prompt.unwrap_or_default();
    assert!(prompt.starts_with(
        "# unique benchmark request ANVIL_REQ_1717_00000\n\ndef helper_0():\n    return \
         compute(0)  # routine specialist context\n"
    ));
    // The end is taken from the hash-verified prompt. ARTIFACT.md §2's example shows
    // "…compute(2684)  # routine specialist c" before the tail, which does not fit: the filler
    // is cut one character after "compute(2684)", as the Python reference rules also give.
    assert!(prompt.ends_with(
        "def helper_2684():\n    return compute(2684) \n# request 0: Begin with the exact \
         marker ANVIL_REQ_1717_00000, followed by one space. Summarize the above in one line."
    ));
}

#[test]
fn strict_capacity_prompt_matches_the_published_hash() {
    let spec = PromptSpec::new(PromptCacheMode::Unique, 0, true, 17, 128);
    let prompt = spec.build(0, 8_192).unwrap_or_default();
    assert_eq!(prompt.len(), 24_576);
    assert_eq!(sha256_hex(&prompt), STRICT_CAPACITY_PROMPT_SHA256);
}

#[test]
fn old_marker_wording_does_not_reproduce_the_hash() {
    // Assemble request 0 by hand from the §2 rules with a given tail. With the current tail the
    // assembly equals the builder's output, so the mismatch below is due to the wording alone.
    let assemble = |tail: &str| {
        let header = "# unique benchmark request ANVIL_REQ_1717_00000\n";
        let target_chars = 65_536 * 3;
        let filler_chars = target_chars - header.len() - tail.len() - 1;
        format!("{header}\n{}{tail}", &fill(filler_chars, 0)[..filler_chars])
    };
    let current_tail =
        "\n# request 0: Begin with the exact marker ANVIL_REQ_1717_00000, followed by \
                        one space. Summarize the above in one line.";
    let old_tail = "\n# request 0: Begin with the exact marker ANVIL_REQ_1717_00000. Summarize \
                    the above in one line.";
    let plan = reference_plan();
    let built = PromptSpec::for_plan(&plan)
        .build(0, 65_536)
        .unwrap_or_default();
    assert_eq!(assemble(current_tail), built);
    assert_eq!(
        sha256_hex(&assemble(current_tail)),
        REFERENCE_PROMPT_SHA256[0]
    );
    assert_ne!(sha256_hex(&assemble(old_tail)), REFERENCE_PROMPT_SHA256[0]);
}

#[test]
fn marker_wording_is_pinned_for_zero_and_32_words() {
    let marker_instruction =
        " Begin with the exact marker ANVIL_REQ_9_00004, followed by one space.";
    let expected_tails = [
        (
            0,
            format!("\n# request 4:{marker_instruction} Summarize the above in one line."),
        ),
        (
            32,
            format!(
                "\n# request 4:{marker_instruction} Then emit exactly 32 repetitions of the \
                 lowercase word code, separated by single spaces. Do not add other text and do \
                 not stop early."
            ),
        ),
    ];
    for (words, expected_tail) in expected_tails {
        let spec = PromptSpec::new(PromptCacheMode::Unique, 0, true, 9, words);
        let prompt = spec.build(4, 4_096).unwrap_or_default();
        assert!(prompt.ends_with(&expected_tail), "W = {words}");
        assert_eq!(prompt.len(), 4_096 * 3, "W = {words}");
        assert!(!prompt.contains("marker ANVIL_REQ_9_00004."), "W = {words}");
    }
}

#[test]
fn shared_mode_reuses_one_prefix_and_has_no_header() {
    let config = RunConfig {
        base_url: "http://127.0.0.1:8000/v1".to_owned(),
        model: "m".to_owned(),
        requests: 3,
        context_tokens: 16_000,
        ..RunConfig::default()
    };
    let plan = RunPlan::new(&config, None).unwrap_or_else(|error| panic!("{error}"));
    let spec = PromptSpec::for_plan(&plan);
    assert_eq!(spec.shared_prefix().len(), 8_000 * 3);
    let copy = spec.clone();
    assert!(std::sync::Arc::ptr_eq(
        spec.shared_prefix(),
        copy.shared_prefix()
    ));

    let prompts: Vec<String> = (0..3)
        .map(|index| {
            copy.build(index, plan.planned_context_tokens()[index])
                .unwrap_or_default()
        })
        .collect();
    for (index, prompt) in prompts.iter().enumerate() {
        assert_eq!(prompt.len(), 16_000 * 3);
        assert!(
            prompt.starts_with(&**spec.shared_prefix()),
            "request {index}"
        );
        assert!(!prompt.contains("# unique benchmark request"));
        // The per-request filler follows a newline and starts its numbering at the index.
        let after_prefix = &prompt[spec.shared_prefix().len()..];
        let own_filler = format!("\ndef helper_{index}():\n    return compute(0)  #");
        assert!(after_prefix.starts_with(&own_filler), "request {index}");
        assert!(prompt.ends_with(&format!(
            "\n# request {index}: summarize the above in one line."
        )));
    }
    assert_ne!(prompts[0], prompts[1]);
}

#[test]
fn tiny_budget_fails_the_request_not_the_plan() {
    let config = RunConfig {
        base_url: "http://127.0.0.1:8000/v1".to_owned(),
        model: "m".to_owned(),
        requests: 2,
        context_tokens: 32,
        request_canaries: true,
        prompt_cache_mode: PromptCacheMode::Unique,
        ..RunConfig::default()
    };
    let plan = RunPlan::new(&config, None).unwrap_or_else(|error| panic!("{error}"));
    let result = PromptSpec::for_plan(&plan).build(1, plan.planned_context_tokens()[1]);
    assert!(matches!(
        result,
        Err(PromptError::ContextTooSmall {
            request_index: 1,
            ..
        })
    ));
    assert_eq!(
        result.err().map(|error| error.to_string()),
        Some("context target is too small for the benchmark prompt envelope".to_owned())
    );
}

fn body_config() -> RunConfig {
    RunConfig {
        base_url: "http://127.0.0.1:8000/v1".to_owned(),
        model: "m".to_owned(),
        ..RunConfig::default()
    }
}

#[test]
fn default_body_has_the_documented_keys_in_order() {
    assert_eq!(
        request_body(&body_config(), "hi"),
        r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":64,"temperature":0.0,"stream":true,"stream_options":{"include_usage":true}}"#
    );
}

#[test]
fn optional_body_keys_follow_in_order() {
    let config = RunConfig {
        max_tokens: 8_192,
        temperature: Some(0.9),
        top_p: Some(0.95),
        thinking_mode: ThinkingMode::Disabled,
        ..body_config()
    };
    assert_eq!(
        request_body(&config, "hi"),
        r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":8192,"temperature":0.9,"stream":true,"stream_options":{"include_usage":true},"chat_template_kwargs":{"enable_thinking":false},"top_p":0.95}"#
    );
    let enabled = RunConfig {
        thinking_mode: ThinkingMode::Enabled,
        ..body_config()
    };
    assert!(request_body(&enabled, "hi")
        .ends_with(r#""stream_options":{"include_usage":true},"chat_template_kwargs":{"enable_thinking":true}}"#));
    let effort = RunConfig {
        reasoning_effort: Some(ReasoningEffort::Low),
        top_p: Some(1.0),
        ..body_config()
    };
    assert!(request_body(&effort, "hi").ends_with(
        r#""stream_options":{"include_usage":true},"reasoning_effort":"low","top_p":1.0}"#
    ));
    let unsupported = RunConfig {
        thinking_mode: ThinkingMode::Unsupported,
        ..body_config()
    };
    assert_eq!(
        request_body(&unsupported, "hi"),
        request_body(&body_config(), "hi")
    );
}

#[test]
fn body_carries_the_prompt_verbatim() {
    let prompt = "line \"one\"\n\tcafé ✓ \u{1}";
    let body: Value =
        serde_json::from_str(&request_body(&body_config(), prompt)).unwrap_or_default();
    assert_eq!(body["messages"][0]["content"], json!(prompt));
}
