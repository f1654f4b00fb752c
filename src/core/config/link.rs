//! The page's link: the whole run form in the URL's query string, both ways. Query keys are the
//! artifact's field names (ARTIFACT.md §1.1), so a link reads like the artifact it reproduces;
//! the exceptions, `pool`, `warmup`, `traces`, `measurement`, `live_view`,
//! `context_calibration`, `server_metrics…` and `reset_prefix_cache…`, are strobe's own
//! [`ClientOptions`](crate::core::config::settings::ClientOptions), which say how the browser measures rather than what it requests. A link
//! only ever fills the form: it never starts a run and never carries an API key (keys found in
//! a link are ignored and reported).

use std::collections::BTreeSet;

use crate::core::config::fields::{field_spec, FIELDS};
use crate::core::config::form::RunForm;
use crate::core::format::quoted_preview;

/// Longest value, in characters after decoding, that a link may set; longer ones are dropped.
pub const MAX_QUERY_VALUE_CHARS: usize = 2_048;

/// How many unknown link keys are reported one by one before the rest are summarised.
const MAX_UNKNOWN_KEY_NOTICES: usize = 8;

/// How many characters of user text an error message or notice quotes.
pub(crate) const PREVIEW_CHARS: usize = 40;

/// Something [`RunForm::from_query`] ignored or overrode, to show the user above the form.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QueryNotice {
    /// The query key concerned (shortened when very long); empty when the notice sums up
    /// several keys.
    pub key: String,
    /// What happened and what to do about it. Never quotes the value of a secret key.
    pub message: String,
}

/// Whether a link key looks like it carries a credential: the keys people use for API keys,
/// in any case, with `-` or `_`.
fn is_secret_key(key: &str) -> bool {
    let normalized = key.trim().to_ascii_lowercase().replace('-', "_");
    matches!(
        normalized.as_str(),
        "api_key"
            | "apikey"
            | "key"
            | "token"
            | "access_token"
            | "authorization"
            | "bearer"
            | "secret"
            | "password"
    ) || normalized.ends_with("_key")
        || normalized.ends_with("_token")
        || normalized.ends_with("_secret")
}

/// Whether a link key asks to start a run, which links never do.
fn is_run_key(key: &str) -> bool {
    matches!(
        key.trim().to_ascii_lowercase().as_str(),
        "run" | "autorun" | "auto_run" | "start" | "autostart"
    )
}

/// Percent-encodes every UTF-8 byte except the unreserved `A-Z a-z 0-9 - . _ ~`.
fn percent_encode(text: &str) -> String {
    const HEX_DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(char::from(byte));
        } else {
            encoded.push('%');
            encoded.push(char::from(HEX_DIGITS[usize::from(byte >> 4)]));
            encoded.push(char::from(HEX_DIGITS[usize::from(byte & 0x0F)]));
        }
    }
    encoded
}

/// The first [`PREVIEW_CHARS`] characters of `text`, with `…` when cut.
fn shortened(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(PREVIEW_CHARS).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// The settings part of a link as a user gives it. A query (`base_url=…&model=…`, with or
/// without its leading `?`) is taken up to its fragment, as the page reads its own
/// `location.search`. A page's whole address (`http://host:8080/?base_url=…`, what the address
/// bar holds) gives its query or, when it has none, its fragment (`#base_url=…`, `#?…` or a
/// router's `#/path?…`). A text is an address when what comes before its first `?` or `#` holds
/// a `/` or a `:` and no `=` or `&`, which no query does: every query starts with a key.
pub fn link_query(link: &str) -> &str {
    if let Some(query) = link.strip_prefix('?') {
        return before_fragment(query);
    }
    if !is_address(link) {
        return before_fragment(link);
    }
    let (address, fragment) = link.split_once('#').unwrap_or((link, ""));
    match address.split_once('?') {
        Some((_, query)) if !query.is_empty() => query,
        _ => fragment_query(fragment),
    }
}

/// `query` up to its fragment, which is no part of it.
fn before_fragment(query: &str) -> &str {
    query.split_once('#').map_or(query, |(before, _)| before)
}

/// Whether `link` is a page's address rather than a query ([`link_query`]).
fn is_address(link: &str) -> bool {
    let head = link.split(['?', '#']).next().unwrap_or_default();
    !head.is_empty() && !head.contains(['=', '&']) && head.contains(['/', ':'])
}

/// The settings in an address's fragment: all of it, or what follows its `?`.
fn fragment_query(fragment: &str) -> &str {
    let fragment = fragment.strip_prefix('?').unwrap_or(fragment);
    match fragment.split_once('?') {
        Some((path, query)) if !path.contains(['=', '&']) => query,
        _ => fragment,
    }
}

/// What reading a link gave ([`RunForm::read_link`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkReading {
    /// [`RunForm::browser_defaults`] with the link's settings applied.
    pub form: RunForm,
    /// Everything in the link that was ignored or overridden.
    pub notices: Vec<QueryNotice>,
    /// The fields the link itself set (to the text it gave, empty included); a field not in
    /// it shows the page's default.
    pub set: BTreeSet<&'static str>,
}

