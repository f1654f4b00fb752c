//! strobe's additions to the artifact (docs/spec/converted.md) that a reader must be able to
//! trust: the `repeat` block, which groups repeated runs and so decides which runs a
//! comparison pools, and the `prefix_cache_reset` block, which says what cache a run started
//! from. Every v1 reader that does not know a key ignores it; one that reads it
//! checks it here. The `workload` block and the rows' origins have their own file,
//! [`super::workload`].

use serde_json::{Map, Value};

use super::Checker;
use crate::core::read::validate::report::RuleId;
use crate::core::read::validate::values::{as_int, describe, show_opt};
use crate::core::schema::cache_reset::PrefixCacheResetBlock;
use crate::core::schema::repeat::MAX_REPEATS;
use crate::core::telemetry::scrape::credential_in_url;

/// Longest `group_id` strobe accepts (its own are about 30 characters).
const MAX_GROUP_ID_CHARS: usize = 200;
/// Most characters of serde's reason quoted in a message.
const MAX_SERDE_CHARS: usize = 160;

impl Checker {
    /// Rule `prefix-cache-reset-block`: the block reads as strobe writes it, its reset (when
    /// one was sent) names a URL without credentials, answered 2xx, in a latency ≥ 0.
    pub(super) fn check_prefix_cache_reset(&mut self, artifact: &Map<String, Value>) {
        let Some(value) = artifact.get("prefix_cache_reset") else {
            return;
        };
        let rule = RuleId::PrefixCacheResetBlock;
        let block = match serde_json::from_value::<PrefixCacheResetBlock>(value.clone()) {
            Ok(block) => block,
            Err(error) => {
                // serde quotes the offending value whole: keep the message short.
                let mut error: String = error.to_string().chars().take(MAX_SERDE_CHARS).collect();
                if error.chars().count() == MAX_SERDE_CHARS {
                    error.push('…');
                }
                self.push(
                    "$.prefix_cache_reset",
                    rule,
                    format!(
                        "prefix_cache_reset must be {{policy, reset, check}} as strobe writes \
                         it ({error}); remove the key if no reset was asked for"
                    ),
                );
                return;
            }
        };
        let Some(reset) = block.reset else {
            return;
        };
        if let Some(what) = credential_in_url(&reset.url) {
            self.push(
                "$.prefix_cache_reset.reset.url",
                rule,
                format!("prefix_cache_reset.reset.url carries {what}; a file never holds one"),
            );
        }
        if !(200..300).contains(&reset.status) {
            self.push(
                "$.prefix_cache_reset.reset.status",
                rule,
                format!(
                    "prefix_cache_reset.reset.status must be a 2xx (a failed reset stops the \
                     run), found {}",
                    reset.status
                ),
            );
        }
        // JSON holds no NaN, so a latency is below 0 or not.
        if reset.latency_ms < 0.0 || reset.attempts == 0 {
            self.push(
                "$.prefix_cache_reset.reset.latency_ms",
                rule,
                format!(
                    "prefix_cache_reset.reset needs a latency_ms ≥ 0 and at least one attempt, \
                     found {} ms and {} attempts",
                    reset.latency_ms, reset.attempts
                ),
            );
        }
    }

