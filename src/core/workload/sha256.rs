//! A workload file's identity: the SHA-256 of its bytes, as the summary and the artifact record
//! it (`sha256:<64 lowercase hex>`), so two runs can be told to have read the same file.

use sha2::{Digest, Sha256};

/// `sha256:` and the 64 lowercase hex digits of the SHA-256 of `bytes`.
pub fn sha256_prefixed(bytes: &[u8]) -> String {
    let mut hash = FileHash::default();
    hash.update(bytes);
    hash.finish()
}

/// The SHA-256 of a file read in pieces.
#[derive(Clone, Debug, Default)]
pub struct FileHash(Sha256);

impl FileHash {
    /// Adds the next piece of the file.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// `sha256:` and the 64 lowercase hex digits of the hash of every piece added.
    pub fn finish(self) -> String {
        hex_prefixed(&self.0.finalize())
    }
}

/// `sha256:` and the hex digits of `digest`.
fn hex_prefixed(digest: &[u8]) -> String {
    let mut text = String::with_capacity(7 + 64);
    text.push_str("sha256:");
    for &byte in digest {
        text.push(hex_digit(byte >> 4));
        text.push(hex_digit(byte & 0x0f));
    }
    text
}

/// The lowercase hex digit of a nibble.
fn hex_digit(nibble: u8) -> char {
    char::from_digit(u32::from(nibble), 16).unwrap_or('0')
}
