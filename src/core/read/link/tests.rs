use std::io::Write;

use flate2::write::DeflateEncoder;
use flate2::Compression;

use super::*;

const PAGE: &str = "https://bench.example/strobe/";
const REFERENCE: &str = include_str!("../../../../tests/fixtures/reference-artifact.json");

fn fragment_of(link: &str) -> &str {
    &link[link.find('#').expect("a fragment")..]
}

/// A fragment carrying `bytes` deflated, as a hostile link would.
fn deflated_fragment(bytes: &[u8]) -> String {
    let mut deflate = DeflateEncoder::new(Vec::new(), Compression::best());
    deflate.write_all(bytes).expect("deflates");
    let deflated = deflate.finish().expect("deflates");
    format!("#run={}", BASE64URL.encode(deflated))
}

fn error_of(hash: &str) -> LinkError {
    match read_link(hash) {
        Some(Err(error)) => error,
        Some(Ok(file)) => panic!("read {} as a run", file.name),
        None => panic!("{hash} is no link"),
    }
}

#[test]
fn a_run_goes_round_trip_byte_for_byte() {
    let file = CarriedFile::new("reference-artifact.json", REFERENCE);
    let link = encode_link(PAGE, &file).expect("a small run fits");
    assert!(
        link.starts_with("https://bench.example/strobe/#run="),
        "{link}"
    );
    assert!(link.len() <= MAX_LINK_CHARS);
    // Only base64url characters: nothing a chat tool or a URL parser would change.
    let encoded = &fragment_of(&link)["#run=".len()..];
    assert!(encoded
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_'));
    // Deflate makes the link much shorter than the file.
    assert!(link.len() < REFERENCE.len() / 2, "{}", link.len());
    let read = read_link(fragment_of(&link))
        .expect("a link to a run")
        .expect("reads");
    assert_eq!(read, file);
    let runs = link_runs(&read).expect("a run");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0], OpenedArtifact::from_text(&file.name, REFERENCE));
    // The same with or without the `#`, and with the space a paste may leave after it.
    let bare = fragment_of(&link).trim_start_matches('#');
    assert_eq!(read_link(bare), Some(Ok(file.clone())));
    let spaced = format!("{} \n", fragment_of(&link));
    assert_eq!(read_link(&spaced), Some(Ok(file.clone())));
}

#[test]
fn text_that_looks_like_markup_stays_text() {
    let hostile = REFERENCE.replace(
        "\"model\": \"",
        "\"model\": \"<img src=x onerror=alert(1)></script>#run=",
    );
    let file = CarriedFile::new("a <b>&\"name\".json", &hostile);
    let link = encode_link(PAGE, &file).expect("fits");
    assert!(!fragment_of(&link).contains('<'));
    assert_eq!(read_link(fragment_of(&link)), Some(Ok(file)));
}

#[test]
fn fragments_that_are_not_links_are_left_alone() {
    assert_eq!(read_link(""), None);
    assert_eq!(read_link("#"), None);
    assert_eq!(read_link("#the-one-file-report"), None);
    assert_eq!(read_link("#runs"), None);
    for hash in ["", "#", "#the-one-file-report", "#runs"] {
        assert!(!is_link(hash), "{hash:?}");
    }
    // A link is one by its prefix, whether or not what follows reads.
    assert!(is_link("#run=not-base64!"));
    assert!(is_link("run="));
}

#[test]
fn a_run_too_big_for_a_link_says_so_and_names_the_report() {
    // Rows of noise do not deflate: well past the link's limit.
    let mut state = 7u64;
    let noise: String = (0..60_000)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            char::from(b'a' + (state >> 59) as u8 % 26)
        })
        .collect();
    let file = CarriedFile::new("big.json", &noise);
    let error = encode_link(PAGE, &file).expect_err("too big");
    let LinkError::TooBig { chars } = error else {
        panic!("{error}")
    };
    assert!(chars > MAX_LINK_CHARS);
    let message = error.to_string();
    assert!(message.contains("too big for a link"), "{message}");
    assert!(message.contains("save the report"), "{message}");
    assert!(message.contains("32,768"), "{message}");
    // A file past what a link may unpack to is refused without deflating it.
    let huge = "x".repeat(MAX_LINK_TEXT_BYTES + 1);
    assert!(matches!(
        encode_link(PAGE, &CarriedFile::new("huge.json", &huge)),
        Err(LinkError::TooBig { .. })
    ));
}

