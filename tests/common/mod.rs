//! The test kit: what the integration tests, the benches and the CLI's tests share — paths
//! inside the repository, fixtures read one way, and the reference run's settings. Each test
//! crate includes it as `mod common;` (from another crate: `#[path = …]`), so a helper one of
//! them does not use is not dead code.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use strobe::core::config::choices::PromptCacheMode;
use strobe::core::config::settings::RunConfig;

/// The repository's root: the nearest directory above the crate that holds `Cargo.lock` (the
/// workspace's), so the kit works from the app, the CLI and the simulator alike.
pub fn repo_root() -> PathBuf {
    let mut dir = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    while !dir.join("Cargo.lock").exists() {
        assert!(
            dir.pop(),
            "no Cargo.lock above {}",
            env!("CARGO_MANIFEST_DIR")
        );
    }
    dir
}

/// `relative` inside the repository.
pub fn repo_path(relative: &str) -> PathBuf {
    repo_root().join(relative)
}

/// `relative` inside `tests/fixtures`.
pub fn fixture_path(relative: &str) -> PathBuf {
    repo_path("tests/fixtures").join(relative)
}

/// The text of a fixture, or a panic that names it.
pub fn fixture_text(relative: &str) -> String {
    let path = fixture_path(relative);
    fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// A fixture parsed as JSON, or a panic that names it.
pub fn fixture_json(relative: &str) -> Value {
    serde_json::from_str(&fixture_text(relative))
        .unwrap_or_else(|error| panic!("{relative} is not JSON: {error}"))
}

/// The reference artifact's text (`tests/fixtures/reference-artifact.json`).
pub fn reference_text() -> String {
    fixture_text("reference-artifact.json")
}

/// The reference artifact, parsed.
pub fn reference_json() -> Value {
    fixture_json("reference-artifact.json")
}

/// The settings the reference artifact was made with (ARTIFACT.md §0): only inputs, nothing read
/// from its results; the base URL is the one its file records.
pub fn reference_config() -> RunConfig {
    RunConfig {
        base_url: "http://10.0.0.7:8000/v1".to_owned(),
        model: "qwen38-swift15-ninfer-dflash2-c4-262k".to_owned(),
        engine: Some("ninfer".to_owned()),
        gpu: Some("rtx5090".to_owned()),
        requests: 6,
        concurrency: 1,
        context_tokens: 65_536,
        context_seed: 1_717,
        max_tokens: 8_192,
        prompt_cache_mode: PromptCacheMode::Unique,
        request_canaries: true,
        temperature: Some(0.9),
        top_p: Some(0.95),
        ..RunConfig::default()
    }
}

/// Every artifact fixture: the reference artifact first, then the JSON files of the real,
/// generation and invalid fixture directories, each directory sorted by name.
pub fn fixture_paths() -> Vec<PathBuf> {
    let mut paths = vec![fixture_path("reference-artifact.json")];
    for directory in ["real", "generations", "invalid"] {
        let mut found: Vec<PathBuf> = fs::read_dir(fixture_path(directory))
            .expect("fixture directory")
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| {
                path.extension()
                    .is_some_and(|extension| extension == "json")
            })
            .collect();
        found.sort();
        paths.extend(found);
    }
    paths
}
