//! strobe's additions to the artifact (docs/spec/converted.md) that a reader must be able to
//! trust: the `repeat` block, which groups repeated runs and so decides which runs a
//! comparison pools. Every v1 reader that does not know a key ignores it; one that reads it
//! checks it here. The `workload` block and the rows' origins have their own file,
//! [`super::workload`].

use serde_json::{Map, Value};

use super::Checker;
use crate::core::artifact::schema::repeat::MAX_REPEATS;
use crate::core::read::validate::report::RuleId;
use crate::core::read::validate::values::{as_int, describe, show_opt};

/// Longest `group_id` strobe accepts (its own are about 30 characters).
const MAX_GROUP_ID_CHARS: usize = 200;

impl Checker {
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
}
