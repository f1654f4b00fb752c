//! The golden reference artifact (ARTIFACT.md §7, §8.4) reproduced by `core::stats` and
//! `core::pyjson`: its bytes by re-serialization, and its metrics by recomputation from its own
//! `request_timings`, every float compared bit for bit.

mod common;

use common::reference_text;

use serde_json::{Map, Value};
use strobe::core::artifact::metrics::{write_distribution_family, DISTRIBUTION_FAMILIES};
use strobe::core::python::json::{dumps_artifact, dumps_sorted};
use strobe::core::python::stats::{exact_mean, Distribution, DISTRIBUTION_STATS};

/// The reference artifact, parsed (its text is Python's output without the trailing newline).
fn reference() -> Value {
    serde_json::from_str(&reference_text()).expect("the reference artifact is valid JSON")
}

fn object<'a>(value: &'a Value, key: &str) -> &'a Map<String, Value> {
    value[key]
        .as_object()
        .unwrap_or_else(|| panic!("`{key}` is an object in the reference artifact"))
}

fn rows(artifact: &Value) -> &Vec<Value> {
    artifact["request_timings"]
        .as_array()
        .expect("`request_timings` is an array in the reference artifact")
}

/// The non-null values of one row field, as floats.
fn column(rows: &[Value], field: &str) -> Vec<f64> {
    rows.iter()
        .filter(|row| !row[field].is_null())
        .map(|row| {
            row[field]
                .as_f64()
                .unwrap_or_else(|| panic!("`{field}` is a number or null"))
        })
        .collect()
}

fn integer_sum(rows: &[Value], field: &str) -> u64 {
    rows.iter()
        .map(|row| {
            row[field]
                .as_u64()
                .unwrap_or_else(|| panic!("`{field}` is a non-negative integer"))
        })
        .sum()
}

fn float_bits(value: &Value, what: &str) -> u64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is a float, found {value}"))
        .to_bits()
}

#[test]
fn reserializing_the_reference_artifact_gives_its_exact_bytes() {
    let artifact = reference();
    let text = dumps_sorted(&artifact).expect("the reference artifact has only finite numbers");
    assert_eq!(text.len(), 17_690, "ARTIFACT.md §8.4 counts 17,690 bytes");
    let reference = reference_text();
    assert!(
        text == reference,
        "first difference at byte {:?}",
        text.bytes()
            .zip(reference.bytes())
            .position(|(ours, theirs)| ours != theirs)
    );
    let file = dumps_artifact(&artifact).expect("finite numbers");
    assert_eq!(file.strip_suffix('\n'), Some(reference.as_str()));
}

/// The older-generation artifacts in `fixtures/real/` were written by the same
/// `atomic_write_json` (each ends in its `\n`); `dumps_artifact` must reproduce every byte.
#[test]
fn reserializing_real_artifacts_gives_their_exact_bytes() {
    let directory = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real");
    let mut checked = 0;
    for entry in std::fs::read_dir(&directory).expect("tests/fixtures/real exists") {
        let path = entry.expect("readable directory entry").path();
        if path.extension().and_then(|extension| extension.to_str()) != Some("json") {
            continue;
        }
        let original = std::fs::read_to_string(&path).expect("readable UTF-8 artifact");
        let parsed: Value = serde_json::from_str(&original).expect("valid JSON");
        let rewritten = dumps_artifact(&parsed).expect("finite numbers");
        assert!(rewritten == original, "{} differs", path.display());
        checked += 1;
    }
    assert!(
        checked >= 12,
        "expected the 12 real artifacts, found {checked}"
    );
}

#[test]
fn every_distribution_family_is_recomputed_bit_for_bit() {
    let artifact = reference();
    let rows = rows(&artifact);
    let published = object(&artifact, "metrics");
    let mut recomputed = Map::new();
    for family in DISTRIBUTION_FAMILIES {
        write_distribution_family(
            &mut recomputed,
            family.prefix,
            family.unit_suffix,
            &column(rows, family.row_field),
        );
    }
    assert_eq!(recomputed.len(), 11 * 13);
    let mut mismatches = Vec::new();
    for (key, ours) in &recomputed {
        let Some(theirs) = published.get(key) else {
            mismatches.push(format!("{key}: not in the reference metrics"));
            continue;
        };
        let equal = match (ours.as_u64(), ours.as_f64()) {
            // `{prefix}_samples` is an integer on both sides; every other key a float.
            (Some(count), _) => theirs.as_u64() == Some(count) && theirs.is_u64(),
            (None, Some(value)) => theirs.is_f64() && float_bits(theirs, key) == value.to_bits(),
            _ => false,
        };
        if !equal {
            mismatches.push(format!("{key}: recomputed {ours}, published {theirs}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    // The statistics the spec checks by hand (§7.1, TTFT) come out through the struct too.
    let ttft = Distribution::of(&column(rows, "ttft_ms")).expect("six samples");
    assert_eq!(ttft.stat_values().map(|(name, _)| name), DISTRIBUTION_STATS);
    assert_eq!(ttft.mean_ci95_low, 3603.26923220975);
    assert_eq!(ttft.mean_ci95_high, 10263.631167790554);
    assert_eq!(ttft.p25, 1752.577299997938);
}

#[test]
fn scalar_token_and_chunk_metrics_are_recomputed() {
    let artifact = reference();
    let rows = rows(&artifact);
    let metrics = object(&artifact, "metrics");
    let prompt_samples = rows
        .iter()
        .filter(|row| !row["prompt_tokens"].is_null())
        .count();
    let sums = [
        ("prompt_tokens", integer_sum(rows, "prompt_tokens")),
        ("prompt_token_samples", prompt_samples as u64),
        ("output_tokens", integer_sum(rows, "output_tokens")),
        ("content_chunks", integer_sum(rows, "content_chunks")),
        ("reasoning_chunks", integer_sum(rows, "reasoning_chunks")),
    ];
    for (key, recomputed) in sums {
        assert_eq!(metrics[key].as_u64(), Some(recomputed), "{key}");
    }
    // §7.3: the producer divides by wall seconds; wall_clock_ms / 1000 gives the same bits here.
    let wall_ms = artifact["wall_clock_ms"].as_f64().expect("wall_clock_ms");
    let throughput = integer_sum(rows, "output_tokens") as f64 / (wall_ms / 1000.0);
    assert_eq!(
        throughput.to_bits(),
        float_bits(&metrics["throughput_tok_s"], "throughput_tok_s")
    );
}

#[test]
fn prefix_cache_average_uses_python_statistics_mean() {
    let artifact = reference();
    let rows = rows(&artifact);
    // §7.3's reconstruction of the per-request cached tokens, which rows do not keep.
    let cached_tokens_of = |request_index: u64| match request_index {
        0 => 62320_u64,
        4 => 62328,
        _ => 0,
    };
    assert_eq!(rows.len(), 6);
    let fractions: Vec<f64> = rows
        .iter()
        .map(|row| {
            let index = row["request_index"].as_u64().expect("request_index");
            let cached = cached_tokens_of(index);
            let prompt_tokens = row["prompt_tokens"].as_u64().expect("prompt_tokens");
            // Python's `cached / prompt_tokens` on ints is correctly rounded, as is this.
            cached as f64 / prompt_tokens as f64
        })
        .collect();
    let average = exact_mean(&fractions).expect("six fractions");
    assert_eq!(average.to_bits(), 0.33330124579846615_f64.to_bits());
    assert_eq!(
        average.to_bits(),
        float_bits(
            &object(&artifact, "metrics")["prefix_cache_hit_avg"],
            "prefix_cache_hit_avg"
        )
    );
}
