//! Reading an already fetched `GET {base}/models` body (ARTIFACT.md §1.2): the model ids for a
//! picker and the context window that caps the prompt plan. Fetching it is the web layer's job.

use serde_json::Value;

/// The `data[]` entries of a `/models` body that are JSON objects, in order.
fn model_entries(models_body: &Value) -> impl Iterator<Item = &serde_json::Map<String, Value>> {
    models_body
        .get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
}

/// Where in a `/models` entry a context window is read, in the order they are tried, with the
/// engines that answer so (docs/operate/engines.md).
pub const CONTEXT_WINDOW_KEYS: [(&str, &str); 4] = [
    ("max_model_len", "vLLM, SGLang"),
    ("max_context_length", "LM Studio and others"),
    ("context_length", "OpenAI-compatible proxies"),
    // llama.cpp's `llama-server`: the context of one slot (`-c` divided by `-np`), which is
    // what one request can use.
    ("meta.n_ctx", "llama.cpp, per slot"),
];

/// A context window a server reported, and the key it came from (one of
/// [`CONTEXT_WINDOW_KEYS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextWindow {
    /// The window in tokens.
    pub tokens: u64,
    /// The key it was read from, e.g. `max_model_len` or `meta.n_ctx`.
    pub key: &'static str,
}

/// Discovers `max_model_len` from an already fetched `GET /models` body (ARTIFACT.md §1.2).
///
/// Uses the first `data[]` object whose `id` equals `model`, else the first object at all (the
/// original's fallback, kept so plans match it); from it, the first of `max_model_len`,
/// `max_context_length`, `context_length` that is an integer above 0, then llama.cpp's
/// `meta.n_ctx` (which the original did not read). Unlike the original, a JSON `true` is not
/// taken as 1 (Python's `bool` passes its int check); floats are skipped as there. Anything
/// unexpected gives None, which means "unknown, do not clamp".
pub fn parse_models_response(models_body: &Value, model: &str) -> Option<u64> {
    context_window(models_body, model).map(|window| window.tokens)
}

/// [`parse_models_response`] with the key the window came from.
pub fn context_window(models_body: &Value, model: &str) -> Option<ContextWindow> {
    let entry = model_entries(models_body)
        .find(|entry| entry.get("id").and_then(Value::as_str) == Some(model))
        .or_else(|| model_entries(models_body).next())?;
    CONTEXT_WINDOW_KEYS.iter().find_map(|&(key, _)| {
        let value = match key.split_once('.') {
            Some((outer, inner)) => entry.get(outer).and_then(|outer| outer.get(inner)),
            None => entry.get(key),
        };
        // `as_u64` is None for booleans, floats, negatives and strings.
        value
            .and_then(Value::as_u64)
            .filter(|&tokens| tokens > 0)
            .map(|tokens| ContextWindow { tokens, key })
    })
}

/// A second request for the context window, for engines whose `/v1/models` has none
/// (docs/operate/engines.md). Each is a `GET` below the server's root (the base URL without `/v1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowProbe {
    /// Hugging Face TGI: `GET /info` → `max_total_tokens`.
    TgiInfo,
    /// Ollama: `GET /api/ps` → the loaded model's `context_length` (its `num_ctx`).
    OllamaPs,
    /// LM Studio: `GET /api/v0/models` → `loaded_context_length`, else `max_context_length`.
    LmStudioModels,
}

/// Where a probe's window is read, and what it is (for the page's note).
pub const PROBE_WINDOW_KEYS: [(&str, &str); 4] = [
    ("max_total_tokens in /info", "Hugging Face TGI"),
    (
        "context_length in /api/ps",
        "Ollama: the loaded model's num_ctx",
    ),
    (
        "loaded_context_length in /api/v0/models",
        "LM Studio: the loaded context",
    ),
    (
        "max_context_length in /api/v0/models",
        "LM Studio: the model's maximum",
    ),
];