#[test]
fn hostile_fragments_each_get_a_clear_error() {
    // Not base64url.
    let error = error_of("#run=not*base64!");
    assert!(matches!(error, LinkError::NotBase64(_)), "{error}");
    assert!(error.to_string().contains("ask for the link again"));
    // Cut in the middle of a character group.
    let link = encode_link(PAGE, &CarriedFile::new("r.json", REFERENCE)).expect("fits");
    let cut = &fragment_of(&link)[..fragment_of(&link).len() - 3];
    let error = error_of(cut);
    assert!(
        matches!(error, LinkError::NotBase64(_) | LinkError::NotDeflate(_)),
        "{error}"
    );
    // base64 of bytes that are not deflate.
    let error = error_of(&format!("#run={}", BASE64URL.encode([0xffu8; 64])));
    assert!(matches!(error, LinkError::NotDeflate(_)), "{error}");
    // Empty.
    let error = error_of("#run=");
    assert!(
        matches!(error, LinkError::NotJson(_) | LinkError::NotDeflate(_)),
        "{error}"
    );
    // A deflate bomb: 32 MiB of zeros in about 32 KB, stopped at the limit.
    let mut deflate = DeflateEncoder::new(Vec::new(), Compression::best());
    let zeros = vec![0u8; 1024 * 1024];
    for _ in 0..32 {
        deflate.write_all(&zeros).expect("deflates");
    }
    let bomb = format!("#run={}", BASE64URL.encode(deflate.finish().expect("ok")));
    assert!(bomb.len() < MAX_FRAGMENT_CHARS_READ, "{}", bomb.len());
    assert_eq!(error_of(&bomb), LinkError::TooLarge);
    // A fragment longer than any link.
    let long = format!("#run={}", "A".repeat(MAX_FRAGMENT_CHARS_READ + 1));
    assert!(matches!(error_of(&long), LinkError::FragmentTooLong { .. }));
    // Not UTF-8, not JSON, JSON of another shape, another format.
    let error = error_of(&deflated_fragment(&[0xc3, 0x28, 0xff]));
    assert_eq!(
        error,
        LinkError::NotJson("it is not UTF-8 text".to_owned()),
        "{error}"
    );
    let error = error_of(&deflated_fragment(b"{\"format\": \"strobe-link/1\", "));
    assert!(matches!(error, LinkError::NotJson(_)), "{error}");
    let error = error_of(&deflated_fragment(b"[1, 2, 3]"));
    assert!(matches!(error, LinkError::NotJson(_)), "{error}");
    let error = error_of(&deflated_fragment(
        b"{\"format\": \"strobe-link/9\", \"name\": \"a\", \"text\": \"{}\"}",
    ));
    assert_eq!(error, LinkError::UnknownFormat("strobe-link/9".to_owned()));
    assert!(error.to_string().contains("strobe-link/1"));
}

#[test]
fn a_link_whose_file_is_no_run_says_why() {
    let run_of = |text: &str| link_runs(&CarriedFile::new("x.json", text));
    let error = run_of("{\"hello\": 1}").expect_err("no run");
    assert!(error.to_string().contains("neither an artifact"), "{error}");
    let error = run_of("not json at all").expect_err("no run");
    assert!(matches!(error, LinkError::NotARun { .. }), "{error}");
    // A run whose artifact breaks the rules is not shown as if it were one.
    let broken = REFERENCE.replace("\"completed\": 6", "\"completed\": 600");
    assert_ne!(broken, REFERENCE);
    let error = run_of(&broken).expect_err("invalid");
    assert!(
        error.to_string().contains("breaks the artifact's rules"),
        "{error}"
    );
    // Another tool's results load as they do when dropped.
    let vllm = include_str!("../../../../tests/fixtures/peers/vllm/vllm-0.33.0-c1.json");
    let runs = run_of(vllm).expect("a vLLM run");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].verdict(), Verdict::Foreign);
}

#[test]
fn redaction_writes_the_artifact_as_the_download_does() {
    use crate::core::schema::REDACTED_BASE_URL;
    let text = REFERENCE.replace(REDACTED_BASE_URL, "http://10.1.2.3:8000/v1");
    let file = CarriedFile::new("reference-artifact.json", &text);
    let original: ArtifactV1 = serde_json::from_str(&text).expect("an artifact");
    assert_ne!(original.base_url, REDACTED_BASE_URL);
    let shared = redacted(&file).expect("redacts");
    assert!(!shared.text.contains(&original.base_url));
    let mut expected = original.clone();
    expected.redact_base_url();
    assert_eq!(&*shared.text, expected.to_json_text().expect("writes"));
    let link = encode_link(PAGE, &shared).expect("fits");
    let runs = link_runs(
        &read_link(fragment_of(&link))
            .expect("a link")
            .expect("reads"),
    )
    .expect("a run");
    assert_eq!(runs[0].verdict(), Verdict::Valid);
    // Another tool's file cannot be written again: it says so.
    let vllm = include_str!("../../../../tests/fixtures/peers/vllm/vllm-0.33.0-c1.json");
    let error = redacted(&CarriedFile::new("v.json", vllm)).expect_err("not an artifact");
    assert!(error.to_string().contains("untick Redact"), "{error}");
}
