//! `sim-capacity`: measures how much streaming the simulator itself can serve, so a benchmark
//! run against it is known not to be limited by it.
//!
//! It starts the simulator in-process and drives it with a minimal raw-socket client (HTTP/1.1,
//! chunked decoding, one SSE event per chunk) on the same runtime, so both share this machine's
//! cores and the figures are a lower bound on the server alone. Two phases:
//!
//! 1. **Throughput**: decode interval 0, N clients each streaming back-to-back requests on a
//!    keep-alive connection for a fixed time; reports SSE events/s received.
//! 2. **Concurrent streams**: the default 8 ms decode interval with no load slowdown, N streams
//!    opened at once; reports how many were active together and how late their last token came
//!    against the latency model's schedule (from the truth log).
//!
//! Every phase has a deadline, so the whole run stays under a minute.

use std::io;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use strobe_sim::{spawn, Outcome, SimConfig, TruthRecord};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Measure the simulator's own capacity: events/s and concurrent streams.
#[derive(Debug, Parser)]
#[command(name = "sim-capacity")]
struct Args {
    /// Seconds each throughput level runs.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Client counts for the throughput phase.
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 16, 64, 256])]
    throughput_clients: Vec<usize>,
    /// Tokens per request in the throughput phase.
    #[arg(long, default_value_t = 1_000)]
    throughput_tokens: u32,
    /// Stream counts for the concurrency phase.
    #[arg(long, value_delimiter = ',', default_values_t = [128usize, 512, 1024, 2048])]
    streams: Vec<usize>,
    /// Tokens per stream in the concurrency phase (at 8 ms each).
    #[arg(long, default_value_t = 250)]
    stream_tokens: u32,
}

/// Decode interval of the concurrency phase: the simulator's default.
const STREAM_INTERVAL_MS: f64 = 8.0;
/// Longest one concurrency level may take before it is reported as unfinished.
const STREAM_LEVEL_DEADLINE: Duration = Duration::from_secs(15);

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("sim-capacity: cannot start the async runtime ({error})");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("sim-capacity: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let cores = std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1);
    println!("strobe-sim capacity on {cores} core(s); client and server share them, so these are lower bounds.\n");
    println!("Throughput (decode interval 0, {} tokens per request, keep-alive clients, {} s per level)\n", args.throughput_tokens, args.seconds);
    println!("| clients | SSE events/s | requests/s | peak active seqs |");
    println!("|---:|---:|---:|---:|");
    for clients in &args.throughput_clients {
        let level = throughput_level(
            *clients,
            args.throughput_tokens,
            Duration::from_secs_f64(args.seconds),
        )
        .await?;
        println!(
            "| {} | {:.0} | {:.1} | {} |",
            clients, level.events_per_s, level.requests_per_s, level.peak_active
        );
    }
    println!("\nConcurrent streams ({STREAM_INTERVAL_MS} ms decode interval, no load slowdown, {} tokens per stream, all opened at once)\n", args.stream_tokens);
    println!("| streams | completed | peak active seqs | SSE events/s | last-token lateness p50 / p99 / max (ms) |");
    println!("|---:|---:|---:|---:|---|");
    for streams in &args.streams {
        let level = streams_level(*streams, args.stream_tokens).await?;
        println!(
            "| {} | {} | {} | {:.0} | {:.1} / {:.1} / {:.1} |",
            streams,
            level.completed,
            level.peak_active,
            level.events_per_s,
            level.lateness_p50,
            level.lateness_p99,
            level.lateness_max
        );
    }
    Ok(())
}

fn base_config() -> SimConfig {
    let mut config = SimConfig {
        ports: vec![0],
        reasoning_tokens: 0,
        // Far more words than any max_tokens here, so every answer runs to max_tokens.
        answer_words: 1_000_000,
        ..SimConfig::default()
    };
    config.latency.max_num_seqs = 100_000;
    config.latency.prefill_tok_s = f64::INFINITY;
    config.latency.decode_slowdown_per_seq = 0.0;
    config
}

struct ThroughputLevel {
    events_per_s: f64,
    requests_per_s: f64,
    peak_active: usize,
}

