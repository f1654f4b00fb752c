//! The report's HTML writing: text escaped for element content and attribute values, the only
//! way any string (from a file, a server or strobe) enters the document, and the
//! Content-Security-Policy that allows the report's own style and script by their hashes and
//! nothing else.

use std::fmt::Write as _;

use base64::Engine as _;
use sha2::{Digest, Sha256};

/// `text` safe in element content and in a double- or single-quoted attribute value: `&`, `<`,
/// `>`, `"` and `'` written as references, so no text can open a tag or leave an attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// `json` safe as the content of a `<script type="application/json">`: every `<` (which only
/// occurs inside its strings) written `\u003c`, so no text can end the element.
pub fn json_in_script(json: &str) -> String {
    json.replace('<', "\\u003c")
}

/// The CSP source of an inline element's exact text: `'sha256-…'`.
pub fn hash_source(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The report's policy: nothing may load from anywhere (`default-src 'none'`), only the style
/// and the script with these exact texts run, no `<base>`, no form sends anything.
pub fn content_security_policy(style: &str, script: &str) -> String {
    let mut policy = String::from("default-src 'none'; ");
    let _ = write!(
        policy,
        "style-src {}; script-src {}; base-uri 'none'; form-action 'none'",
        hash_source(style),
        hash_source(script)
    );
    policy
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_becomes_text() {
        assert_eq!(
            escape("<img src=x onerror=alert(1)> & \"'"),
            "&lt;img src=x onerror=alert(1)&gt; &amp; &quot;&#39;"
        );
        assert_eq!(escape("é ≤ 500 ms"), "é ≤ 500 ms");
        assert_eq!(
            json_in_script(r#"{"a":"</script>"}"#),
            r#"{"a":"\u003c/script>"}"#
        );
    }

    #[test]
    fn hashes_are_the_base64_of_the_sha256() {
        // printf '' | openssl dgst -sha256 -binary | base64
        assert_eq!(
            hash_source(""),
            "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
        );
        let policy = content_security_policy("a", "b");
        assert!(policy.starts_with("default-src 'none'; "));
        assert!(!policy.contains("unsafe"));
    }
}
