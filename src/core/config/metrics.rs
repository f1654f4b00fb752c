//! Where a server's metrics are, as a setting sees them: the default URL beside the API
//! ([`default_metrics_url`]), whether a URL carries a credential that must never be written
//! into an artifact ([`credential_in_url`]), and the scrape interval's bounds
//! ([`INTERVAL_MS`]). The scraping itself is [`crate::core::telemetry`]'s.

/// Written with every other bound, in `bounds`.
pub use crate::core::config::bounds::INTERVAL_MS;

/// Query keys that carry a secret (`?api_key=`, `?token=`, …), compared in lowercase.
const SECRET_QUERY_WORDS: [&str; 5] = ["key", "token", "secret", "password", "auth"];

/// `<origin of base_url>/metrics`: where vLLM, SGLang, llama.cpp and TGI serve their metrics,
/// beside (not under) the `/v1` API. Any user name or password is left out. `None` when
/// `base_url` is not an `http://` or `https://` URL.
pub fn default_metrics_url(base_url: &str) -> Option<String> {
    server_origin(base_url).map(|origin| format!("{origin}/metrics"))
}

/// `scheme://host[:port]` of `base_url`, without any user name or password: where an engine's
/// own routes (`/metrics`, `/reset_prefix_cache`) sit beside its `/v1` API. `None` when
/// `base_url` is not an `http://` or `https://` URL.
pub fn server_origin(base_url: &str) -> Option<String> {
    let (scheme, rest) = base_url.trim().split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if host.is_empty() {
        return None;
    }
    Some(format!("{scheme}://{host}"))
}

/// Where `url` carries a credential: user information before the host, or a query key that
/// names one (`api_key`, `token`, …). `None` when it carries none.
pub fn credential_in_url(url: &str) -> Option<&'static str> {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority_end = after_scheme
        .find(['/', '?', '#'])
        .unwrap_or(after_scheme.len());
    if after_scheme[..authority_end].contains('@') {
        return Some("a user name or password before the host");
    }
    let query = after_scheme[authority_end..]
        .split_once('?')
        .map(|(_, query)| query.split('#').next().unwrap_or(query));
    let secret_key = query
        .into_iter()
        .flat_map(|query| query.split('&'))
        .any(|pair| {
            let key = pair.split('=').next().unwrap_or(pair).to_ascii_lowercase();
            SECRET_QUERY_WORDS.iter().any(|word| key.contains(word))
        });
    secret_key.then_some("a key or token in the query")
}
