//! The reader on the engines' answers, on the corners of the format, and on hostile text.

use super::*;

fn fixture(engine: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/engines/{engine}-metrics.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(path).expect("the fixture")
}

fn read(text: &str) -> Exposition {
    read_exposition(text.as_bytes())
}

#[test]
fn vllm_values_are_summed_over_label_sets_and_histograms_keep_their_buckets() {
    let reading = read_exposition(&fixture("vllm"));
    assert!(reading.notes.is_empty(), "{:?}", reading.notes);
    let value = |key: &str| reading.values.get(key).copied();
    assert_eq!(value("vllm:num_requests_running"), Some(12.0));
    assert_eq!(value("vllm:prompt_tokens_total"), Some(92160.0));
    assert_eq!(value("python_gc_objects_collected_total"), Some(15102.0));
    assert_eq!(value("vllm:time_to_first_token_seconds_count"), Some(60.0));
    assert_eq!(value("vllm:time_to_first_token_seconds_sum"), Some(30.0));
    // `le="1.0"` of both engines adds into one key written in the shortest form.
    assert_eq!(
        value("vllm:time_to_first_token_seconds_bucket{le=\"1\"}"),
        Some(50.0)
    );
    assert_eq!(
        value("vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"}"),
        Some(60.0)
    );
    // Creation timestamps are no measurement.
    assert!(reading.values.keys().all(|key| !key.ends_with("_created")));
    assert_eq!(
        reading.kinds.get("vllm:time_to_first_token_seconds"),
        Some(&MetricKind::Histogram)
    );
    assert_eq!(
        reading.kinds.get("vllm:num_requests_waiting"),
        Some(&MetricKind::Gauge)
    );
}

#[test]
fn every_engine_fixture_reads_without_a_note() {
    for engine in ["vllm", "sglang", "llamacpp", "tgi"] {
        let reading = read_exposition(&fixture(engine));
        assert!(reading.notes.is_empty(), "{engine}: {:?}", reading.notes);
        assert!(reading.samples_read > 5, "{engine}");
    }
}

#[test]
fn labels_with_escapes_braces_and_commas_are_read_whole() {
    let reading = read(concat!(
        "# HELP m A help line with \"quotes\" and {braces}\n",
        "# TYPE m gauge\n",
        "m{path=\"a\\\"}b\",note=\"c,d=e\",} 3\n",
        "m{path=\"x\\\\\",note=\"line\\nbreak\"} 4 1712345678000\n",
        "m {} 1\n",
        "  spaced_name{ a = \"1\" , b=\"2\" }   7  \r\n",
    ));
    assert!(reading.notes.is_empty(), "{:?}", reading.notes);
    assert_eq!(reading.values.get("m"), Some(&8.0));
    assert_eq!(reading.values.get("spaced_name"), Some(&7.0));
    assert_eq!(reading.samples_read, 4);
}

#[test]
fn openmetrics_is_tolerated_up_to_its_eof() {
    let reading = read(concat!(
        "# TYPE requests counter\n",
        "# UNIT requests_seconds seconds\n",
        "requests_total 5 # {trace_id=\"abc\"} 1.0 1.6e9\n",
        "requests_created 1.6e9\n",
        "latency_seconds{quantile=\"0.50\"} 0.25\n",
        "# EOF\n",
        "after_eof 1\n",
    ));
    assert!(reading.notes.is_empty(), "{:?}", reading.notes);
    assert_eq!(reading.values.get("requests_total"), Some(&5.0));
    assert_eq!(
        reading.values.get("latency_seconds{quantile=\"0.5\"}"),
        Some(&0.25)
    );
    assert!(!reading.values.contains_key("requests_created"));
    assert!(!reading.values.contains_key("after_eof"));
}

#[test]
fn numbers_are_read_as_go_writes_them() {
    let reading = read("a 1e3\nb -2.5E-1\nc +7\nd 0x10\ne 1_000\n");
    assert_eq!(reading.values.get("a"), Some(&1000.0));
    assert_eq!(reading.values.get("b"), Some(&-0.25));
    assert_eq!(reading.values.get("c"), Some(&7.0));
    assert_eq!(reading.values.len(), 3);
    assert_eq!(
        reading.notes,
        [
            ReadNote::Line {
                line: 4,
                problem: LineProblem::BadValue {
                    text: "0x10".into()
                }
            },
            ReadNote::Line {
                line: 5,
                problem: LineProblem::BadValue {
                    text: "1_000".into()
                }
            },
        ]
    );
}

#[test]
fn nan_and_infinities_are_noted_not_kept() {
    let reading = read("a NaN\nb +Inf\nc -Inf\nd 1\nbig 1e308\nbig 1e308\n");
    assert_eq!(reading.values.keys().collect::<Vec<_>>(), ["d"]);
    let shown: Vec<String> = reading.notes.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "a is NaN; only finite numbers are kept",
            "b is +Inf; only finite numbers are kept",
            "c is -Inf; only finite numbers are kept",
            "big is +Inf; only finite numbers are kept",
        ]
    );
}

