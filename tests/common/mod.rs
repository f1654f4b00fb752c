//! What several integration tests share: paths inside the repository and the list of every
//! artifact fixture.

use std::fs;
use std::path::{Path, PathBuf};

/// `relative` inside the repository.
pub fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// Every artifact fixture: the reference artifact first, then the JSON files of the real,
/// generation and invalid fixture directories, each directory sorted by name.
pub fn fixture_paths() -> Vec<PathBuf> {
    let mut paths = vec![repo_path("tests/fixtures/reference-artifact.json")];
    for directory in [
        "tests/fixtures/real",
        "tests/fixtures/generations",
        "tests/fixtures/invalid",
    ] {
        let mut found: Vec<PathBuf> = fs::read_dir(repo_path(directory))
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
