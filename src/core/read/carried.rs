//! The files a strobe report carries (docs/guide/results.md, *The one-file report*): the artifacts
//! a one-file HTML report was made from, kept in it as text so that dropping the report on the page
//! loads the same runs. This module owns the block's format, both ways: [`carried_block`] writes
//! the `<script type="application/json">` element `present::report` puts in the document, and
//! [`carried_files`] takes the files back out of a report's text, within limits a hostile
//! report cannot get past. A report is told by its content ([`looks_like_report`]), never by
//! its name.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The opening tag of the element that holds the files, exactly as [`carried_block`] writes it.
pub const CARRIED_OPEN_TAG: &str = r#"<script type="application/json" id="strobe-artifacts">"#;

/// The `format` the block names; a report of another format is refused with what to do.
pub const CARRIED_FORMAT: &str = "strobe-report/1";

/// Most files one report carries (as many as a `.zip` holds).
pub const MAX_CARRIED_FILES: usize = 1_000;

/// One file a report carries: its name and its exact text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CarriedFile {
    /// The name it was loaded under.
    pub name: String,
    /// Its text, byte for byte as it was read.
    pub text: Arc<str>,
}

impl CarriedFile {
    /// A file named `name` holding `text`.
    pub fn new(name: &str, text: &str) -> Self {
        Self {
            name: name.to_owned(),
            text: Arc::from(text),
        }
    }
}

/// Why the files of something that looks like a report could not be taken out of it.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum CarriedError {
    /// An HTML file without strobe's block: not a report strobe saved.
    #[error(
        "this HTML file is not a strobe report (it carries no artifacts); drop a report saved \
         with strobe's Save report, or the artifact .json itself"
    )]
    NotAReport,
    /// The block is there but does not end, or is not the JSON strobe writes.
    #[error(
        "this strobe report is damaged: the artifacts it carries cannot be read ({0}); save \
         the report again from strobe, or drop the artifact .json itself"
    )]
    Damaged(String),
    /// A newer (or unknown) format of the block.
    #[error(
        "this report carries its artifacts as \"{0}\", which this strobe does not read \
         (it reads {CARRIED_FORMAT}); open it with a newer strobe, or drop the artifact .json"
    )]
    UnknownFormat(String),
    /// More files than a report may carry.
    #[error(
        "this report carries {0} files, more than the {MAX_CARRIED_FILES} strobe reads from \
         one report; drop the artifacts themselves"
    )]
    TooMany(usize),
}

#[derive(Serialize)]
struct BlockOut<'a> {
    format: &'a str,
    files: Vec<FileOut<'a>>,
}

#[derive(Serialize)]
struct FileOut<'a> {
    name: &'a str,
    text: &'a str,
}

#[derive(Deserialize)]
struct BlockIn {
    format: String,
    files: Vec<FileIn>,
}

#[derive(Deserialize)]
struct FileIn {
    name: String,
    text: String,
}

/// The element that carries `files`: JSON in a `<script type="application/json">`, which the
/// browser never runs, with every `<` written `\u003c` so that no text in it (a hostile model
/// name, a `</script>` in a server's error) can end the element or open a comment.
pub fn carried_block(files: &[CarriedFile]) -> String {
    let block = BlockOut {
        format: CARRIED_FORMAT,
        files: files
            .iter()
            .map(|file| FileOut {
                name: &file.name,
                text: &file.text,
            })
            .collect(),
    };
    // Serializing strings and a fixed structure cannot fail.
    let json = serde_json::to_string(&block).unwrap_or_default();
    let mut element = String::with_capacity(json.len() + 128);
    element.push_str(CARRIED_OPEN_TAG);
    // `<` only occurs inside JSON strings, where `\u003c` reads back as the same character.
    element.push_str(&json.replace('<', "\\u003c"));
    element.push_str("</script>");
    element
}

/// Whether `text` is a strobe report: it holds the block [`carried_block`] writes.
pub fn looks_like_report(text: &str) -> bool {
    text.contains(CARRIED_OPEN_TAG)
}

/// Whether `text` reads as an HTML document (a doctype or an `<html>` tag first).
pub fn looks_like_html(text: &str) -> bool {
    let start = text.trim_start_matches('\u{feff}').trim_start();
    let head: String = start.chars().take(32).collect::<String>().to_lowercase();
    head.starts_with("<!doctype html") || head.starts_with("<html")
}

/// The files a report carries, in the order it carries them.
pub fn carried_files(text: &str) -> Result<Vec<CarriedFile>, CarriedError> {
    let start = text
        .find(CARRIED_OPEN_TAG)
        .ok_or(CarriedError::NotAReport)?
        + CARRIED_OPEN_TAG.len();
    let rest = &text[start..];
    let end = rest
        .find("</script>")
        .ok_or_else(|| CarriedError::Damaged("the block does not end".to_owned()))?;
    let block: BlockIn = serde_json::from_str(&rest[..end])
        .map_err(|error| CarriedError::Damaged(error.to_string()))?;
    if block.format != CARRIED_FORMAT {
        let shown: String = block.format.chars().take(40).collect();
        return Err(CarriedError::UnknownFormat(shown));
    }
    if block.files.len() > MAX_CARRIED_FILES {
        return Err(CarriedError::TooMany(block.files.len()));
    }
    Ok(block
        .files
        .into_iter()
        .map(|file| CarriedFile {
            name: file.name,
            text: Arc::from(file.text),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_come_back_byte_for_byte_and_no_text_ends_the_element() {
        let hostile = "{\"model\": \"</script><img src=x onerror=alert(1)><!--\", \"x\": \"\u{2028}é\\u0000\"}\n";
        let files = vec![
            CarriedFile::new("a <b>.json", hostile),
            CarriedFile::new("plain.json", "{}"),
        ];
        let block = carried_block(&files);
        let inner = &block[CARRIED_OPEN_TAG.len()..block.len() - "</script>".len()];
        assert!(!inner.contains('<'), "{inner}");
        let page = format!("<!doctype html><html><body>{block}<script>x()</script></body></html>");
        assert!(looks_like_report(&page));
        assert!(looks_like_html(&page));
        assert_eq!(carried_files(&page), Ok(files));
    }

    #[test]
    fn a_broken_or_foreign_block_says_what_is_wrong() {
        assert_eq!(
            carried_files("<!doctype html><p>hi</p>"),
            Err(CarriedError::NotAReport)
        );
        let unended = format!("{CARRIED_OPEN_TAG}{{\"format\":");
        assert!(matches!(
            carried_files(&unended),
            Err(CarriedError::Damaged(_))
        ));
        let not_json = format!("{CARRIED_OPEN_TAG}alert(1)</script>");
        assert!(matches!(
            carried_files(&not_json),
            Err(CarriedError::Damaged(_))
        ));
        let newer =
            format!("{CARRIED_OPEN_TAG}{{\"format\":\"strobe-report/9\",\"files\":[]}}</script>");
        assert_eq!(
            carried_files(&newer),
            Err(CarriedError::UnknownFormat("strobe-report/9".to_owned()))
        );
        let many: Vec<CarriedFile> = (0..=MAX_CARRIED_FILES)
            .map(|n| CarriedFile::new(&n.to_string(), ""))
            .collect();
        assert_eq!(
            carried_files(&carried_block(&many)),
            Err(CarriedError::TooMany(MAX_CARRIED_FILES + 1))
        );
        assert!(!looks_like_html("{\"a\": 1}"));
        assert!(looks_like_html("\u{feff}  <!DOCTYPE HTML>"));
    }
}
