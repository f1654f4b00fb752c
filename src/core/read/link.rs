//! A run carried in a link (docs/guide/results.md, *A link to a run*): the file a run was read
//! from, deflated and base64url-encoded into the fragment of a link to the page (`…/#run=…`). A
//! fragment never reaches a server, so the run travels from one browser to another in the link
//! alone. This module owns the fragment's format, both ways: [`encode_link`] writes it for
//! *Copy link*, and [`read_link`] reads the fragment of the address the page opened with.
//!
//! Opening a link is opening hostile input: the fragment may be cut, not base64, not deflate,
//! a deflate bomb, not UTF-8, not JSON, not this format, or carry a file that is no run. Every
//! one of those is a [`LinkError`] that says what to do; nothing is read past
//! [`MAX_LINK_TEXT_BYTES`] once inflated, and nothing of a fragment past
//! [`MAX_FRAGMENT_CHARS_READ`].

use std::io::{Read, Write};

use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use flate2::Compression;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::core::format::{counted, format_count};
use crate::core::read::carried::CarriedFile;
use crate::core::read::opened::OpenedArtifact;
use crate::core::read::validate::report::Verdict;
use crate::core::schema::ArtifactV1;

/// What the fragment of a link to a run starts with (after the `#`).
pub const LINK_FRAGMENT_PREFIX: &str = "run=";

/// The `format` the link's JSON names; a link of another format is refused with what to do.
pub const LINK_FORMAT: &str = "strobe-link/1";

/// The longest link strobe makes, page address included: 32,768 characters. Chromium opens
/// links of up to 2 MiB but shows at most 32 KiB of one in its address bar
/// (`kMaxURLDisplayChars`), and Slack cuts messages past 40,000 characters, so a longer link
/// would arrive cut in the places links are pasted. A run too large for it is shared as the
/// report instead.
pub const MAX_LINK_CHARS: usize = 32_768;

/// The longest fragment read when a link is opened (twice what strobe writes, for another
/// host's longer address): a longer one is refused before it is decoded.
pub const MAX_FRAGMENT_CHARS_READ: usize = 2 * MAX_LINK_CHARS;

/// The most bytes a link's payload may inflate to (1 MiB). A link's 24 KB of deflate holds
/// about 250 KB of artifact text at JSON's usual ratio; a payload that inflates past this is a
/// deflate bomb, and reading stops there.
pub const MAX_LINK_TEXT_BYTES: usize = 1024 * 1024;

/// base64url, written without padding, read with or without it.
const BASE64URL: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Why a run cannot be put in a link, or a link's run cannot be read. Each says what to do.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum LinkError {
    /// The run makes a link longer than [`MAX_LINK_CHARS`].
    #[error(
        "this run is too big for a link: it needs {} characters, and a link carries at most \
         {} (longer ones arrive cut in chat tools); save the report instead and send the file",
        format_count(*chars),
        format_count(MAX_LINK_CHARS)
    )]
    TooBig {
        /// The characters the link would have.
        chars: usize,
    },
    /// The fragment is longer than any link strobe makes.
    #[error(
        "this link is {} characters long, longer than any link strobe makes ({} at most), so \
         it was not read; ask for the report instead",
        format_count(*chars),
        format_count(MAX_FRAGMENT_CHARS_READ)
    )]
    FragmentTooLong {
        /// The fragment's characters.
        chars: usize,
    },
    /// The fragment is not base64url (a character outside it, or a cut at a bad place).
    #[error(
        "this link is damaged: its run is not readable text ({0}); it was probably cut or \
         changed when it was pasted, so ask for the link again or for the report"
    )]
    NotBase64(String),
    /// The decoded bytes are not deflate data.
    #[error(
        "this link is damaged: its run cannot be unpacked ({0}); ask for the link again or \
         for the report"
    )]
    NotDeflate(String),
    /// The payload inflates past [`MAX_LINK_TEXT_BYTES`].
    #[error(
        "this link unpacks to more than {} bytes, more than any run a link carries, so it was \
         not read; ask for the report instead",
        format_count(MAX_LINK_TEXT_BYTES)
    )]
    TooLarge,
    /// The payload is not UTF-8 or not JSON.
    #[error(
        "this link is damaged: what it carries is not the JSON strobe writes ({0}); ask for the \
         link again or for the report"
    )]
    NotJson(String),
    /// The payload is JSON of another format (or a newer one).
    #[error(
        "this link carries \"{0}\", which this strobe does not read (it reads {LINK_FORMAT}); \
         open it with the strobe that made it, or ask for the report"
    )]
    UnknownFormat(String),
    /// Redaction was asked for a file that is no artifact strobe writes.
    #[error(
        "the endpoint URL cannot be redacted in this file ({0}): it is not an artifact strobe \
         can write again; untick Redact to share it as it is"
    )]
    NotRedactable(String),
    /// The carried file holds no run strobe can show.
    #[error("this link's file \"{name}\" holds no run strobe can show: {reason}")]
    NotARun {
        /// The carried file's name (capped).
        name: String,
        /// What the reader said.
        reason: String,
    },
}

#[derive(Serialize)]
struct LinkOut<'a> {
    format: &'a str,
    name: &'a str,
    text: &'a str,
}

#[derive(Deserialize)]
struct LinkIn {
    format: String,
    name: String,
    text: String,
}