impl WindowProbe {
    /// The path below the server's root.
    pub fn path(self) -> &'static str {
        match self {
            Self::TgiInfo => "/info",
            Self::OllamaPs => "/api/ps",
            Self::LmStudioModels => "/api/v0/models",
        }
    }

    /// The engine label strobe records for this engine (its `owned_by` says something else:
    /// Ollama's is a namespace, TGI's the model id, LM Studio's `organization_owner`).
    pub fn engine_label(self) -> &'static str {
        match self {
            Self::TgiInfo => "tgi",
            Self::OllamaPs => "ollama",
            Self::LmStudioModels => "lmstudio",
        }
    }

    /// The engine the probe is for.
    pub fn engine(self) -> &'static str {
        match self {
            Self::TgiInfo => "Hugging Face TGI",
            Self::OllamaPs => "Ollama",
            Self::LmStudioModels => "LM Studio",
        }
    }

    /// The window in the probe's answer `body` for `model`.
    pub fn window(self, body: &Value, model: &str) -> Option<ContextWindow> {
        let positive = |value: Option<&Value>| value?.as_u64().filter(|&tokens| tokens > 0);
        let window = |tokens: u64, key: &'static str| ContextWindow { tokens, key };
        match self {
            Self::TgiInfo => positive(body.get("max_total_tokens"))
                .map(|tokens| window(tokens, PROBE_WINDOW_KEYS[0].0)),
            Self::OllamaPs => body
                .get("models")?
                .as_array()?
                .iter()
                .filter_map(Value::as_object)
                .find(|entry| {
                    ["name", "model"]
                        .iter()
                        .any(|key| entry.get(*key).and_then(Value::as_str) == Some(model))
                })
                .and_then(|entry| positive(entry.get("context_length")))
                .map(|tokens| window(tokens, PROBE_WINDOW_KEYS[1].0)),
            Self::LmStudioModels => {
                let entry = model_entries(body)
                    .find(|entry| entry.get("id").and_then(Value::as_str) == Some(model))?;
                positive(entry.get("loaded_context_length"))
                    .map(|tokens| window(tokens, PROBE_WINDOW_KEYS[2].0))
                    .or_else(|| {
                        positive(entry.get("max_context_length"))
                            .map(|tokens| window(tokens, PROBE_WINDOW_KEYS[3].0))
                    })
            }
        }
    }
}

/// The probe a `/models` answer without a window calls for, told by the shape each engine gives
/// `model`'s entry: Ollama's four fields with an `id` tagged `name:tag`, TGI's `created: 0` with
/// the model id as `owned_by`, LM Studio's `owned_by: "organization_owner"`. `None` when the
/// answer has a window, or looks like none of them.
pub fn window_probe(models_body: &Value, model: &str) -> Option<WindowProbe> {
    if context_window(models_body, model).is_some() {
        return None;
    }
    let entry = model_entries(models_body)
        .find(|entry| entry.get("id").and_then(Value::as_str) == Some(model))?;
    let text = |key: &str| entry.get(key).and_then(Value::as_str);
    if text("owned_by") == Some("organization_owner") {
        return Some(WindowProbe::LmStudioModels);
    }
    if entry.get("created").and_then(Value::as_u64) == Some(0) && text("owned_by") == Some(model) {
        return Some(WindowProbe::TgiInfo);
    }
    let ollama_keys = ["id", "object", "created", "owned_by"];
    if entry.len() == ollama_keys.len()
        && ollama_keys.iter().all(|key| entry.contains_key(*key))
        && model.contains(':')
    {
        return Some(WindowProbe::OllamaPs);
    }
    None
}

/// A warning the page shows before a run on this engine, when it has a trap for benchmarks.
pub fn engine_warning(engine: &str) -> Option<&'static str> {
    match engine.trim().to_ascii_lowercase().as_str() {
        "ollama" => Some(
            "Ollama truncates a prompt longer than its num_ctx silently (it keeps the start, \
             drops the middle and answers 200): compare the rows' prompt_tokens with the plan, or \
             raise num_ctx (OLLAMA_CONTEXT_LENGTH) above the context you ask for.",
        ),
        _ => None,
    }
}

