//! Runs the built `strobe-sim` as a newcomer would (issue #39): `--host localhost` listens, a
//! host that does not resolve is refused with what to give instead, and `--help` says what a
//! first request streams with the default thinking, which the running binary then does.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{chat_body, post_stream};

/// The simulator started with `flags`, and the base URL its first `listening` line names. The
/// rest of its output goes to a closed pipe, as after `| head -1`, which it must survive.
fn start_binary(flags: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_strobe-sim"))
        .args(flags)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("strobe-sim starts");
    let stdout = child.stdout.take().expect("its standard output");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("a first line");
    let url = line
        .strip_prefix("strobe-sim listening on ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("a listening line, got {line:?}"))
        .to_owned();
    (child, url)
}

/// Stops the simulator the way a process manager does (SIGTERM) and gives its exit code.
fn stop(mut child: Child) -> Option<i32> {
    let terminated = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(terminated.success());
    child.wait().expect("strobe-sim exits").code()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_localhost_listens_on_loopback_and_streams_reasoning_first_by_default() {
    let (child, base_url) = start_binary(&[
        "--host",
        "localhost",
        "--port",
        "0",
        "--decode-interval-ms",
        "1",
    ]);
    assert!(
        base_url.starts_with("http://127.0.0.1:") && base_url.ends_with("/v1"),
        "{base_url}"
    );
    let origin = base_url.trim_end_matches("/v1").to_owned();
    let client = reqwest::Client::new();
    // What --help says: the default 8 reasoning tokens come first, so max_tokens 8 streams no
    // content, and the ninth token is the first content.
    let idle = Duration::from_secs(10);
    let eight = post_stream(
        &client,
        &origin,
        chat_body("strobe-sim-1", "hello", 8, true, None),
        &[],
        idle,
    )
    .await;
    let nine = post_stream(
        &client,
        &origin,
        chat_body("strobe-sim-1", "hello", 9, true, None),
        &[],
        idle,
    )
    .await;
    let no_thinking = post_stream(
        &client,
        &origin,
        chat_body("strobe-sim-1", "hello", 8, true, Some(false)),
        &[],
        idle,
    )
    .await;
    assert_eq!(stop(child), Some(0), "SIGTERM stops it cleanly");
    assert_eq!(eight.status, 200);
    assert_eq!((eight.reasoning_chunks, eight.content_chunks), (8, 0));
    assert_eq!((nine.reasoning_chunks, nine.content_chunks), (8, 1));
    assert_eq!(no_thinking.reasoning_chunks, 0);
    assert!(no_thinking.content_chunks > 0, "{no_thinking:?}");
}

#[test]
fn a_host_that_does_not_resolve_is_refused_with_what_to_give() {
    let output = Command::new(env!("CARGO_BIN_EXE_strobe-sim"))
        .args(["--host", "no-such-host.invalid", "--port", "0"])
        .output()
        .expect("strobe-sim runs");
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("--host `no-such-host.invalid` does not resolve"),
        "{error}"
    );
    assert!(error.contains("give an IP address"), "{error}");
    assert!(!error.contains("invalid IP address syntax"), "{error}");
}

#[test]
fn help_says_that_reasoning_comes_first_and_how_to_get_content_first() {
    let output = Command::new(env!("CARGO_BIN_EXE_strobe-sim"))
        .arg("--help")
        .output()
        .expect("strobe-sim runs");
    assert_eq!(output.status.code(), Some(0));
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(
        help.contains("every answer starts with 8 reasoning tokens"),
        "{help}"
    );
    assert!(help.contains("max_tokens 8 or less streams no"), "{help}");
    for way in [
        "--reasoning-tokens 0",
        "--thinking-default off",
        "enable_thinking",
    ] {
        assert!(help.contains(way), "{way}: {help}");
    }
    // The text names the default, so it must follow it.
    let defaults = strobe_sim::SimConfig::default();
    assert!(help.contains(&format!(
        "starts with {} reasoning tokens",
        defaults.reasoning_tokens
    )));
}
