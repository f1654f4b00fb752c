//! From bytes to events: the incremental SSE decoder ([`sse::SseDecoder`], fed byte slices split
//! anywhere, even inside a UTF-8 character or a CRLF) and the chunk reader that takes from each
//! `chat.completion.chunk` only what the measurement uses ([`chunk_json`]), with Python's JSON
//! rules. Nothing here knows about time: a read's timestamp is the caller's.

pub mod chunk_json;
pub mod sse;
