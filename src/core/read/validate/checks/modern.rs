//! §9 *Modern fields*: the settings a modern artifact must carry, and the `sampling` block's
//! rules of §3.

use serde_json::{Map, Value};

use super::Checker;
use crate::core::read::validate::report::RuleId;
use crate::core::read::validate::values::{
    as_number, child_path, describe, present, show, show_opt,
};

impl Checker {
    pub(super) fn check_modern_fields(&mut self, artifact: &Map<String, Value>) {
        match artifact.get("prompt_cache_mode").and_then(Value::as_str) {
            Some("shared" | "unique") => {}
            None if self.converted && artifact.get("prompt_cache_mode") == Some(&Value::Null) => {}
            _ => self.push(
                "$.prompt_cache_mode",
                RuleId::PromptCacheMode,
                format!(
                    "prompt_cache_mode must be \"shared\" or \"unique\", found {}",
                    show_opt(artifact.get("prompt_cache_mode"))
                ),
            ),
        }
        if let Some(value) = artifact.get("request_canaries") {
            if !value.is_boolean() {
                self.push(
                    "$.request_canaries",
                    RuleId::RequestCanariesType,
                    format!(
                        "request_canaries must be true or false, found {}",
                        describe(value)
                    ),
                );
            }
        }
        for key in ["engine", "model"] {
            match artifact.get(key) {
                Some(Value::String(name)) if !name.is_empty() => {}
                Some(Value::Null) if self.converted => {}
                other => self.push(
                    format!("$.{key}"),
                    RuleId::EngineModelNames,
                    format!(
                        "{key} must be a non-empty string, found {}",
                        show_opt(other)
                    ),
                ),
            }
        }
        if let Some(recipe) = present(artifact, "source_recipe") {
            if !recipe.is_string() {
                self.push(
                    "$.source_recipe",
                    RuleId::SourceRecipeType,
                    format!(
                        "source_recipe must be a string or null, found {}",
                        describe(recipe)
                    ),
                );
            }
        }
        // controlled_output_policy is checked for every generation, in `row_context`.
    }

    pub(super) fn check_sampling(&mut self, sampling: &Value) {
        let Some(entries) = sampling.as_object() else {
            self.push(
                "$.sampling",
                RuleId::SamplingShape,
                format!(
                    "sampling must be an object with temperature and top_p, found {}",
                    describe(sampling)
                ),
            );
            return;
        };
        let unexpected: Vec<&str> = entries
            .keys()
            .map(String::as_str)
            .filter(|key| !["temperature", "top_p"].contains(key))
            .collect();
        if !unexpected.is_empty() {
            self.push(
                "$.sampling",
                RuleId::SamplingShape,
                format!(
                    "sampling must have exactly the keys temperature and top_p; unexpected: {}",
                    unexpected
                        .iter()
                        .map(|key| show(&Value::String((*key).to_string())))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        for key in ["temperature", "top_p"] {
            let path = child_path("$.sampling", key);
            let Some(entry) = entries.get(key) else {
                self.push(
                    path,
                    RuleId::SamplingShape,
                    format!("sampling.{key} is missing"),
                );
                continue;
            };
            let Some(fields) = entry.as_object() else {
                self.push(
                    path,
                    RuleId::SamplingShape,
                    format!(
                        "sampling.{key} must be an object, found {}",
                        describe(entry)
                    ),
                );
                continue;
            };
            let expected = ["requested", "effective_request", "sent"];
            let keys_ok = fields.len() == expected.len()
                && expected.iter().all(|name| fields.contains_key(*name));
            if !keys_ok {
                let found: Vec<String> = fields
                    .keys()
                    .map(|name| show(&Value::String(name.clone())))
                    .collect();
                self.push(
                    path.clone(),
                    RuleId::SamplingShape,
                    format!(
                        "sampling.{key} must have exactly requested, effective_request and sent; found [{}]",
                        found.join(", ")
                    ),
                );
            }
            self.check_sampling_entry(key, &path, fields);
        }
    }

    pub(super) fn check_sampling_entry(
        &mut self,
        key: &str,
        path: &str,
        fields: &Map<String, Value>,
    ) {
        let in_range = |value: f64| {
            if key == "temperature" {
                (0.0..=2.0).contains(&value)
            } else {
                value > 0.0 && value <= 1.0
            }
        };
        let range_text = if key == "temperature" {
            "0 ≤ x ≤ 2"
        } else {
            "0 < x ≤ 1"
        };
        // Ok(None) = null, Ok(Some(x)) = in-range number, Err(()) = already reported.
        let read = |checker: &mut Checker, name: &str| -> Result<Option<f64>, ()> {
            let field_path = child_path(path, name);
            match fields.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(value) => match as_number(value) {
                    Some(number) if in_range(number) => Ok(Some(number)),
                    Some(number) => {
                        checker.push(
                            field_path,
                            RuleId::SamplingRange,
                            format!("{key}.{name} must satisfy {range_text}, found {number}"),
                        );
                        Err(())
                    }
                    None => {
                        checker.push(
                            field_path,
                            RuleId::SamplingRange,
                            format!(
                                "{key}.{name} must be a finite number or null, found {}",
                                describe(value)
                            ),
                        );
                        Err(())
                    }
                },
            }
        };
        let requested = read(self, "requested");
        let effective = read(self, "effective_request");
        if let (Ok(requested), Ok(effective)) = (requested, effective) {
            let expected = match (key, requested) {
                ("temperature", None) => Some(0.0),
                (_, requested) => requested,
            };
            if effective != expected {
                let shown = |value: Option<f64>| {
                    value.map_or_else(|| "null".to_string(), |v| format!("{v:?}"))
                };
                self.push(
                    child_path(path, "effective_request"),
                    RuleId::SamplingConsistency,
                    format!(
                        "{key}.effective_request is {} but must be {} for requested {}",
                        shown(effective),
                        shown(expected),
                        shown(requested)
                    ),
                );
            }
        }
        let sent_path = child_path(path, "sent");
        match fields.get("sent") {
            None => {}
            Some(Value::Bool(sent)) => {
                let expected = match key {
                    "temperature" => Some(true),
                    _ => requested.ok().map(|requested| requested.is_some()),
                };
                if let Some(expected) = expected {
                    if *sent != expected {
                        let why = if key == "temperature" {
                            "temperature is always sent (0.0 unless requested)".to_string()
                        } else {
                            format!(
                                "top_p is sent only when requested (requested is {})",
                                show_opt(fields.get("requested"))
                            )
                        };
                        self.push(
                            sent_path,
                            RuleId::SamplingConsistency,
                            format!("{key}.sent is {sent} but must be {expected}: {why}"),
                        );
                    }
                }
            }
            Some(other) => self.push(
                sent_path,
                RuleId::SamplingShape,
                format!("{key}.sent must be a boolean, found {}", describe(other)),
            ),
        }
    }
}