async fn throughput_level(
    clients: usize,
    tokens: u32,
    duration: Duration,
) -> Result<ThroughputLevel, String> {
    let mut config = base_config();
    config.latency.decode_interval_ms = 0.0;
    config.truth_capacity = 10_000;
    let running = spawn(config).await.map_err(|error| error.to_string())?;
    let addr = running.addrs[0];
    let events = Arc::new(AtomicU64::new(0));
    let requests = Arc::new(AtomicU64::new(0));
    let deadline = tokio::time::Instant::now() + duration;
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(clients);
    for client in 0..clients {
        let (events, requests) = (Arc::clone(&events), Arc::clone(&requests));
        tasks.push(tokio::spawn(async move {
            let work = async {
                let mut stream = connect(addr).await?;
                let mut buffer = Vec::new();
                for round in 0u64.. {
                    let request = chat_request(
                        &format!("throughput client {client} round {round}"),
                        tokens,
                        true,
                    );
                    stream.write_all(&request).await?;
                    read_stream(&mut stream, &mut buffer, &events).await?;
                    requests.fetch_add(1, Ordering::Relaxed);
                }
                Ok::<(), io::Error>(())
            };
            // The deadline cuts the loop; events counted until then are the measurement.
            match tokio::time::timeout_at(deadline, work).await {
                Ok(Err(error)) => Err(error),
                _ => Ok(()),
            }
        }));
    }
    for task in tasks {
        task.await
            .map_err(|error| error.to_string())?
            .map_err(|error| format!("a throughput client failed: {error}"))?;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let level = ThroughputLevel {
        events_per_s: events.load(Ordering::Relaxed) as f64 / elapsed,
        requests_per_s: requests.load(Ordering::Relaxed) as f64 / elapsed,
        peak_active: running.peak_active_sequences(),
    };
    running.shutdown().await;
    Ok(level)
}

struct StreamsLevel {
    completed: usize,
    peak_active: usize,
    events_per_s: f64,
    lateness_p50: f64,
    lateness_p99: f64,
    lateness_max: f64,
}

async fn streams_level(streams: usize, tokens: u32) -> Result<StreamsLevel, String> {
    let mut config = base_config();
    config.latency.decode_interval_ms = STREAM_INTERVAL_MS;
    let running = spawn(config).await.map_err(|error| error.to_string())?;
    let addr = running.addrs[0];
    let events = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(streams);
    for index in 0..streams {
        let events = Arc::clone(&events);
        tasks.push(tokio::spawn(async move {
            let work = async {
                let mut stream = connect(addr).await?;
                stream
                    .write_all(&chat_request(&format!("stream {index}"), tokens, false))
                    .await?;
                read_stream(&mut stream, &mut Vec::new(), &events).await
            };
            tokio::time::timeout(STREAM_LEVEL_DEADLINE, work).await
        }));
    }
    for task in tasks {
        match task.await.map_err(|error| error.to_string())? {
            Ok(Ok(())) | Err(_) => {}
            Ok(Err(error)) => return Err(format!("a stream client failed: {error}")),
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    // Records are pushed just after the last write; give the last few a moment.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let records: Vec<TruthRecord> = running
        .truth
        .since(0)
        .into_iter()
        .filter(|record| record.outcome == Outcome::Completed)
        .collect();
    let mut lateness: Vec<f64> = records.iter().filter_map(last_token_lateness_ms).collect();
    lateness.sort_by(f64::total_cmp);
    let percentile = |fraction: f64| -> f64 {
        if lateness.is_empty() {
            return f64::NAN;
        }
        let rank = ((lateness.len() - 1) as f64 * fraction).round() as usize;
        lateness[rank]
    };
    let level = StreamsLevel {
        completed: records.len(),
        peak_active: running.peak_active_sequences(),
        events_per_s: events.load(Ordering::Relaxed) as f64 / elapsed,
        lateness_p50: percentile(0.5),
        lateness_p99: percentile(0.99),
        lateness_max: lateness.last().copied().unwrap_or(f64::NAN),
    };
    running.shutdown().await;
    Ok(level)
}

/// How much later than scheduled the last token went out: with no slowdown and no jitter the
/// model puts it `(tokens − 1) × interval` after the end of prefill.
fn last_token_lateness_ms(record: &TruthRecord) -> Option<f64> {
    let prefill_end = record.times.prefill_finished?.monotonic_ms;
    let last = record.times.last_byte_sent?.monotonic_ms;
    let tokens = f64::from(record.content_tokens_sent + record.reasoning_tokens_sent);
    Some(last - (prefill_end + (tokens - 1.0) * STREAM_INTERVAL_MS))
}

async fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

fn chat_request(prompt: &str, max_tokens: u32, keep_alive: bool) -> Vec<u8> {
    let body = format!(
        r#"{{"model":"strobe-sim-1","messages":[{{"role":"user","content":"{prompt}"}}],"max_tokens":{max_tokens},"stream":true,"stream_options":{{"include_usage":true}}}}"#
    );
    let connection = if keep_alive { "keep-alive" } else { "close" };
    format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: {connection}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Reads one chunked SSE response, counting each `data:` chunk in `events`. Bytes after the
/// response stay in `buffer` for the next one.
async fn read_stream(
    stream: &mut TcpStream,
    buffer: &mut Vec<u8>,
    events: &AtomicU64,
) -> io::Result<()> {
    let head_end = loop {
        if let Some(end) = find(buffer, b"\r\n\r\n") {
            break end + 4;
        }
        fill(stream, buffer).await?;
    };
    if !buffer.starts_with(b"HTTP/1.1 200") {
        let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
        return Err(io::Error::other(format!("unexpected response: {head}")));
    }
    buffer.drain(..head_end);
    loop {
        let line_end = loop {
            if let Some(end) = find(buffer, b"\r\n") {
                break end;
            }
            fill(stream, buffer).await?;
        };
        let size_text = String::from_utf8_lossy(&buffer[..line_end]).into_owned();
        let size = usize::from_str_radix(size_text.trim(), 16)
            .map_err(|_| io::Error::other(format!("bad chunk size `{size_text}`")))?;
        let needed = line_end + 2 + size + 2;
        while buffer.len() < needed {
            fill(stream, buffer).await?;
        }
        if size == 0 {
            buffer.drain(..needed);
            return Ok(());
        }
        if buffer[line_end + 2..].starts_with(b"data: ") {
            events.fetch_add(1, Ordering::Relaxed);
        }
        buffer.drain(..needed);
    }
}

async fn fill(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> io::Result<()> {
    let mut scratch = [0u8; 16 * 1024];
    let read = stream.read(&mut scratch).await?;
    if read == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed mid-response",
        ));
    }
    buffer.extend_from_slice(&scratch[..read]);
    Ok(())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}
