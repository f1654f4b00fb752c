//! Preflight: before a run, ask the endpoint for its models (which also proves it is reachable
//! and that the browser may read its answers) and explain what to do when it is not.

use gloo_net::http::Request;
use serde_json::Value;

use crate::core::config::models::{window_probe, ModelsInfo};

/// For an engine whose `/models` answer has no window (Ollama, TGI, LM Studio), asks its own
/// endpoint at `url_of(path)` for `model`'s (docs/operate/engines.md) and records what it said in
/// `models`. A failed probe leaves the window unknown and says why; it never fails the check.
pub async fn probe_window(
    models: &mut ModelsInfo,
    model: &str,
    url_of: impl Fn(&str) -> String,
    api_key: Option<&str>,
) {
    let Some(probe) = window_probe(&models.body, model) else {
        return;
    };
    let url = url_of(probe.path());
    let mut builder = Request::get(&url);
    if let Some(key) = api_key.filter(|key| !key.is_empty()) {
        builder = builder.header("Authorization", &format!("Bearer {key}"));
    }
    let body = match builder.send().await {
        Ok(response) if response.ok() => response.json::<Value>().await.ok(),
        _ => None,
    };
    models.record_probe(probe, &url, model, body.as_ref());
}

/// How to let a browser page read each engine's answers.
pub const CORS_RECIPES: &[(&str, &str)] = &[
    ("vLLM", "allows any origin unless --allowed-origins was narrowed: add the page's origin, e.g. --allowed-origins '[\"http://127.0.0.1:8080\"]'"),
    ("SGLang", "its server adds CORS headers for any origin; if a proxy sits in front, let it pass Access-Control-* headers and OPTIONS requests"),
    ("llama.cpp", "llama-server answers CORS preflights for any origin; check that a reverse proxy does not strip them"),
    ("TGI", "start text-generation-launcher with --cors-allow-origin <page origin>"),
    ("Ollama", "set OLLAMA_ORIGINS=<page origin> (or *) in the server's environment and restart it"),
];

/// Why preflight failed, with what to do.
#[derive(Clone, Debug, PartialEq)]
pub struct PreflightError {
    /// One line for the status area.
    pub summary: String,
    /// Whether the CORS recipes apply.
    pub show_cors_help: bool,
}

/// `GET {models_url}` with the key, if any.
pub async fn fetch_models(
    models_url: &str,
    api_key: Option<&str>,
) -> Result<ModelsInfo, PreflightError> {
    let mut builder = Request::get(models_url);
    if let Some(key) = api_key.filter(|key| !key.is_empty()) {
        builder = builder.header("Authorization", &format!("Bearer {key}"));
    }
    let response = builder.send().await.map_err(|_| PreflightError {
        summary: format!(
            "Could not reach {models_url}. Either nothing answers there (is the server running, \
             and is the base URL right, usually ending in /v1?) or the server does not allow this \
             page's origin (CORS). An https page cannot call an http server other than localhost."
        ),
        show_cors_help: true,
    })?;
    let status = response.status();
    if status == 401 || status == 403 {
        let what = if api_key.is_some_and(|key| !key.is_empty()) {
            "the server refused the API key given; check it (it is sent as a Bearer header)"
        } else {
            "the server wants an API key; enter it above"
        };
        return Err(PreflightError {
            summary: format!("{models_url} answered {status}: {what}."),
            show_cors_help: false,
        });
    }
    if !response.ok() {
        return Err(PreflightError {
            summary: format!(
                "{models_url} answered HTTP {status}. Check the base URL (it usually ends in /v1)."
            ),
            show_cors_help: false,
        });
    }
    let body: Value = response.json().await.map_err(|_| PreflightError {
        summary: format!(
            "{models_url} did not answer with JSON; is this an OpenAI-compatible endpoint?"
        ),
        show_cors_help: false,
    })?;
    Ok(ModelsInfo::of_body(body))
}
