//! The bytes the simulator sends: OpenAI chat chunk and completion JSON, legacy completions
//! (`text_completion`) chunks and bodies, OpenAI error bodies, SSE events, HTTP chunked framing,
//! and how one event is cut into separate socket writes.
//!
//! Pure functions from values to bytes, so the wire format is tested without a socket.

use serde::{Deserialize, Serialize};

/// The id, creation time and model name shared by every chunk of one response.
#[derive(Debug, Clone)]
pub struct ChunkIdentity {
    /// `chatcmpl-…` id.
    pub id: String,
    /// Unix seconds when the request was received.
    pub created: u64,
    /// The model id as the client asked for it.
    pub model: String,
}

/// The field reasoning text travels in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningField {
    /// `reasoning_content`, as vLLM and DeepSeek send it (the default).
    ReasoningContent,
    /// `reasoning`, as some other servers do (the `reasoning-field` fault).
    Reasoning,
}

/// Token counts in the OpenAI `usage` shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u32,
    /// Reasoning plus content tokens.
    pub completion_tokens: u32,
    /// Prompt plus completion tokens.
    pub total_tokens: u32,
    /// How much of the prompt the prefix cache held.
    pub prompt_tokens_details: PromptTokensDetails,
    /// How much of the completion was reasoning.
    pub completion_tokens_details: CompletionTokensDetails,
}

/// `usage.prompt_tokens_details`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptTokensDetails {
    /// Prompt tokens served from the prefix cache.
    pub cached_tokens: u32,
}

/// `usage.completion_tokens_details`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionTokensDetails {
    /// Completion tokens that were reasoning.
    pub reasoning_tokens: u32,
}

impl Usage {
    /// Usage for a response with these counts.
    pub fn new(
        prompt_tokens: u32,
        cached_tokens: u32,
        reasoning_tokens: u32,
        content_tokens: u32,
    ) -> Self {
        let completion_tokens = reasoning_tokens.saturating_add(content_tokens);
        Self {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens.saturating_add(completion_tokens),
            prompt_tokens_details: PromptTokensDetails { cached_tokens },
            completion_tokens_details: CompletionTokensDetails { reasoning_tokens },
        }
    }
}

#[derive(Serialize)]
struct ChunkJson<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: Vec<ChoiceJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<&'a Usage>,
}

#[derive(Serialize)]
struct ChoiceJson<'a> {
    index: u32,
    delta: DeltaJson<'a>,
    logprobs: Option<()>,
    finish_reason: Option<&'a str>,
}

#[derive(Serialize, Default)]
struct DeltaJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<&'a str>,
}

fn chunk_json(
    identity: &ChunkIdentity,
    choice: Option<ChoiceJson<'_>>,
    usage: Option<&Usage>,
) -> String {
    let chunk = ChunkJson {
        id: &identity.id,
        object: "chat.completion.chunk",
        created: identity.created,
        model: &identity.model,
        choices: choice.into_iter().collect(),
        usage,
    };
    // Serializing plain strings and integers cannot fail; an empty object is a safe fallback.
    serde_json::to_string(&chunk).unwrap_or_else(|_| "{}".to_string())
}