#[test]
fn broken_lines_are_skipped_with_their_line_and_reason() {
    let reading = read(concat!(
        "good 1\n",
        "9bad 1\n",
        "no_value\n",
        "open{a=\"1\" 2\n",
        "unquoted{a=1} 2\n",
        "dangling{a=\"1\\",
        "\n",
        "h_bucket{x=\"1\"} 3\n",
        "h_bucket{le=\"soon\"} 3\n",
    ));
    assert_eq!(reading.values.keys().collect::<Vec<_>>(), ["good"]);
    let problems: Vec<(usize, LineProblem)> = reading
        .notes
        .iter()
        .filter_map(|note| match note {
            ReadNote::Line { line, problem } => Some((*line, problem.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        problems,
        [
            (2, LineProblem::BadName),
            (3, LineProblem::MissingValue),
            (4, LineProblem::BadLabels),
            (5, LineProblem::BadLabels),
            (6, LineProblem::BadLabels),
            (7, LineProblem::BadBucket),
            (8, LineProblem::BadBucket),
        ]
    );
}

#[test]
fn binary_text_is_refused_whole() {
    let mut gzip_like = vec![0x1f, 0x8b, 0x08, 0x00];
    gzip_like.extend(b"vllm:num_requests_running 3\n");
    let reading = read_exposition(&gzip_like);
    assert!(reading.values.is_empty());
    assert_eq!(reading.notes, [ReadNote::Binary]);
    assert!(reading.notes[0].to_string().contains("/metrics"));
}

#[test]
fn empty_or_comment_only_text_says_there_is_nothing() {
    assert_eq!(read("").notes, [ReadNote::NoSamples]);
    assert_eq!(read("# HELP a b\n\n").notes, [ReadNote::NoSamples]);
    let html = read("<!doctype html><html><body>Not Found</body></html>");
    assert!(html.values.is_empty());
    assert_eq!(html.notes.last(), Some(&ReadNote::NoSamples));
}

#[test]
fn a_line_that_is_not_utf8_is_skipped_alone() {
    let reading = read_exposition(b"a 1\nb\xff\xfe 2\nc 3\n");
    assert_eq!(reading.values.len(), 2);
    assert_eq!(
        reading.notes,
        [ReadNote::Line {
            line: 2,
            problem: LineProblem::NotUtf8
        }]
    );
}

#[test]
fn huge_text_is_cut_and_absurd_lines_skipped() {
    let mut text = String::from("first 1\n");
    text.push_str(&format!("long{{a=\"{}\"}} 1\n", "x".repeat(MAX_LINE_BYTES)));
    // Long enough lines that the byte cap comes before the line cap.
    let filler = format!("filler{{pad=\"{}\"}} 1\n", "p".repeat(50));
    while text.len() <= MAX_TEXT_BYTES {
        text.push_str(&filler);
    }
    text.push_str("beyond_the_cut 1\n");
    let reading = read(&text);
    assert_eq!(reading.notes[0], ReadNote::Truncated { bytes: text.len() });
    assert!(matches!(
        reading.notes[1],
        ReadNote::Line {
            line: 2,
            problem: LineProblem::TooLong { .. }
        }
    ));
    assert_eq!(reading.values.get("first"), Some(&1.0));
    assert!(reading.values["filler"] > 60_000.0);
    assert_eq!(reading.notes.len(), 2, "{:?}", reading.notes);
    assert!(!reading.values.contains_key("beyond_the_cut"));
}

#[test]
fn lines_names_and_notes_are_bounded() {
    let many_lines = "x 1\n".repeat(MAX_LINES + 10);
    let reading = read(&many_lines);
    assert_eq!(reading.values.get("x"), Some(&(MAX_LINES as f64)));
    assert_eq!(reading.notes, [ReadNote::TooManyLines]);

    let many_names: String = (0..MAX_NAMES + 5).map(|i| format!("n{i} 1\n")).collect();
    let reading = read(&many_names);
    assert_eq!(reading.values.len(), MAX_NAMES);
    assert_eq!(reading.notes, [ReadNote::TooManyNames]);

    let many_broken = "?\n".repeat(MAX_NOTES + 5);
    let reading = read(&many_broken);
    assert_eq!(reading.notes.len(), MAX_NOTES + 1);
    // Five broken lines beyond the kept notes, and the last note that nothing was read.
    assert_eq!(reading.notes.last(), Some(&ReadNote::More { count: 6 }));
}

#[test]
fn bucket_keys_read_back() {
    let key = bucket_key("h_bucket", 0.005);
    assert_eq!(key, "h_bucket{le=\"0.005\"}");
    assert_eq!(parse_bucket_key(&key), Some(("h_bucket", 0.005)));
    assert_eq!(
        parse_bucket_key("h_bucket{le=\"+Inf\"}"),
        Some(("h_bucket", f64::INFINITY))
    );
    assert_eq!(parse_bucket_key("h_sum"), None);
    assert_eq!(parse_bucket_key("h_bucket{le=\"NaN\"}"), None);
}