    pub(super) fn check_repeat(&mut self, artifact: &Map<String, Value>) {
        let Some(repeat) = artifact.get("repeat") else {
            return;
        };
        let Some(repeat) = repeat.as_object() else {
            self.push(
                "$.repeat",
                RuleId::RepeatBlock,
                format!(
                    "repeat must be an object {{group_id, index, count}}, found {}; remove the \
                     key if the run was not repeated",
                    describe(repeat)
                ),
            );
            return;
        };
        match repeat.get("group_id") {
            Some(Value::String(id))
                if !id.is_empty() && id.chars().count() <= MAX_GROUP_ID_CHARS => {}
            other => self.push(
                "$.repeat.group_id",
                RuleId::RepeatBlock,
                format!(
                    "repeat.group_id must be a non-empty string of at most {MAX_GROUP_ID_CHARS} \
                     characters shared by the group's runs, found {}",
                    show_opt(other)
                ),
            ),
        }
        let count = repeat.get("count").and_then(as_int);
        let count_ok = count.is_some_and(|count| (1..=i128::from(MAX_REPEATS)).contains(&count));
        if !count_ok {
            self.push(
                "$.repeat.count",
                RuleId::RepeatBlock,
                format!(
                    "repeat.count must be an integer from 1 to {MAX_REPEATS} (the repeats the \
                     group planned), found {}",
                    show_opt(repeat.get("count"))
                ),
            );
        }
        let index = repeat.get("index").and_then(as_int);
        let index_ok = match (index, count) {
            (Some(index), Some(count)) if count_ok => (0..count).contains(&index),
            (Some(index), _) => index >= 0,
            (None, _) => false,
        };
        if !index_ok {
            self.push(
                "$.repeat.index",
                RuleId::RepeatBlock,
                format!(
                    "repeat.index must be an integer from 0 to count − 1 (this repeat's place \
                     in its group), found {}",
                    show_opt(repeat.get("index"))
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::core::read::validate::report::RuleId;
    use crate::core::read::validate::validate_artifact;

    /// The `repeat-block` violations of the reference artifact with `repeat` set to `block`.
    fn repeat_violations(block: Option<Value>) -> Vec<(String, String)> {
        let text = include_str!("../../../../../tests/fixtures/reference-artifact.json");
        let mut artifact: Value = serde_json::from_str(text).expect("the reference artifact");
        if let Some(block) = block {
            artifact["repeat"] = block;
        }
        validate_artifact(&artifact)
            .violations
            .into_iter()
            .filter(|violation| violation.rule == RuleId::RepeatBlock)
            .map(|violation| (violation.path, violation.message))
            .collect()
    }

    #[test]
    fn a_well_formed_repeat_block_or_none_passes() {
        assert!(repeat_violations(None).is_empty());
        let block = json!({"group_id": "repeat-20261202T120000Z", "index": 2, "count": 3});
        assert!(repeat_violations(Some(block)).is_empty());
    }

    #[test]
    fn a_broken_repeat_block_names_each_field_and_its_bounds() {
        let paths = |block: Value| -> Vec<String> {
            repeat_violations(Some(block))
                .into_iter()
                .map(|(path, _)| path)
                .collect()
        };
        assert_eq!(paths(json!([1, 2])), ["$.repeat"]);
        assert_eq!(
            paths(json!({"group_id": "", "index": 0, "count": 1})),
            ["$.repeat.group_id"]
        );
        assert_eq!(
            paths(json!({"group_id": "g", "index": 3, "count": 3})),
            ["$.repeat.index"]
        );
        assert_eq!(
            paths(json!({"group_id": "g", "index": 0, "count": 21})),
            ["$.repeat.count"]
        );
        assert_eq!(
            paths(json!({"group_id": 7, "index": -1, "count": 2.5})),
            ["$.repeat.group_id", "$.repeat.count", "$.repeat.index"]
        );
        let messages = repeat_violations(Some(
            json!({"group_id": "x".repeat(5000), "index": 0, "count": 2}),
        ));
        assert_eq!(messages.len(), 1);
        assert!(messages[0].1.contains("(5000 chars)"), "{}", messages[0].1);
        assert!(messages[0].1.len() < 400, "the message stays short");
    }

    /// The `prefix-cache-reset-block` violations of the reference artifact with the block.
    fn reset_violations(block: Value) -> Vec<(String, String)> {
        let text = include_str!("../../../../../tests/fixtures/reference-artifact.json");
        let mut artifact: Value = serde_json::from_str(text).expect("the reference artifact");
        artifact["prefix_cache_reset"] = block;
        validate_artifact(&artifact)
            .violations
            .into_iter()
            .filter(|violation| violation.rule == RuleId::PrefixCacheResetBlock)
            .map(|violation| (violation.path, violation.message))
            .collect()
    }

    fn reset_block() -> Value {
        json!({
            "policy": "before_each_step",
            "reset": {
                "engine": "vllm", "method": "POST",
                "url": "http://gpu-box:8000/reset_prefix_cache", "status": 200,
                "attempts": 1, "t_ms": -250.5, "latency_ms": 1.25,
                "counters_after": {"prefix_cache_hits": 10.0}
            },
            "check": {"verdict": "emptied", "first_wave_min_cached_tokens": 0, "reason": "…"}
        })
    }

    #[test]
    fn a_prefix_cache_reset_block_as_strobe_writes_it_passes() {
        assert!(reset_violations(reset_block()).is_empty());
        let mut later = reset_block();
        later["policy"] = json!("before_run");
        later["reset"] = Value::Null;
        later["check"]["verdict"] = json!("unchecked");
        assert!(reset_violations(later).is_empty());
    }

    #[test]
    fn a_broken_prefix_cache_reset_block_is_named() {
        let paths = |block: Value| -> Vec<String> {
            reset_violations(block)
                .into_iter()
                .map(|(path, _)| path)
                .collect()
        };
        assert_eq!(paths(json!("yes")), ["$.prefix_cache_reset"]);
        let mut block = reset_block();
        block["policy"] = json!("x".repeat(10_000));
        let found = reset_violations(block);
        assert_eq!(found.len(), 1);
        assert!(found[0].1.len() < 600, "the message stays short");
        let mut block = reset_block();
        block["reset"]["url"] = json!("http://u:secret@gpu-box/reset");
        let found = reset_violations(block);
        assert_eq!(found[0].0, "$.prefix_cache_reset.reset.url");
        assert!(!found[0].1.contains("secret"), "{}", found[0].1);
        let mut block = reset_block();
        block["reset"]["status"] = json!(404);
        assert_eq!(paths(block), ["$.prefix_cache_reset.reset.status"]);
        let mut block = reset_block();
        block["reset"]["latency_ms"] = json!(-1.0);
        assert_eq!(paths(block), ["$.prefix_cache_reset.reset.latency_ms"]);
    }
}
