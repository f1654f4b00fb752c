//! §9 *Canaries and controlled output*: each row's canary and controlled-output objects
//! against the artifact's settings.

use serde_json::{Map, Value};

use super::{Checker, RowContext};
use crate::core::read::validate::report::RuleId;
use crate::core::read::validate::values::{as_int, child_path, describe, show_opt};

impl Checker {
    pub(super) fn check_row_canary(
        &mut self,
        path: &str,
        row: &Map<String, Value>,
        context: &RowContext,
    ) {
        let Some(canaries) = context.canaries else {
            return; // request_canaries has the wrong type; already reported.
        };
        let canary_path = child_path(path, "request_canary");
        let canary = row.get("request_canary").filter(|value| !value.is_null());
        if !canaries {
            if let Some(canary) = canary {
                self.push(
                    canary_path,
                    RuleId::CanaryUnexpected,
                    format!(
                        "request_canaries is off, so request_canary must be null, found {}",
                        describe(canary)
                    ),
                );
            }
            return;
        }
        let Some(canary) = canary.and_then(Value::as_object) else {
            self.push(
                canary_path,
                RuleId::CanaryRequired,
                format!(
                    "request_canaries is on, so every row needs a request_canary object, found {}",
                    show_opt(row.get("request_canary"))
                ),
            );
            return;
        };
        if canary.get("passed") != Some(&Value::Bool(true)) {
            self.push(
                child_path(&canary_path, "passed"),
                RuleId::CanaryRequired,
                format!(
                    "a completed row's canary must have passed true, found {}; failed canaries belong in failures",
                    show_opt(canary.get("passed"))
                ),
            );
        }
        if context.policy.is_some() || !context.policy_valid {
            let mut missing = Vec::new();
            if canary.get("marker_at_start") != Some(&Value::Bool(true)) {
                missing.push(format!(
                    "marker_at_start is {}",
                    show_opt(canary.get("marker_at_start"))
                ));
            }
            if canary.get("foreign_marker_count").and_then(as_int) != Some(0) {
                missing.push(format!(
                    "foreign_marker_count is {}",
                    show_opt(canary.get("foreign_marker_count"))
                ));
            }
            if canary.get("capture_complete") != Some(&Value::Bool(true)) {
                missing.push(format!(
                    "capture_complete is {}",
                    show_opt(canary.get("capture_complete"))
                ));
            }
            if !missing.is_empty() {
                self.push(
                    canary_path,
                    RuleId::CanaryModernEvidence,
                    format!(
                        "with a controlled_output_policy the canary must show marker_at_start true, foreign_marker_count 0 \
                         and capture_complete true (otherwise it is legacy substring-only evidence): {}",
                        missing.join(", ")
                    ),
                );
            }
        }
    }

    pub(super) fn check_row_controlled_output(
        &mut self,
        path: &str,
        row: &Map<String, Value>,
        context: &RowContext,
    ) {
        let (Some(words), true) = (context.response_words, context.policy_valid) else {
            return; // response_words or the policy is malformed; already reported.
        };
        let controlled_path = child_path(path, "controlled_output");
        let controlled = row
            .get("controlled_output")
            .filter(|value| !value.is_null());
        let policy = match (&context.policy, words) {
            (Some(policy), words) if words > 0 => policy.as_str(),
            _ => {
                if let Some(controlled) = controlled {
                    self.push(
                        controlled_path,
                        RuleId::ControlledOutputUnexpected,
                        format!(
                            "controlled_output must be null when response_words is 0 or the policy is null \
                             (response_words {words}, policy {}), found {}",
                            context.policy.as_deref().unwrap_or("null"),
                            describe(controlled)
                        ),
                    );
                }
                return;
            }
        };
        let Some(controlled) = controlled.and_then(Value::as_object) else {
            self.push(
                controlled_path,
                RuleId::ControlledOutputShape,
                format!(
                    "with response_words {words} and policy {policy} every row needs a controlled_output object, found {}",
                    show_opt(row.get("controlled_output"))
                ),
            );
            return;
        };
        let mut shape_ok = true;
        if controlled.get("policy").and_then(Value::as_str) != Some(policy) {
            shape_ok = false;
            self.push(
                child_path(&controlled_path, "policy"),
                RuleId::ControlledOutputShape,
                format!("controlled_output.policy must equal the artifact's policy \"{policy}\", found {}", show_opt(controlled.get("policy"))),
            );
        }
        match self.int_field(
            controlled,
            &controlled_path,
            "requested_words",
            1,
            RuleId::ControlledOutputShape,
        ) {
            Some(requested) if requested != words => {
                shape_ok = false;
                self.push(
                    child_path(&controlled_path, "requested_words"),
                    RuleId::ControlledOutputShape,
                    format!("controlled_output.requested_words is {requested} but the artifact's response_words is {words}"),
                );
            }
            Some(_) => {}
            None => shape_ok = false,
        }
        let code = self.int_field(
            controlled,
            &controlled_path,
            "observed_code_words",
            0,
            RuleId::ControlledOutputShape,
        );
        let extra = self.int_field(
            controlled,
            &controlled_path,
            "observed_extra_words",
            0,
            RuleId::ControlledOutputShape,
        );
        let complete = self.bool_field(controlled, &controlled_path, "capture_complete", false);
        let exact = self.bool_field(controlled, &controlled_path, "exact_adherence", true);
        let passed = self.bool_field(controlled, &controlled_path, "passed", false);
        let (Some(code), Some(extra), Some(Some(complete)), Some(exact)) =
            (code, extra, complete, exact)
        else {
            return;
        };
        if !shape_ok {
            return;
        }
        let expected_exact = complete.then_some(code == words && extra == 0);
        let shown =
            |value: Option<bool>| value.map_or_else(|| "null".to_string(), |flag| flag.to_string());
        if exact != expected_exact {
            self.push(
                child_path(&controlled_path, "exact_adherence"),
                RuleId::ControlledOutputAdherence,
                format!(
                    "exact_adherence is {} but the observations ({code} code words, {extra} extra, capture complete {complete}) give {}",
                    shown(exact),
                    shown(expected_exact)
                ),
            );
        }
        if let Some(Some(passed)) = passed {
            let expected_passed = if policy == "strict" {
                exact == Some(true)
            } else {
                true
            };
            if passed != expected_passed {
                self.push(
                    child_path(&controlled_path, "passed"),
                    RuleId::ControlledOutputPassed,
                    format!("passed is {passed} but under policy {policy} with exact_adherence {} it must be {expected_passed}", shown(exact)),
                );
            }
        }
        if policy == "strict" && (!complete || exact != Some(true)) {
            self.push(
                controlled_path,
                RuleId::ControlledOutputStrict,
                format!(
                    "under the strict policy a completed row needs a complete capture with exact adherence \
                     (capture_complete {complete}, exact_adherence {}); such a response belongs in failures",
                    shown(exact)
                ),
            );
        }
    }
}
