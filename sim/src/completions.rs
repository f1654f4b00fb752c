//! `POST /v1/completions` (the legacy completions API, `vllm bench serve`'s default): what the
//! endpoint reads of its body. The prompt is the `prompt` string itself, so its bytes in order
//! are what the prefix cache sees, as chat's joined messages are. strobe-sim has no tokenizer,
//! so the other forms OpenAI and vLLM accept (token ids, a batch of prompts) are refused with a
//! 400 that says to send one string. Everything else is shared with chat
//! ([`request`](crate::request), [`respond`](crate::respond)).

use serde_json::value::RawValue;
use serde_json::Value;

use crate::reply::{bad_request, Reply};

/// The prompt text of a completions request's `prompt` member (`None` when missing or null),
/// or the 400 that says what is wrong with it.
pub(crate) fn prompt_text(prompt: Option<&RawValue>) -> Result<String, Reply> {
    let refuse = |message: String| Err(bad_request(message, Some("prompt")));
    let Some(raw) = prompt else {
        return refuse("`prompt` is missing: send the prompt as one string.".into());
    };
    if let Ok(text) = serde_json::from_str::<String>(raw.get()) {
        if text.is_empty() {
            return refuse("`prompt` is an empty string: send at least one character.".into());
        }
        return Ok(text);
    }
    let shape = match serde_json::from_str::<Value>(raw.get()) {
        Ok(Value::Array(items)) if items.is_empty() => {
            "`prompt` is an empty list; send the prompt as one string.".to_string()
        }
        Ok(Value::Array(items)) if items.iter().all(is_token_ids) => {
            "`prompt` is a list of token ids; strobe-sim has no tokenizer, so send the prompt as one string.".to_string()
        }
        Ok(Value::Array(items)) if items.iter().all(Value::is_string) => format!(
            "`prompt` is a list of {} prompts; strobe-sim answers one prompt per request, so send one string.",
            items.len()
        ),
        Ok(other) => format!(
            "`prompt` must be a string, got {}; send the prompt as one string.",
            kind(&other)
        ),
        Err(_) => "`prompt` must be a string; send the prompt as one string.".to_string(),
    };
    refuse(shape)
}

/// A token id, or a list of them (one prompt of a batch given as token ids).
fn is_token_ids(item: &Value) -> bool {
    match item {
        Value::Number(number) => number.is_u64(),
        Value::Array(ids) => !ids.is_empty() && ids.iter().all(|id| id.is_u64()),
        _ => false,
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list of mixed values",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<String, String> {
        let raw = RawValue::from_string(json.to_string()).expect("valid JSON");
        prompt_text(Some(&raw)).map_err(|reply| {
            assert_eq!(reply.status, 400);
            let body: Value = serde_json::from_str(&reply.body).expect("an error body");
            assert_eq!(body["error"]["param"], "prompt");
            assert_eq!(body["error"]["type"], "invalid_request_error");
            body["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
    }

    #[test]
    fn a_string_prompt_is_the_text_with_its_escapes_decoded() {
        assert_eq!(read(r#""a\nb \u00e9""#), Ok("a\nb é".to_string()));
    }

    #[test]
    fn other_prompt_shapes_get_a_400_that_says_what_to_send() {
        let cases = [
            ("[1, 2, 3]", "a list of token ids"),
            ("[[1, 2], [3]]", "a list of token ids"),
            (r#"["a", "b"]"#, "a list of 2 prompts"),
            ("[]", "an empty list"),
            (r#""""#, "an empty string"),
            ("42", "got a number"),
            (r#"{"text": "a"}"#, "got an object"),
            (r#"["a", 1]"#, "got a list of mixed values"),
        ];
        for (json, needle) in cases {
            let message = read(json).expect_err(json);
            assert!(message.contains(needle), "{json}: {message}");
            assert!(message.contains("send"), "{json}: {message}");
        }
        let missing = prompt_text(None).expect_err("a 400");
        assert!(
            missing.body.contains("`prompt` is missing"),
            "{}",
            missing.body
        );
    }
}
