//! Text from a file, kept as data: capped in length ([`CappedText`]) so a 10 MB model name
//! cannot blow up a page, and markup-looking strings noticed (they are shown as text anyway).

use std::fmt;

use serde_json::Value;

/// Longest text kept for display from any string field, in characters.
pub const DISPLAY_TEXT_MAX_CHARS: usize = 512;

/// At most this many markup-like strings are reported per file; one is enough to warn.
pub const MARKUP_NOTICES_MAX: usize = 20;

/// A string from a file, kept verbatim up to [`DISPLAY_TEXT_MAX_CHARS`] characters.
///
/// The text is data: it must be rendered as a text node (or canvas text), never parsed as
/// HTML or Markdown. [`fmt::Display`] appends `…` when the original was longer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CappedText {
    /// The first [`DISPLAY_TEXT_MAX_CHARS`] characters of the original, unchanged.
    pub text: String,
    /// The original was longer than the cap.
    pub truncated: bool,
    /// Length of the original in characters.
    pub original_chars: usize,
}

impl CappedText {
    /// Keeps the first [`DISPLAY_TEXT_MAX_CHARS`] characters of `original`.
    pub fn new(original: &str) -> Self {
        Self::with_limit(original, DISPLAY_TEXT_MAX_CHARS)
    }

    /// Keeps the first `max_chars` characters of `original`.
    pub fn with_limit(original: &str, max_chars: usize) -> Self {
        let original_chars = original.chars().count();
        match original.char_indices().nth(max_chars) {
            Some((cut, _)) => Self {
                text: original[..cut].to_owned(),
                truncated: true,
                original_chars,
            },
            None => Self {
                text: original.to_owned(),
                truncated: false,
                original_chars,
            },
        }
    }

    /// The kept text, without the ellipsis.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for CappedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)?;
        if self.truncated {
            f.write_str("…")?;
        }
        Ok(())
    }
}

/// A string field, capped for display; other types are `None`.
pub(crate) fn capped_string(value: Option<&Value>) -> Option<CappedText> {
    value.and_then(Value::as_str).map(CappedText::new)
}

pub(crate) const JAVASCRIPT_SCHEME: &[u8] = b"javascript:";

/// True when `text` looks like HTML or script markup: a `<` opening a tag, comment or
/// declaration, or a `javascript:` URL. It only drives a warning; rendering never trusts text.
pub fn looks_like_markup(text: &str) -> bool {
    let bytes = text.as_bytes();
    let tag_open = bytes.windows(2).any(|pair| {
        pair[0] == b'<' && (pair[1].is_ascii_alphabetic() || matches!(pair[1], b'/' | b'!' | b'?'))
    });
    tag_open
        || bytes
            .windows(JAVASCRIPT_SCHEME.len())
            .any(|window| window.eq_ignore_ascii_case(JAVASCRIPT_SCHEME))
}

/// Paths of up to [`MARKUP_NOTICES_MAX`] strings or keys that look like markup. Iterative, so
/// the depth of the input does not matter.
pub(crate) fn markup_notices(value: &Value) -> Vec<LoadNotice> {
    let mut notices = Vec::new();
    let mut pending: Vec<(String, &Value)> = vec![("$".to_owned(), value)];
    while let Some((path, value)) = pending.pop() {
        if notices.len() >= MARKUP_NOTICES_MAX {
            break;
        }
        match value {
            Value::String(text) if looks_like_markup(text) => {
                notices.push(LoadNotice::MarkupLikeText {
                    excerpt: CappedText::with_limit(text, 80),
                    path,
                });
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate().rev() {
                    if matches!(item, Value::String(_) | Value::Array(_) | Value::Object(_)) {
                        pending.push((format!("{path}[{index}]"), item));
                    }
                }
            }
            Value::Object(object) => {
                let mut children = Vec::new();
                for (key, item) in object {
                    let child_path = format!("{path}.{key}");
                    if looks_like_markup(key) {
                        notices.push(LoadNotice::MarkupLikeText {
                            excerpt: CappedText::with_limit(key, 80),
                            path: child_path.clone(),
                        });
                    }
                    if matches!(item, Value::String(_) | Value::Array(_) | Value::Object(_)) {
                        children.push((child_path, item));
                    }
                }
                pending.extend(children.into_iter().rev());
            }
            _ => {}
        }
    }
    notices.truncate(MARKUP_NOTICES_MAX);
    notices
}

/// Something worth telling the user about a file that does not make it invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadNotice {
    /// A string (or key) looks like HTML or script markup. strobe shows it as plain text only.
    MarkupLikeText {
        /// JSON path of the string, e.g. `$.model` or `$.failures[2].error_message`.
        path: String,
        /// The start of the string, capped at 80 characters, as data.
        excerpt: CappedText,
    },
    /// `request_timings` entries that are not objects were skipped.
    RowsSkipped {
        /// How many entries were skipped.
        count: usize,
    },
}

impl fmt::Display for LoadNotice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadNotice::MarkupLikeText { path, .. } => write!(
                f,
                "{path} contains text that looks like HTML or script; strobe shows it as plain \
                 text and never runs it"
            ),
            LoadNotice::RowsSkipped { count } => write!(
                f,
                "{count} request_timings entries are not objects and were skipped"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_text_cuts_on_character_boundaries() {
        let long = "é".repeat(DISPLAY_TEXT_MAX_CHARS + 88);
        let capped = CappedText::new(&long);
        assert!(capped.truncated);
        assert_eq!(capped.original_chars, DISPLAY_TEXT_MAX_CHARS + 88);
        assert_eq!(capped.text.chars().count(), DISPLAY_TEXT_MAX_CHARS);
        assert_eq!(capped.to_string(), format!("{}…", capped.text));

        let exact = "x".repeat(DISPLAY_TEXT_MAX_CHARS);
        let kept = CappedText::new(&exact);
        assert!(!kept.truncated);
        assert_eq!(kept.to_string(), exact);
        assert_eq!(CappedText::new("").to_string(), "");
    }

    #[test]
    fn markup_detection_flags_tags_and_script_urls_only() {
        for markup in [
            "<script>alert(1)</script>",
            "</b>",
            "<!-- x -->",
            "<?xml?>",
            "JavaScript:alert(1)",
            "model <img src=x>",
        ] {
            assert!(looks_like_markup(markup), "{markup}");
        }
        for plain in ["", "1<2", "ttft <= 5 ms", "a < b", "qwen3-8b", "x>y"] {
            assert!(!looks_like_markup(plain), "{plain}");
        }
    }
}
