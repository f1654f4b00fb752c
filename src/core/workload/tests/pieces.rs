//! Reading in pieces: a file cut anywhere (inside a character, a string, a quoted CSV cell, a
//! JSON entry) reads exactly as the whole, errors included; the [`Keep`] choice keeps only the
//! sessions it names while every one is counted; a record that never ends is refused.

use super::super::read::{read, Keep, ReadOptions, WorkloadReader};
use super::super::{Workload, WorkloadError, WorkloadFormat};
use crate::core::config::choices::WorkloadTurns;

/// Reads `bytes` pushed in pieces of `size` bytes.
fn in_pieces(bytes: &[u8], size: usize, options: &ReadOptions) -> Result<Workload, WorkloadError> {
    let mut reader = WorkloadReader::new(Some("file"), options.clone());
    for piece in bytes.chunks(size) {
        reader.push(piece)?;
    }
    reader.finish()
}

/// Files of every layout, good and broken, with the places a cut can fall badly.
fn files() -> Vec<Vec<u8>> {
    let mut files: Vec<Vec<u8>> = [
        // JSON list: brackets and quotes inside strings, escapes, a CRLF, a BOM, non-ASCII.
        "\u{feff}\r\n[\r\n {\"id\": \"a]\", \"conversations\": [{\"from\": \"human\", \"value\": \"[{\\\"x\\\"}] é 日本\"}, {\"from\": \"gpt\", \"value\": \"ok\"}]},\n {\"conversations\": [{\"value\": \"solo\"}]}\n]\n",
        // A list with a bare entry, a string entry, and an object.
        "[1, \"text\", {\"prompt\": \"p\", \"output_tokens\": 3}, true]",
        // Broken lists: NaN, a missing comma, a trailing comma, garbage after, cut short.
        "[\n{\"prompt\": \"a\"},\n{\"prompt\": \"b\", \"output_tokens\": NaN}\n]",
        "[{\"prompt\": \"a\"} {\"prompt\": \"b\"}]",
        "[{\"prompt\": \"a\"},]",
        "[{\"prompt\": \"a\"}] x",
        "[{\"prompt\": \"a\"}, {\"prompt\": \"b",
        "[{\"prompt\": \"a\"}, 12",
        "[{\"prompt\": \"a\", \"x\": [1, }]",
        // JSONL with a blank line, a broken line, CRLF and no final line break.
        "\n\n{\"prompt\": \"a\", \"output_tokens\": 2}\r\n\r\n{\"prompt\": \"b\"\n{\"prompt\": \"c é\"}",
        "{\"session_id\": \"s\", \"turns\": [{\"text\": \"hi\"}, {\"text\": \"again\", \"delay\": 20}]}\n",
        "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [1, 2]}\n{\"timestamp\": 1000, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [1]}\n",
        // CSV: quoted cells with commas, doubled quotes and line breaks; a quote inside an
        // unquoted cell; a bad quote; an unterminated quote at the end.
        "id,prompt,output_tokens\r\n1,\"Hello, \"\"world\"\"\",7\r\n2,\"two\nlines\",\r\n3,5\" screen,3\r\n4,\"bad\"x,1\n5,ok,1\n6,\"never closed\nmore\n",
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n0,ChatGPT,100,10,110,Conversation log\n1.5,GPT-4,50,0,50,API log\n2,GPT-4,30,5,35,API log\n",
        // Plain text, one starting with a quote that never closes.
        "first prompt\r\n\r\nsecond, with a comma\nthird é",
        "\"quoted start\nnext line\nlast",
        // Empty, blank, and unknown JSON.
        "",
        " \n\t\r\n",
        "{\"nothing\": 1}\n",
    ]
    .iter()
    .map(|text| text.as_bytes().to_vec())
    .collect();
    // Not UTF-8, early and late, and a character cut off at the very end.
    files.push(b"prompt\nabc\xff\xfe\n".to_vec());
    files.push(b"[{\"prompt\": \"a\"}, {\"prompt\": \"\xe6\x97\xa5\xe6\x9c\xac\"}]".to_vec());
    files.push(b"one\ntwo \xe6\x97".to_vec());
    for sample in ["conversations.jsonl", "prompts.jsonl", "trace.jsonl"] {
        let path = format!("{}/public/samples/{sample}", env!("CARGO_MANIFEST_DIR"));
        files.push(std::fs::read(path).expect("the shipped sample"));
    }
    files
}