fn delta_choice(delta: DeltaJson<'_>) -> ChoiceJson<'_> {
    ChoiceJson {
        index: 0,
        delta,
        logprobs: None,
        finish_reason: None,
    }
}

/// The first chunk: `delta: {role: "assistant", content: ""}`, as vLLM sends it.
pub fn role_chunk(identity: &ChunkIdentity) -> String {
    let delta = DeltaJson {
        role: Some("assistant"),
        content: Some(""),
        ..DeltaJson::default()
    };
    chunk_json(identity, Some(delta_choice(delta)), None)
}

/// A chunk carrying one reasoning token in `field`.
pub fn reasoning_chunk(identity: &ChunkIdentity, text: &str, field: ReasoningField) -> String {
    let delta = match field {
        ReasoningField::ReasoningContent => DeltaJson {
            reasoning_content: Some(text),
            ..DeltaJson::default()
        },
        ReasoningField::Reasoning => DeltaJson {
            reasoning: Some(text),
            ..DeltaJson::default()
        },
    };
    chunk_json(identity, Some(delta_choice(delta)), None)
}

/// A chunk carrying one content token.
pub fn content_chunk(identity: &ChunkIdentity, text: &str) -> String {
    let delta = DeltaJson {
        content: Some(text),
        ..DeltaJson::default()
    };
    chunk_json(identity, Some(delta_choice(delta)), None)
}

/// The chunk with an empty delta and the finish reason.
pub fn finish_chunk(identity: &ChunkIdentity, finish_reason: &str) -> String {
    let choice = ChoiceJson {
        index: 0,
        delta: DeltaJson::default(),
        logprobs: None,
        finish_reason: Some(finish_reason),
    };
    chunk_json(identity, Some(choice), None)
}

/// The usage chunk sent when `stream_options.include_usage` is set: no choices, only usage.
pub fn usage_chunk(identity: &ChunkIdentity, usage: &Usage) -> String {
    chunk_json(identity, None, Some(usage))
}

/// An event payload whose JSON is cut off mid-string (the `malformed-json` fault).
pub fn malformed_payload(identity: &ChunkIdentity) -> String {
    let whole = content_chunk(identity, "this event is cut off");
    let cut = whole.find("this event").unwrap_or(whole.len() / 2);
    whole[..cut].to_string()
}

#[derive(Serialize)]
struct CompletionJson<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: [CompletionChoiceJson<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<&'a Usage>,
}

#[derive(Serialize)]
struct CompletionChoiceJson<'a> {
    index: u32,
    message: MessageJson<'a>,
    logprobs: Option<()>,
    finish_reason: &'a str,
}

#[derive(Serialize)]
struct MessageJson<'a> {
    role: &'static str,
    content: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<&'a str>,
}

/// A non-streaming `chat.completion` body.
pub fn completion_body(
    identity: &ChunkIdentity,
    content: &str,
    reasoning: Option<(&str, ReasoningField)>,
    finish_reason: &str,
    usage: Option<&Usage>,
) -> String {
    let (reasoning_content, reasoning) = match reasoning {
        Some((text, ReasoningField::ReasoningContent)) => (Some(text), None),
        Some((text, ReasoningField::Reasoning)) => (None, Some(text)),
        None => (None, None),
    };
    let body = CompletionJson {
        id: &identity.id,
        object: "chat.completion",
        created: identity.created,
        model: &identity.model,
        choices: [CompletionChoiceJson {
            index: 0,
            message: MessageJson {
                role: "assistant",
                content,
                reasoning_content,
                reasoning,
            },
            logprobs: None,
            finish_reason,
        }],
        usage,
    };
    serde_json::to_string(&body).unwrap_or_else(|_| "{}".to_string())
}

#[derive(Serialize)]
struct TextCompletionJson<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: Vec<TextChoiceJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<&'a Usage>,
}

/// A choice of `/v1/completions`, streamed or not, with the members vLLM sends.
#[derive(Serialize)]
struct TextChoiceJson<'a> {
    index: u32,
    text: &'a str,
    logprobs: Option<()>,
    finish_reason: Option<&'a str>,
    stop_reason: Option<()>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_logprobs: Option<Option<()>>,
}

fn text_completion_json(
    identity: &ChunkIdentity,
    choice: Option<TextChoiceJson<'_>>,
    usage: Option<&Usage>,
) -> String {
    let body = TextCompletionJson {
        id: &identity.id,
        object: "text_completion",
        created: identity.created,
        model: &identity.model,
        choices: choice.into_iter().collect(),
        usage,
    };
    serde_json::to_string(&body).unwrap_or_else(|_| "{}".to_string())
}

/// A `/v1/completions` stream chunk carrying `text`. As vLLM does, the chunk with the last token
/// also carries the finish reason; there is no role chunk and no separate finish chunk.
pub fn text_chunk(identity: &ChunkIdentity, text: &str, finish_reason: Option<&str>) -> String {
    let choice = TextChoiceJson {
        index: 0,
        text,
        logprobs: None,
        finish_reason,
        stop_reason: None,
        prompt_logprobs: None,
    };
    text_completion_json(identity, Some(choice), None)
}