impl RunForm {
    /// The form a link opens: [`RunForm::browser_defaults`] with the link's settings applied,
    /// plus notices about everything in the link that was ignored ([`RunForm::read_link`]).
    pub fn from_query(query: &str) -> (Self, Vec<QueryNotice>) {
        let reading = Self::read_link(query);
        (reading.form, reading.notices)
    }

    /// Reads a link: its settings ([`link_query`]: a query, with or without the leading `?`,
    /// or a page's whole address) over [`RunForm::browser_defaults`], the notices, and which
    /// fields the link set.
    ///
    /// The query is `application/x-www-form-urlencoded`: `+` is a space, `%XX` a byte, a `%`
    /// not followed by two hex digits stays literal, and invalid UTF-8 becomes U+FFFD. Keys are
    /// matched exactly. Ignored, each with a notice: API-key-like keys (never applied,
    /// whatever their value), keys asking to start a run (links never start runs), unknown
    /// keys, and values over [`MAX_QUERY_VALUE_CHARS`]. A key given twice takes its last
    /// value, with a notice. An address with neither a query nor a fragment gets a notice
    /// that it holds no settings.
    pub fn read_link(link: &str) -> LinkReading {
        let query = link_query(link);

        let mut form = Self::browser_defaults();
        let mut notices = Vec::new();
        let mut noticed: BTreeSet<QueryNotice> = BTreeSet::new();
        let mut notify = |notice: QueryNotice| {
            if noticed.insert(notice.clone()) {
                notices.push(notice);
            }
        };
        let mut applied: BTreeSet<&'static str> = BTreeSet::new();
        let mut set: BTreeSet<&'static str> = BTreeSet::new();
        let mut unknown_keys: Vec<String> = Vec::new();
        if query.is_empty() && is_address(link) {
            notify(QueryNotice {
                key: String::new(),
                message: "The address holds no settings (no `?` query and no `#` fragment); \
                          copy the page's address after the settings are entered."
                    .to_owned(),
            });
        }

        // application/x-www-form-urlencoded as browsers read it: `+` is a space, `%XX` a byte,
        // a `%` without two hex digits stays literal, invalid UTF-8 becomes U+FFFD.
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            let key = key.into_owned();
            if key.is_empty() {
                continue;
            }
            if is_secret_key(&key) {
                notify(QueryNotice {
                    key: shortened(&key),
                    message: format!(
                        "The link contains an API key ({}); strobe ignored it because keys are \
                         never read from links. If this link was shared, rotate that key now, \
                         and enter keys only in the API key field.",
                        quoted_preview(&key)
                    ),
                });
                continue;
            }
            if is_run_key(&key) {
                notify(QueryNotice {
                    key: shortened(&key),
                    message: format!(
                        "Links never start runs, so {} was ignored; check the settings and \
                         press Run.",
                        quoted_preview(&key)
                    ),
                });
                continue;
            }
            let Some(spec) = field_spec(&key) else {
                if !unknown_keys.contains(&key) {
                    unknown_keys.push(key);
                }
                continue;
            };
            if !applied.insert(spec.key) {
                notify(QueryNotice {
                    key: spec.key.to_owned(),
                    message: format!(
                        "The link sets {} more than once; the last value was used.",
                        spec.key
                    ),
                });
            }
            let value = value.into_owned();
            let value_chars = value.chars().count();
            if value_chars > MAX_QUERY_VALUE_CHARS {
                notify(QueryNotice {
                    key: spec.key.to_owned(),
                    message: format!(
                        "The link's value for {} is {value_chars} characters long (the limit \
                         is {MAX_QUERY_VALUE_CHARS}) and was ignored; the field keeps its \
                         previous value.",
                        spec.key
                    ),
                });
                continue;
            }
            if let Some(slot) = form.texts.get_mut(spec.key) {
                *slot = value;
                set.insert(spec.key);
            }
        }

        for key in unknown_keys.iter().take(MAX_UNKNOWN_KEY_NOTICES) {
            notify(QueryNotice {
                key: shortened(key),
                message: format!(
                    "The link's setting {} is not a strobe setting and was ignored.",
                    quoted_preview(key)
                ),
            });
        }
        let unreported = unknown_keys.len().saturating_sub(MAX_UNKNOWN_KEY_NOTICES);
        if unreported > 0 {
            notify(QueryNotice {
                key: String::new(),
                message: format!("{unreported} more unknown settings in the link were ignored."),
            });
        }
        LinkReading { form, notices, set }
    }

    /// The query string (without `?`) of a link that reopens this form: `key=value` pairs in
    /// [`FIELDS`] order, joined by `&`, omitting fields equal to [`RunForm::browser_defaults`]
    /// so links stay short. Everything but `A-Z a-z 0-9 - . _ ~` is percent-encoded as UTF-8.
    /// It never contains a secret: the form holds none.
    pub fn to_query(&self) -> String {
        let defaults = Self::browser_defaults();
        FIELDS
            .iter()
            .filter(|spec| self.text(spec) != defaults.text(spec))
            .map(|spec| {
                format!(
                    "{}={}",
                    percent_encode(spec.key),
                    percent_encode(self.text(spec))
                )
            })
            .collect::<Vec<_>>()
            .join("&")
    }
}

#[cfg(test)]
mod tests;