#[test]
fn a_file_cut_anywhere_reads_as_the_whole() {
    for turns in [WorkloadTurns::First, WorkloadTurns::All] {
        let options = ReadOptions {
            turns,
            ..ReadOptions::default()
        };
        for file in files() {
            let whole = read(&file, Some("file"), &options);
            for size in [1, 2, 3, 5, 7, 16, 64, 4096] {
                assert_eq!(
                    in_pieces(&file, size, &options),
                    whole,
                    "{:?} in pieces of {size}",
                    String::from_utf8_lossy(&file)
                );
            }
        }
    }
}

#[test]
fn the_whole_reads_as_before_at_the_places_that_matter() {
    let list = read(files()[1].as_slice(), None, &ReadOptions::default()).expect("usable");
    assert_eq!(list.summary.format, WorkloadFormat::PromptColumns);
    assert_eq!((list.summary.records, list.summary.sessions), (4, 1));
    let refused = |index: usize| read(&files()[index], None, &ReadOptions::default()).unwrap_err();
    for (index, line, column) in [(3, 1, 18), (4, 1, 18), (5, 1, 19)] {
        assert_eq!(
            refused(index),
            WorkloadError::Broken {
                line,
                column,
                reason: "this is not valid JSON"
            },
            "file {index}"
        );
    }
    assert!(refused(6).to_string().contains("cut short"));
    assert!(refused(7).to_string().contains("cut short"));
    assert!(matches!(refused(8), WorkloadError::Broken { line: 1, .. }));
    let csv = read(&files()[12], None, &ReadOptions::default()).expect("usable");
    let texts: Vec<String> = csv
        .sessions
        .iter()
        .map(|session| format!("{:?}", session.turns[0].input))
        .collect();
    assert_eq!(texts.len(), 4, "{texts:?}");
    // A quote inside an unquoted cell is text; `"bad"x` and the unclosed quote do not parse.
    assert_eq!(csv.summary.records, 6);
    let text = read(&files()[15], None, &ReadOptions::default()).expect("usable");
    assert_eq!(text.summary.format, WorkloadFormat::Text);
    assert_eq!(text.summary.sessions, 3);
}

#[test]
fn keeping_fewer_counts_every_session_and_keeps_their_positions() {
    let text: String = (0..10).map(|i| format!("prompt {i}\n")).collect();
    let keep = |keep: Keep| {
        let options = ReadOptions {
            keep,
            ..ReadOptions::default()
        };
        in_pieces(text.as_bytes(), 7, &options).expect("usable")
    };
    let all = keep(Keep::All);
    assert_eq!(all.sessions.len(), 10);
    assert!(all.positions.is_empty(), "all kept: positions go unsaid");
    assert_eq!(all.kept_positions(), (0..10).collect::<Vec<_>>());

    let first = keep(Keep::First(3));
    assert_eq!(
        first.summary, all.summary,
        "the summary counts every record"
    );
    assert_eq!(first.sessions, all.sessions[..3]);
    assert_eq!(first.positions, [0, 1, 2]);

    let these = keep(Keep::These(vec![1, 7, 9]));
    assert_eq!(these.summary, all.summary);
    assert_eq!(these.positions, [1, 7, 9]);
    assert_eq!(these.session_at(7), all.session_at(7));
    assert_eq!(these.session_at(2), None);
    assert_eq!(these.sessions[2], all.sessions[9]);

    // More kept than there are: all of them.
    let more = keep(Keep::First(100));
    assert!(more.positions.is_empty());
    assert_eq!(more.sessions, all.sessions);
}

#[test]
fn a_record_that_never_ends_is_refused_at_its_line() {
    let limit = super::super::split::MAX_RECORD_BYTES;
    let unclosed = format!(
        "[{{\"prompt\": \"a\"}},\n{{\"prompt\": \"{}",
        "x".repeat(limit)
    );
    let error = in_pieces(unclosed.as_bytes(), 1 << 20, &ReadOptions::default()).unwrap_err();
    assert_eq!(
        error,
        WorkloadError::RecordTooLong {
            line: 2,
            limit: limit as u64
        }
    );
    assert!(error.to_string().contains("never closed"), "{error}");
    // A first line longer than any CSV header is read as plain text, and then too long.
    let line = "y".repeat(limit + 1);
    let error = in_pieces(line.as_bytes(), 1 << 20, &ReadOptions::default()).unwrap_err();
    assert_eq!(
        error,
        WorkloadError::RecordTooLong {
            line: 1,
            limit: limit as u64
        }
    );
}