/// The `/v1/completions` usage chunk (`stream_options.include_usage`): no choices, only usage.
pub fn text_usage_chunk(identity: &ChunkIdentity, usage: &Usage) -> String {
    text_completion_json(identity, None, Some(usage))
}

/// A `/v1/completions` event payload whose JSON is cut off mid-string (`malformed-json`).
pub fn malformed_text_payload(identity: &ChunkIdentity) -> String {
    let whole = text_chunk(identity, "this event is cut off", None);
    let cut = whole.find("this event").unwrap_or(whole.len() / 2);
    whole[..cut].to_string()
}

/// A non-streaming `text_completion` body.
pub fn text_completion_body(
    identity: &ChunkIdentity,
    text: &str,
    finish_reason: &str,
    usage: Option<&Usage>,
) -> String {
    let choice = TextChoiceJson {
        index: 0,
        text,
        logprobs: None,
        finish_reason: Some(finish_reason),
        stop_reason: None,
        prompt_logprobs: Some(None),
    };
    text_completion_json(identity, Some(choice), usage)
}

/// An error in OpenAI's JSON shape: `{"error": {"message", "type", "param", "code"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// The inside of an [`ErrorBody`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// What went wrong and what to do about it.
    pub message: String,
    /// The OpenAI error type, e.g. `invalid_request_error`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The request field at fault, if any.
    pub param: Option<String>,
    /// A machine-readable code, e.g. `invalid_api_key`.
    pub code: Option<String>,
}

impl ErrorBody {
    /// An error body with these parts.
    pub fn new(
        message: impl Into<String>,
        kind: &str,
        param: Option<&str>,
        code: Option<&str>,
    ) -> Self {
        Self {
            error: ErrorDetail {
                message: message.into(),
                kind: kind.to_string(),
                param: param.map(str::to_string),
                code: code.map(str::to_string),
            },
        }
    }

    /// The body as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }
}

/// How SSE lines end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    /// `\n`, as most servers send.
    Lf,
    /// `\r\n` (the `crlf` fault; legal SSE, but it trips naive parsers).
    CrLf,
}

impl LineEnding {
    fn as_str(self) -> &'static str {
        match self {
            LineEnding::Lf => "\n",
            LineEnding::CrLf => "\r\n",
        }
    }
}

/// One SSE event: `data: <payload>` and a blank line.
pub fn sse_data_event(payload: &str, ending: LineEnding) -> Vec<u8> {
    let eol = ending.as_str();
    format!("data: {payload}{eol}{eol}").into_bytes()
}

/// One SSE comment line and a blank line, e.g. `: keep-alive`.
pub fn sse_comment(text: &str, ending: LineEnding) -> Vec<u8> {
    let eol = ending.as_str();
    format!(": {text}{eol}{eol}").into_bytes()
}

/// How one event is cut into socket writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WritePolicy {
    /// Largest write in bytes (`split-writes` uses 3); `None` writes the event whole.
    pub max_write_bytes: Option<usize>,
    /// Cut inside the first multibyte UTF-8 character of the event (`utf8-split`).
    pub split_inside_multibyte: bool,
}

