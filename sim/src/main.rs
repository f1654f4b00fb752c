//! The `strobe-sim` command: parses flags, starts the simulator, and runs until Ctrl-C/SIGTERM.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use strobe_sim::{spawn, Args};

fn main() -> ExitCode {
    let config = match Args::parse().into_config() {
        Ok(config) => config,
        Err(error) => {
            eprintln!("strobe-sim: {error}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("strobe-sim: cannot start the async runtime ({error})");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let models = config.models.join(", ");
        let running = match spawn(config).await {
            Ok(running) => running,
            Err(error) => {
                eprintln!("strobe-sim: {error}");
                return ExitCode::FAILURE;
            }
        };
        for addr in &running.addrs {
            say(&format!("strobe-sim listening on http://{addr}/v1 (models: {models}; truth at http://{addr}/sim/truth)"));
        }
        wait_for_stop_signal().await;
        say("strobe-sim: shutting down");
        running.shutdown().await;
        ExitCode::SUCCESS
    })
}

/// Prints a line on standard output. A reader that went away (a closed pipe, `| head`) is no
/// reason to stop serving, so a failed write is ignored where `println!` would panic.
fn say(line: &str) {
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// Resolves on Ctrl-C, or SIGTERM on Unix (what `kill` and process managers send).
async fn wait_for_stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut terminate) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            }
            return;
        }
    }
    // Without a SIGTERM handler, Ctrl-C is the only way to stop; an error here means no signal
    // can be awaited at all, so stop at once rather than run unstoppable.
    let _ = tokio::signal::ctrl_c().await;
}
