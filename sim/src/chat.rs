//! `POST /v1/chat/completions`: what the chat endpoint reads of its body. The prompt is every
//! message's text in order, joined by newlines, so a conversation whose history grows turn by
//! turn keeps its earlier bytes as a prefix and hits the prefix cache. The rest of a request's
//! life is shared with the completions endpoint ([`request`](crate::request),
//! [`respond`](crate::respond)).

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::reply::{bad_request, Reply};

#[derive(Debug, Deserialize)]
struct ChatMessage {
    content: Option<MessageContent>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum MessageContent {
    Text(String),
    Parts(Vec<ContentPart>),
}

#[derive(Debug, Deserialize)]
struct ContentPart {
    text: Option<String>,
}

/// The prompt text of a chat request's `messages` member (`None` when it is missing or null):
/// all message texts joined by newlines, which the token estimate and the prefix cache see.
/// A missing, non-list or empty `messages` is a 400 saying what to send.
pub(crate) fn prompt_text(messages: Option<&RawValue>) -> Result<String, Reply> {
    let Some(raw) = messages else {
        return Err(bad_request(
            "`messages` is missing: send a non-empty array of {\"role\", \"content\"} objects.",
            Some("messages"),
        ));
    };
    let messages: Vec<ChatMessage> = serde_json::from_str(raw.get()).map_err(|error| {
        bad_request(
            format!("`messages` must be an array of {{\"role\", \"content\"}} objects whose content is a string or a list of parts ({error})."),
            Some("messages"),
        )
    })?;
    if messages.is_empty() {
        return Err(bad_request(
            "`messages` must contain at least one message.",
            Some("messages"),
        ));
    }
    let texts: Vec<String> = messages
        .iter()
        .map(|message| match &message.content {
            Some(MessageContent::Text(text)) => text.clone(),
            Some(MessageContent::Parts(parts)) => parts
                .iter()
                .filter_map(|part| part.text.as_deref())
                .collect::<Vec<_>>()
                .join("\n"),
            None => String::new(),
        })
        .collect();
    Ok(texts.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_string()).expect("valid JSON")
    }

    fn message_of(reply: Reply) -> String {
        reply.body
    }

    #[test]
    fn prompt_text_joins_string_and_part_contents() {
        let messages = raw(
            r#"[{"role":"system","content":"a"},{"role":"user","content":[{"type":"text","text":"b"},{"type":"image_url"}]},{"role":"assistant","content":null}]"#,
        );
        assert_eq!(prompt_text(Some(&messages)).ok().as_deref(), Some("a\nb\n"));
    }

    #[test]
    fn a_longer_history_keeps_the_shorter_one_as_its_prefix() {
        let first = raw(r#"[{"role":"user","content":"turn one"}]"#);
        let second = raw(
            r#"[{"role":"user","content":"turn one"},{"role":"assistant","content":"reply"},{"role":"user","content":"turn two"}]"#,
        );
        let first = prompt_text(Some(&first)).ok().expect("valid");
        let second = prompt_text(Some(&second)).ok().expect("valid");
        assert!(second.starts_with(&first), "{second:?}");
    }

    #[test]
    fn missing_empty_and_misshapen_messages_say_what_to_send() {
        let missing = prompt_text(None).err().map(message_of).expect("a 400");
        assert!(missing.contains("`messages` is missing"), "{missing}");
        let empty = prompt_text(Some(&raw("[]")))
            .err()
            .map(message_of)
            .expect("a 400");
        assert!(empty.contains("at least one message"), "{empty}");
        let text = prompt_text(Some(&raw(r#""hi""#))).expect_err("a 400");
        assert_eq!(text.status, 400);
        assert!(text.body.contains("must be an array"), "{}", text.body);
    }
}