/// Cuts `event` into the pieces to write one after another.
///
/// Returns the pieces and how many cuts fell inside a multibyte UTF-8 character.
pub fn split_into_writes(event: &[u8], policy: WritePolicy) -> (Vec<&[u8]>, u32) {
    let mut cuts: Vec<usize> = Vec::new();
    if policy.split_inside_multibyte {
        // A leading byte of a multibyte sequence is 0b11xxxxxx; cutting one byte after it always
        // lands inside the character.
        if let Some(lead) = event.iter().position(|byte| *byte >= 0xC0) {
            cuts.push(lead + 1);
        }
    }
    if let Some(size) = policy.max_write_bytes.filter(|size| *size > 0) {
        cuts.extend((size..event.len()).step_by(size));
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts.retain(|cut| *cut > 0 && *cut < event.len());
    let mut pieces = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    let mut cuts_inside_characters = 0;
    for cut in cuts {
        cuts_inside_characters += u32::from(is_continuation(event.get(cut)));
        pieces.push(&event[start..cut]);
        start = cut;
    }
    pieces.push(&event[start..]);
    (pieces, cuts_inside_characters)
}

fn is_continuation(byte: Option<&u8>) -> bool {
    matches!(byte, Some(byte) if byte & 0xC0 == 0x80)
}

/// `bytes` as one HTTP/1.1 chunk: hex length, CRLF, data, CRLF.
pub fn chunk_frame(bytes: &[u8]) -> Vec<u8> {
    let mut framed = format!("{:x}\r\n", bytes.len()).into_bytes();
    framed.extend_from_slice(bytes);
    framed.extend_from_slice(b"\r\n");
    framed
}

/// The last chunk of a chunked body.
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn identity() -> ChunkIdentity {
        ChunkIdentity {
            id: "chatcmpl-sim-000001".into(),
            created: 1_700_000_000,
            model: "strobe-sim-1".into(),
        }
    }

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).expect("chunks are JSON")
    }

    #[test]
    fn chunks_have_the_openai_shape() {
        let role = parse(&role_chunk(&identity()));
        assert_eq!(role["object"], "chat.completion.chunk");
        assert_eq!(role["choices"][0]["delta"]["role"], "assistant");
        assert_eq!(role["choices"][0]["delta"]["content"], "");
        assert_eq!(role["choices"][0]["finish_reason"], Value::Null);

        let reasoning = parse(&reasoning_chunk(
            &identity(),
            "hm",
            ReasoningField::ReasoningContent,
        ));
        assert_eq!(reasoning["choices"][0]["delta"]["reasoning_content"], "hm");
        assert!(reasoning["choices"][0]["delta"].get("content").is_none());
        let other = parse(&reasoning_chunk(
            &identity(),
            "hm",
            ReasoningField::Reasoning,
        ));
        assert_eq!(other["choices"][0]["delta"]["reasoning"], "hm");
        assert!(other["choices"][0]["delta"]
            .get("reasoning_content")
            .is_none());

        let content = parse(&content_chunk(&identity(), " code"));
        assert_eq!(content["choices"][0]["delta"]["content"], " code");
        let finish = parse(&finish_chunk(&identity(), "length"));
        assert_eq!(finish["choices"][0]["finish_reason"], "length");
        assert_eq!(finish["choices"][0]["delta"], serde_json::json!({}));
    }

    #[test]
    fn usage_counts_add_up_and_carry_cached_tokens() {
        let usage = Usage::new(1_000, 768, 8, 33);
        let chunk = parse(&usage_chunk(&identity(), &usage));
        assert_eq!(chunk["choices"], serde_json::json!([]));
        assert_eq!(chunk["usage"]["prompt_tokens"], 1_000);
        assert_eq!(chunk["usage"]["completion_tokens"], 41);
        assert_eq!(chunk["usage"]["total_tokens"], 1_041);
        assert_eq!(
            chunk["usage"]["prompt_tokens_details"]["cached_tokens"],
            768
        );
        assert_eq!(
            chunk["usage"]["completion_tokens_details"]["reasoning_tokens"],
            8
        );
    }

    #[test]
    fn the_malformed_payload_does_not_parse() {
        let payload = malformed_payload(&identity());
        assert!(payload.starts_with('{'));
        assert!(serde_json::from_str::<Value>(&payload).is_err());
        let payload = malformed_text_payload(&identity());
        assert!(payload.contains("\"text_completion\""));
        assert!(serde_json::from_str::<Value>(&payload).is_err());
    }

    #[test]
    fn completions_chunks_and_bodies_have_vllms_shape() {
        let chunk = parse(&text_chunk(&identity(), " code", None));
        assert_eq!(
            chunk,
            serde_json::json!({
                "id": "chatcmpl-sim-000001", "object": "text_completion", "created": 1_700_000_000,
                "model": "strobe-sim-1",
                "choices": [{"index": 0, "text": " code", "logprobs": null, "finish_reason": null,
                             "stop_reason": null}],
            })
        );
        let last = parse(&text_chunk(&identity(), " end", Some("length")));
        assert_eq!(last["choices"][0]["finish_reason"], "length");
        let usage = Usage::new(10, 0, 0, 3);
        let chunk = parse(&text_usage_chunk(&identity(), &usage));
        assert_eq!(chunk["object"], "text_completion");
        assert_eq!(chunk["choices"], serde_json::json!([]));
        assert_eq!(chunk["usage"]["total_tokens"], 13);
        let body = parse(&text_completion_body(
            &identity(),
            "a b",
            "stop",
            Some(&usage),
        ));
        assert_eq!(body["choices"][0]["text"], "a b");
        assert_eq!(body["choices"][0]["finish_reason"], "stop");
        assert_eq!(body["choices"][0]["prompt_logprobs"], Value::Null);
        assert!(body["choices"][0].get("delta").is_none());
        assert_eq!(body["usage"]["completion_tokens"], 3);
    }

    #[test]
    fn completion_and_error_bodies_have_the_openai_shape() {
        let usage = Usage::new(10, 0, 2, 3);
        let body = parse(&completion_body(
            &identity(),
            "a b c",
            Some(("x y", ReasoningField::ReasoningContent)),
            "stop",
            Some(&usage),
        ));
        assert_eq!(body["object"], "chat.completion");
        assert_eq!(body["choices"][0]["message"]["content"], "a b c");
        assert_eq!(body["choices"][0]["message"]["reasoning_content"], "x y");
        assert_eq!(body["usage"]["completion_tokens"], 5);
        let error =
            parse(&ErrorBody::new("no", "invalid_request_error", Some("model"), None).to_json());
        assert_eq!(
            error,
            serde_json::json!({"error": {"message": "no", "type": "invalid_request_error", "param": "model", "code": null}})
        );
    }

    #[test]
    fn events_end_with_a_blank_line_in_either_line_ending() {
        assert_eq!(
            sse_data_event("[DONE]", LineEnding::Lf),
            b"data: [DONE]\n\n"
        );
        assert_eq!(sse_data_event("{}", LineEnding::CrLf), b"data: {}\r\n\r\n");
        assert_eq!(
            sse_comment("keep-alive", LineEnding::Lf),
            b": keep-alive\n\n"
        );
    }

    #[test]
    fn writes_split_into_three_bytes_or_inside_a_character() {
        let event = "data: é\n\n".as_bytes();
        let (whole, split) = split_into_writes(event, WritePolicy::default());
        assert_eq!((whole, split), (vec![event], 0));

        let (threes, _) = split_into_writes(
            event,
            WritePolicy {
                max_write_bytes: Some(3),
                split_inside_multibyte: false,
            },
        );
        assert!(threes
            .iter()
            .all(|piece| !piece.is_empty() && piece.len() <= 3));
        assert_eq!(threes.concat(), event);

        let (utf8, split) = split_into_writes(
            event,
            WritePolicy {
                max_write_bytes: None,
                split_inside_multibyte: true,
            },
        );
        assert_eq!(split, 1);
        assert_eq!(utf8.len(), 2);
        assert!(
            std::str::from_utf8(utf8[0]).is_err(),
            "the first piece ends mid-character"
        );
        assert_eq!(utf8.concat(), event);

        let (ascii, split) = split_into_writes(
            b"data: x\n\n",
            WritePolicy {
                max_write_bytes: None,
                split_inside_multibyte: true,
            },
        );
        assert_eq!((ascii.len(), split), (1, 0));
    }

    #[test]
    fn chunk_framing_is_hex_length_crlf_data_crlf() {
        assert_eq!(chunk_frame(b"data: x\n\n"), b"9\r\ndata: x\n\n\r\n");
        assert_eq!(chunk_frame(&[b'a'; 26]).get(..4), Some(&b"1a\r\n"[..]));
    }
}
