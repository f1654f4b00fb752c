//! What the CLI's integration tests share: running the built `strobe-artifact` as a user
//! would, reading what it printed, and the repository's fixtures and scratch files.
#![allow(dead_code)]

#[path = "../../../tests/common/mod.rs"]
pub mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fixture's path as an argument for the binary.
pub fn fixture(relative: &str) -> String {
    common::fixture_path(relative)
        .to_string_lossy()
        .into_owned()
}

/// Runs the binary with `args` in the current directory.
pub fn run(args: &[&str]) -> Output {
    run_in(Path::new("."), args)
}

/// Runs the binary with `args` in `directory`.
pub fn run_in(directory: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strobe-artifact"))
        .args(args)
        .current_dir(directory)
        .output()
        .expect("the binary runs")
}

/// What the binary wrote to standard output.
pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// What the binary wrote to standard error.
pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

/// Fails, showing both streams, unless the binary exited with `code`.
#[track_caller]
pub fn assert_exit(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        stdout(output),
        stderr(output)
    );
}

/// Writes `text` to a fresh temporary file and returns its path.
pub fn temp_file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("strobe-{}-{name}", std::process::id()));
    std::fs::write(&path, text).expect("write");
    path
}

/// A fresh, empty temporary folder only the calling test uses.
pub fn temp_dir(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("strobe-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&path);
    std::fs::create_dir_all(&path).expect("temporary folder");
    path
}

/// The summary line whose first words are `label`, split on whitespace after the label.
pub fn summary_row(text: &str, label: &str) -> Vec<String> {
    let line = text
        .lines()
        .find(|line| line.starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} row in:\n{text}"));
    line[label.len()..]
        .split_whitespace()
        .map(str::to_string)
        .collect()
}
