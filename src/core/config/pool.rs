//! Endpoint pools strobe can make itself
//! (docs/operate/hosting.md, *Past six connections per origin*): for a server on this machine, its
//! loopback aliases. Linux routes all of 127.0.0.0/8 to the loopback interface, and each address is
//! an origin of its own to the browser, with six HTTP/1.1 connections of its own; the server must
//! listen on `0.0.0.0` (or on each alias).

use crate::core::config::settings::{BROWSER_HTTP1_CONNECTIONS_PER_HOST, MAX_ENDPOINTS};

/// The pool that carries `concurrency` streams to the server at `base_url` (on `127.0.0.1` or
/// `localhost`) within six connections per origin: `127.0.0.2`, `127.0.0.3`, … with the same
/// scheme, port and path, at most [`MAX_ENDPOINTS`] origins in all. Empty when six are enough.
pub fn loopback_alias_pool(base_url: &str, concurrency: u64) -> Result<Vec<String>, String> {
    let refuse = || {
        format!(
            "loopback aliases need a base URL on 127.0.0.1 or localhost, a server on this \
             machine (got {base_url:?}); for another machine, list its other ports or names"
        )
    };
    let (scheme, rest) = base_url.trim().split_once("://").ok_or_else(refuse)?;
    if !matches!(scheme, "http" | "https") {
        return Err(refuse());
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => {
            (host, &authority[host.len()..])
        }
        _ => (authority, ""),
    };
    if !(host == "127.0.0.1" || host.eq_ignore_ascii_case("localhost")) {
        return Err(refuse());
    }
    let origins = concurrency
        .div_ceil(BROWSER_HTTP1_CONNECTIONS_PER_HOST)
        .clamp(1, MAX_ENDPOINTS as u64);
    Ok((2..=origins)
        .map(|alias| format!("{scheme}://127.0.0.{alias}{port}{path}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_cover_the_concurrency_six_connections_each() {
        assert_eq!(
            loopback_alias_pool("http://127.0.0.1:8011/v1", 16),
            Ok(vec![
                "http://127.0.0.2:8011/v1".to_owned(),
                "http://127.0.0.3:8011/v1".to_owned()
            ])
        );
        assert_eq!(
            loopback_alias_pool("http://localhost:8000/v1/", 6),
            Ok(vec![])
        );
        assert_eq!(
            loopback_alias_pool("https://LOCALHOST/v1", 7),
            Ok(vec!["https://127.0.0.2/v1".to_owned()])
        );
        // At most MAX_ENDPOINTS origins, whatever the concurrency.
        let most = loopback_alias_pool("http://127.0.0.1:1/v1", 256).expect("loopback");
        assert_eq!(most.len(), MAX_ENDPOINTS - 1);
        assert_eq!(
            most.last().map(String::as_str),
            Some("http://127.0.0.16:1/v1")
        );
        for remote in [
            "http://gpu-box:8000/v1",
            "http://127.0.0.10:8000/v1",
            "ftp://127.0.0.1/v1",
            "127.0.0.1:8000",
        ] {
            let error = loopback_alias_pool(remote, 16).expect_err(remote);
            assert!(error.contains("127.0.0.1 or localhost"), "{error}");
        }
    }
}