/// The string `id`s of a `/models` body's `data[]` entries, in order (for a model picker).
pub fn list_model_ids(models_body: &Value) -> Vec<String> {
    model_entries(models_body)
        .filter_map(|entry| entry.get("id").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

/// Longest `owned_by` text [`engine_hint`] accepts as an engine name; real engines report
/// short names (`vllm`, `llamacpp`), so anything longer is not a name worth recording.
pub const MAX_ENGINE_HINT_CHARS: usize = 64;

/// The engine name a server's `/models` answer suggests for `model`: the `owned_by` of the
/// first `data[]` entry whose `id` is `model` (surrounding whitespace of `model` ignored, as
/// [`RunForm::to_config`](crate::core::config::form::RunForm::to_config) ignores it). vLLM reports `"vllm"`, llama.cpp `"llamacpp"` and
/// strobe-sim `"strobe-sim"`.
///
/// The answer is outside input that ends up in the form and the artifact, so only a plain
/// name is taken: trimmed, non-empty, at most [`MAX_ENGINE_HINT_CHARS`] characters, with no
/// control or invisible formatting character. Anything else gives `None` and the user types
/// the engine.
pub fn engine_hint(models_body: &Value, model: &str) -> Option<String> {
    let model = Some(model.trim()).filter(|model| !model.is_empty())?;
    if let Some(probe) = window_probe(models_body, model) {
        return Some(probe.engine_label().to_owned());
    }
    let entry = models_body
        .get("data")?
        .as_array()?
        .iter()
        .find(|entry| entry.get("id").and_then(Value::as_str) == Some(model))?;
    let owned_by = entry.get("owned_by")?.as_str()?.trim();
    let is_plain_name = !owned_by.is_empty()
        && owned_by.chars().count() <= MAX_ENGINE_HINT_CHARS
        && !owned_by.chars().any(is_unprintable);
    is_plain_name.then(|| owned_by.to_owned())
}

/// Control characters, and the invisible formatting characters (zero-width, bidirectional
/// overrides, byte order mark) that can make a recorded name read differently from what it is.
fn is_unprintable(character: char) -> bool {
    character.is_control()
        || matches!(
            character,
            '\u{00AD}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
        )
}

/// What `GET {base}/models` told the page (and, for an engine whose answer has no context
/// window, what that engine's own endpoint said): the answer, its model ids and the probed
/// window.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelsInfo {
    /// The body, kept to resolve a model's context window.
    pub body: Value,
    /// Model ids in the server's order.
    pub ids: Vec<String>,
    /// The window a [`WindowProbe`] found, with the model it was asked for.
    pub probed: Option<(String, ContextWindow)>,
    /// Why a probe found no window, when one was tried.
    pub probe_note: Option<String>,
}

impl ModelsInfo {
    /// What a `/models` answer says, before any probe.
    pub fn of_body(body: Value) -> Self {
        let ids = list_model_ids(&body);
        Self {
            body,
            ids,
            probed: None,
            probe_note: None,
        }
    }

    /// The context window the server reports for `model`, by the reference tool's rules.
    pub fn max_model_len(&self, model: &str) -> Option<u64> {
        self.context_window(model).map(|window| window.tokens)
    }

    /// [`Self::max_model_len`] with the key it was read from.
    pub fn context_window(&self, model: &str) -> Option<ContextWindow> {
        context_window(&self.body, model).or_else(|| {
            self.probed
                .as_ref()
                .filter(|(probed, _)| probed == model)
                .map(|(_, window)| *window)
        })
    }

    /// Records what `probe`'s endpoint (`url`) answered for `model`: its window, or, with
    /// none (no answer, or none in it), why prompts go uncapped and what to set instead.
    pub fn record_probe(
        &mut self,
        probe: WindowProbe,
        url: &str,
        model: &str,
        body: Option<&Value>,
    ) {
        match body.and_then(|body| probe.window(body, model)) {
            Some(window) => self.probed = Some((model.to_owned(), window)),
            None => {
                self.probe_note = Some(format!(
                    "This looks like {}, whose /models answer has no context window, and {url} \
                     did not give one for {model} either (is the model loaded?): prompts are not \
                     capped. Set Max model len to the server's window.",
                    probe.engine()
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fixture(name: &str) -> Value {
        let path = format!(
            "{}/tests/fixtures/engines/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{path}"));
        serde_json::from_str(&text).expect("fixture JSON")
    }

    #[test]
    fn every_engine_answer_gives_its_window_or_the_probe_that_finds_it() {
        let window = |tokens, key| Some(ContextWindow { tokens, key });
        let vllm = fixture("vllm-models.json");
        assert_eq!(
            context_window(&vllm, "Qwen/Qwen3-8B"),
            window(32768, "max_model_len")
        );
        assert_eq!(engine_hint(&vllm, "Qwen/Qwen3-8B").as_deref(), Some("vllm"));
        let sglang = fixture("sglang-models.json");
        let llama_3 = "meta-llama/Llama-3.1-8B-Instruct";
        assert_eq!(
            context_window(&sglang, llama_3),
            window(131072, "max_model_len")
        );
        assert_eq!(engine_hint(&sglang, llama_3).as_deref(), Some("sglang"));
        let llamacpp = fixture("llamacpp-models.json");
        assert_eq!(
            context_window(&llamacpp, "strobe-tiny.gguf"),
            window(2048, "meta.n_ctx")
        );
        for (models, model) in [(&vllm, "Qwen/Qwen3-8B"), (&llamacpp, "strobe-tiny.gguf")] {
            assert_eq!(window_probe(models, model), None, "a window needs no probe");
        }

        let ollama = fixture("ollama-models.json");
        assert_eq!(context_window(&ollama, "llama3.2:latest"), None);
        assert_eq!(
            window_probe(&ollama, "llama3.2:latest"),
            Some(WindowProbe::OllamaPs)
        );
        assert_eq!(
            WindowProbe::OllamaPs.window(&fixture("ollama-ps.json"), "llama3.2:latest"),
            window(4096, "context_length in /api/ps")
        );
        assert_eq!(
            WindowProbe::OllamaPs.window(&fixture("ollama-ps.json"), "other:7b"),
            None
        );
        assert!(engine_warning("ollama").is_some_and(|w| w.contains("silently")));
        assert_eq!(
            engine_hint(&ollama, "llama3.2:latest").as_deref(),
            Some("ollama")
        );
        assert_eq!(engine_warning("vllm"), None);

        let tgi = fixture("tgi-models.json");
        assert_eq!(window_probe(&tgi, llama_3), Some(WindowProbe::TgiInfo));
        assert_eq!(engine_hint(&tgi, llama_3).as_deref(), Some("tgi"));
        assert_eq!(
            WindowProbe::TgiInfo.window(&fixture("tgi-info.json"), llama_3),
            window(4096, "max_total_tokens in /info")
        );

        let lmstudio = fixture("lmstudio-models.json");
        assert_eq!(
            window_probe(&lmstudio, "gemma-3-4b-it"),
            Some(WindowProbe::LmStudioModels)
        );
        assert_eq!(
            engine_hint(&lmstudio, "gemma-3-4b-it").as_deref(),
            Some("lmstudio")
        );
        let v0 = fixture("lmstudio-api-v0-models.json");
        assert_eq!(
            WindowProbe::LmStudioModels.window(&v0, "gemma-3-4b-it"),
            window(4096, "loaded_context_length in /api/v0/models")
        );
        let mut unloaded = v0.clone();
        unloaded["data"][0]
            .as_object_mut()
            .expect("entry")
            .remove("loaded_context_length");
        assert_eq!(
            WindowProbe::LmStudioModels.window(&unloaded, "gemma-3-4b-it"),
            window(131072, "max_context_length in /api/v0/models")
        );
        // Hostile probe answers give nothing.
        for probe in [
            WindowProbe::TgiInfo,
            WindowProbe::OllamaPs,
            WindowProbe::LmStudioModels,
        ] {
            assert_eq!(
                probe.window(&json!({"max_total_tokens": -4, "models": "x"}), "m"),
                None
            );
        }
    }

    #[test]
    fn llama_cpp_reports_its_slot_context_under_meta() {
        // llama-server -c 8192 -np 4: /v1/models (tools/server/server-context.cpp).
        let body = json!({"object": "list", "data": [{
            "id": "tiny.gguf", "object": "model", "owned_by": "llamacpp",
            "meta": {"vocab_type": 1, "n_vocab": 780, "n_ctx": 2048, "n_ctx_train": 8192},
        }]});
        assert_eq!(
            context_window(&body, "tiny.gguf"),
            Some(ContextWindow {
                tokens: 2048,
                key: "meta.n_ctx"
            })
        );
        assert_eq!(engine_hint(&body, "tiny.gguf").as_deref(), Some("llamacpp"));
        // The top-level keys still come first.
        let both = json!({"data": [{"id": "m", "max_model_len": 4096, "meta": {"n_ctx": 2048}}]});
        assert_eq!(
            context_window(&both, "m").map(|w| w.key),
            Some("max_model_len")
        );
        let hostile = json!({"data": [{"id": "m", "meta": {"n_ctx": -1}}]});
        assert_eq!(context_window(&hostile, "m"), None);
    }

    #[test]
    fn models_response_prefers_the_matching_id() {
        let body = json!({"object": "list", "data": [
            {"id": "other", "max_model_len": 4096},
            {"id": "mine", "max_model_len": 131072},
        ]});
        assert_eq!(parse_models_response(&body, "mine"), Some(131_072));
        assert_eq!(list_model_ids(&body), ["other", "mine"]);
    }

    #[test]
    fn models_response_falls_back_to_the_first_object() {
        let body = json!({"data": ["not an object", {"id": "other", "context_length": 8192}]});
        assert_eq!(parse_models_response(&body, "missing"), Some(8_192));
        assert_eq!(list_model_ids(&body), ["other"]);
    }

    #[test]
    fn models_response_takes_the_first_positive_integer_key() {
        let entry = |fields: Value| json!({"data": [fields]});
        let cases = [
            (
                json!({"id": "m", "max_model_len": 0, "max_context_length": 2048}),
                Some(2_048),
            ),
            (
                json!({"id": "m", "max_model_len": 4096, "context_length": 2048}),
                Some(4_096),
            ),
            (
                json!({"id": "m", "max_model_len": true, "context_length": 1024}),
                Some(1_024),
            ),
            (json!({"id": "m", "max_model_len": true}), None),
            (json!({"id": "m", "max_model_len": 4096.0}), None),
            (json!({"id": "m", "max_model_len": "4096"}), None),
            (json!({"id": "m", "max_model_len": -1}), None),
            (json!({"id": "m"}), None),
        ];
        for (fields, expected) in cases {
            assert_eq!(
                parse_models_response(&entry(fields.clone()), "m"),
                expected,
                "{fields}"
            );
        }
    }

    #[test]
    fn models_response_with_unexpected_shape_is_unknown() {
        for body in [
            json!(null),
            json!({}),
            json!({"data": {}}),
            json!({"data": []}),
            json!([1]),
        ] {
            assert_eq!(parse_models_response(&body, "m"), None, "{body}");
            assert!(list_model_ids(&body).is_empty());
        }
        // The matching entry without a usable length does not fall back to another entry.
        let body = json!({"data": [{"id": "a", "max_model_len": 4096}, {"id": "m"}]});
        assert_eq!(parse_models_response(&body, "m"), None);
    }

    /// A `/models` answer listing `entries`, in the OpenAI shape vLLM and strobe-sim send.
    fn models_body(entries: Value) -> Value {
        serde_json::json!({ "object": "list", "data": entries })
    }

    #[test]
    fn engine_hint_takes_owned_by_of_the_matching_model() {
        let body = models_body(serde_json::json!([
            { "id": "other", "object": "model", "owned_by": "sglang" },
            { "id": "Qwen/Qwen3-8B", "object": "model", "owned_by": "vllm", "max_model_len": 40960 },
            { "id": "gguf", "object": "model", "owned_by": "llamacpp" },
            { "id": "sim-model", "object": "model", "owned_by": "strobe-sim" },
            { "id": "padded", "owned_by": "  vllm \n" },
            { "id": "Qwen/Qwen3-8B", "owned_by": "second-entry" },
        ]));
        assert_eq!(engine_hint(&body, "Qwen/Qwen3-8B"), Some("vllm".to_owned()));
        assert_eq!(engine_hint(&body, " gguf "), Some("llamacpp".to_owned()));
        assert_eq!(
            engine_hint(&body, "sim-model"),
            Some("strobe-sim".to_owned())
        );
        assert_eq!(engine_hint(&body, "other"), Some("sglang".to_owned()));
        assert_eq!(engine_hint(&body, "padded"), Some("vllm".to_owned()));
    }

    #[test]
    fn engine_hint_is_none_without_a_matching_model() {
        let body = models_body(serde_json::json!([
            { "id": "Qwen/Qwen3-8B", "owned_by": "vllm" },
            { "id": "", "owned_by": "blank-id" },
        ]));
        for model in ["qwen/qwen3-8b", "Qwen3-8B", "", "  "] {
            assert_eq!(engine_hint(&body, model), None, "{model:?}");
        }
        for body in [
            serde_json::json!({}),
            serde_json::json!(null),
            serde_json::json!([{ "id": "Qwen/Qwen3-8B", "owned_by": "vllm" }]),
            serde_json::json!({ "data": { "id": "Qwen/Qwen3-8B", "owned_by": "vllm" } }),
            serde_json::json!({ "data": "Qwen/Qwen3-8B" }),
            models_body(serde_json::json!([])),
            models_body(serde_json::json!([null, 7, "Qwen/Qwen3-8B", { "id": 1 }])),
        ] {
            assert_eq!(engine_hint(&body, "Qwen/Qwen3-8B"), None, "{body}");
        }
    }

    #[test]
    fn engine_hint_ignores_missing_or_non_text_owned_by() {
        for entry in [
            serde_json::json!({ "id": "m" }),
            serde_json::json!({ "id": "m", "owned_by": null }),
            serde_json::json!({ "id": "m", "owned_by": 42 }),
            serde_json::json!({ "id": "m", "owned_by": true }),
            serde_json::json!({ "id": "m", "owned_by": ["vllm"] }),
            serde_json::json!({ "id": "m", "owned_by": { "name": "vllm" } }),
            serde_json::json!({ "id": "m", "owned_by": "" }),
            serde_json::json!({ "id": "m", "owned_by": " \t " }),
        ] {
            let body = models_body(serde_json::json!([entry]));
            assert_eq!(engine_hint(&body, "m"), None, "{body}");
        }
    }

    #[test]
    fn engine_hint_rejects_hostile_text() {
        let at_limit = "é".repeat(MAX_ENGINE_HINT_CHARS);
        let hint = |owned_by: &str| {
            engine_hint(
                &models_body(serde_json::json!([{ "id": "m", "owned_by": owned_by }])),
                "m",
            )
        };
        // The limit counts characters, not bytes, and applies after trimming.
        assert_eq!(hint(&at_limit), Some(at_limit.clone()));
        assert_eq!(hint(&format!("  {at_limit}  ")), Some(at_limit.clone()));
        assert_eq!(hint(&format!("{at_limit}x")), None);
        assert_eq!(hint(&"v".repeat(100_000)), None);
        for hostile in [
            "vllm\u{0}",
            "vl\nlm",
            "vllm\rinjected",
            "\u{1b}[31mvllm",
            "vllm\u{7f}",
            "vl\u{85}lm",
            "vl\u{200B}lm",
            "\u{202E}mllv",
            "vllm\u{2066}",
            "\u{FEFF}vllm",
        ] {
            assert_eq!(hint(hostile), None, "{hostile:?}");
        }
        // Non-ASCII printable names are fine.
        assert_eq!(hint("引擎 v1"), Some("引擎 v1".to_owned()));
    }

    #[test]
    fn models_info_takes_the_window_from_the_answer_or_its_probe() {
        let ollama = fixture("ollama-models.json");
        let mut info = ModelsInfo::of_body(ollama.clone());
        assert_eq!(info.ids, list_model_ids(&ollama));
        assert_eq!(info.max_model_len("llama3.2:latest"), None);
        // The probe's answer gives the window, for the model it was asked for only.
        info.record_probe(
            WindowProbe::OllamaPs,
            "http://box:11434/api/ps",
            "llama3.2:latest",
            Some(&fixture("ollama-ps.json")),
        );
        assert_eq!(info.max_model_len("llama3.2:latest"), Some(4096));
        assert_eq!(info.max_model_len("other"), None);
        assert_eq!(info.probe_note, None);
        // No answer, or one without the window: prompts go uncapped, and the note says what to set.
        let mut unanswered = ModelsInfo::of_body(ollama);
        unanswered.record_probe(
            WindowProbe::OllamaPs,
            "http://box:11434/api/ps",
            "llama3.2:latest",
            None,
        );
        assert_eq!(unanswered.max_model_len("llama3.2:latest"), None);
        let note = unanswered.probe_note.expect("a note");
        assert!(
            note.contains("http://box:11434/api/ps") && note.contains("Max model len"),
            "{note}"
        );
        // A window in the /models answer itself wins.
        let vllm = ModelsInfo::of_body(fixture("vllm-models.json"));
        assert!(vllm.max_model_len("Qwen/Qwen3-8B").is_some());
    }
}