/// The link to `page` (the page's address without query or fragment) that carries `file`, or
/// why it cannot: the file makes a link longer than [`MAX_LINK_CHARS`].
pub fn encode_link(page: &str, file: &CarriedFile) -> Result<String, LinkError> {
    let overhead = page.len() + 1 + LINK_FRAGMENT_PREFIX.len();
    if file.text.len() > MAX_LINK_TEXT_BYTES {
        // It could never be read back; and deflating megabytes only to say no is waste.
        return Err(LinkError::TooBig {
            chars: overhead + file.text.len() / 8 * 4 / 3,
        });
    }
    let payload = LinkOut {
        format: LINK_FORMAT,
        name: &file.name,
        text: &file.text,
    };
    // A fixed structure of strings always serializes, and writing to a Vec cannot fail.
    let json = serde_json::to_vec(&payload).unwrap_or_default();
    let mut deflate = DeflateEncoder::new(Vec::new(), Compression::best());
    let deflated = deflate
        .write_all(&json)
        .and_then(|()| deflate.finish())
        .unwrap_or_default();
    let encoded = BASE64URL.encode(deflated);
    let chars = overhead + encoded.len();
    if chars > MAX_LINK_CHARS {
        return Err(LinkError::TooBig { chars });
    }
    Ok(format!("{page}#{LINK_FRAGMENT_PREFIX}{encoded}"))
}

/// `file` with its `base_url` replaced by the redaction marker, written again exactly as
/// *Download artifact* writes a redacted run ([`ArtifactV1::redact_base_url`]).
pub fn redacted(file: &CarriedFile) -> Result<CarriedFile, LinkError> {
    let mut artifact: ArtifactV1 = serde_json::from_str(&file.text)
        .map_err(|error| LinkError::NotRedactable(error.to_string()))?;
    artifact.redact_base_url();
    let text = artifact
        .to_json_text()
        .map_err(|error| LinkError::NotRedactable(error.to_string()))?;
    Ok(CarriedFile::new(&file.name, &text))
}

/// The file a page's fragment (`location.hash`, with or without its `#`) carries, or `None`
/// when the fragment is no link to a run (empty, or an anchor of the page).
pub fn read_link(hash: &str) -> Option<Result<CarriedFile, LinkError>> {
    link_payload(hash).map(decode)
}

/// Whether the fragment is a link to a run (whether or not it reads): a cheap test of its
/// prefix, so a page opened with no link, or with an anchor, needs none of the readers.
pub fn is_link(hash: &str) -> bool {
    link_payload(hash).is_some()
}

/// What follows the link's prefix in the fragment, if it has the prefix.
fn link_payload(hash: &str) -> Option<&str> {
    let fragment = hash.strip_prefix('#').unwrap_or(hash);
    fragment.strip_prefix(LINK_FRAGMENT_PREFIX)
}

fn decode(encoded: &str) -> Result<CarriedFile, LinkError> {
    let chars = encoded.chars().count();
    if chars > MAX_FRAGMENT_CHARS_READ {
        return Err(LinkError::FragmentTooLong { chars });
    }
    let deflated = BASE64URL
        .decode(encoded.trim())
        .map_err(|error| LinkError::NotBase64(error.to_string()))?;
    let mut json = Vec::new();
    DeflateDecoder::new(deflated.as_slice())
        .take(MAX_LINK_TEXT_BYTES as u64 + 1)
        .read_to_end(&mut json)
        .map_err(|error| LinkError::NotDeflate(error.to_string()))?;
    if json.len() > MAX_LINK_TEXT_BYTES {
        return Err(LinkError::TooLarge);
    }
    let payload: LinkIn = serde_json::from_slice(&json).map_err(|error| {
        if std::str::from_utf8(&json).is_err() {
            LinkError::NotJson("it is not UTF-8 text".to_owned())
        } else {
            LinkError::NotJson(error.to_string())
        }
    })?;
    if payload.format != LINK_FORMAT {
        let shown: String = payload.format.chars().take(40).collect();
        return Err(LinkError::UnknownFormat(shown));
    }
    Ok(CarriedFile::new(&payload.name, &payload.text))
}

/// The runs the file of a link holds, read as a dropped file is read, or why it holds none
/// strobe can show (refused, JSON of no known shape, or an artifact that breaks the rules).
pub fn link_runs(file: &CarriedFile) -> Result<Vec<OpenedArtifact>, LinkError> {
    let runs = OpenedArtifact::all_from_text(&file.name, &file.text);
    let not_a_run = |reason: String| LinkError::NotARun {
        name: file.name.chars().take(120).collect(),
        reason,
    };
    let Some(first) = runs.first() else {
        return Err(not_a_run("it is empty".to_owned()));
    };
    if let Some(refusal) = &first.refusal {
        return Err(not_a_run(refusal.to_string()));
    }
    if first.unrecognized {
        return Err(not_a_run(
            "it is JSON, but neither an artifact nor another tool's results".to_owned(),
        ));
    }
    if let Some(invalid) = runs.iter().find(|run| run.verdict() == Verdict::Invalid) {
        let problems = invalid.problems();
        let shown: Vec<&str> = problems.iter().take(3).map(String::as_str).collect();
        let more = problems.len().saturating_sub(shown.len());
        let mut reason = format!(
            "it breaks the artifact's rules ({}",
            counted(problems.len() as u64, "problem", "problems")
        );
        if !shown.is_empty() {
            reason.push_str(": ");
            reason.push_str(&shown.join("; "));
        }
        if more > 0 {
            reason.push_str(&format!("; and {more} more"));
        }
        reason.push(')');
        return Err(not_a_run(reason));
    }
    Ok(runs)
}

#[cfg(test)]
mod tests;
