//! The faults the simulator can inject, how a request asks for them, and how they are named.
//!
//! A request gets faults from its model id (`sim-fault-<name>`, several joined by `+`), from the
//! `x-sim-fault` header (names separated by commas), and at random with `--fault-rate`. Pure.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The prefix of model ids that select faults.
pub const FAULT_MODEL_PREFIX: &str = "sim-fault-";
/// The request header that selects faults.
pub const FAULT_HEADER: &str = "x-sim-fault";

/// One way the simulated server misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fault {
    /// Answer HTTP 500 with an OpenAI error body.
    #[serde(rename = "http-500")]
    Http500,
    /// Answer HTTP 429 with an OpenAI error body and `Retry-After`.
    #[serde(rename = "http-429")]
    Http429,
    /// Reset the TCP connection (RST) halfway through the content.
    Reset,
    /// Send one extra event whose JSON is cut off, after the first content event.
    MalformedJson,
    /// Leave out the usage chunk even when `stream_options.include_usage` asks for it.
    NoUsage,
    /// End the stream without `data: [DONE]`.
    NoDone,
    /// End lines with CRLF instead of LF.
    Crlf,
    /// Write every event in pieces of at most 3 bytes.
    SplitWrites,
    /// Send `: keep-alive` comment lines before the first token and after every event.
    KeepAlive,
    /// Send reasoning under `reasoning` instead of `reasoning_content`.
    ReasoningField,
    /// Begin the answer with a different request's marker.
    WrongMarker,
    /// Begin with the right marker but also mention another request's marker.
    ForeignMarker,
    /// Hold the response headers back for `--slow-headers-ms`.
    SlowHeaders,
    /// Stop sending halfway through the content and keep the connection open.
    Hang,
    /// Send the whole stream, `data: [DONE]` included, but keep the body open after it (no end
    /// of the body) until the client closes the connection or `--hang-ms` passes.
    HoldAfterDone,
    /// Split every write that holds a multibyte UTF-8 character inside that character, and use
    /// multibyte words where the output contract leaves room.
    Utf8Split,
}

impl Fault {
    /// Every fault, in documentation order.
    pub const ALL: [Fault; 16] = [
        Fault::Http500,
        Fault::Http429,
        Fault::Reset,
        Fault::MalformedJson,
        Fault::NoUsage,
        Fault::NoDone,
        Fault::Crlf,
        Fault::SplitWrites,
        Fault::KeepAlive,
        Fault::ReasoningField,
        Fault::WrongMarker,
        Fault::ForeignMarker,
        Fault::SlowHeaders,
        Fault::Hang,
        Fault::HoldAfterDone,
        Fault::Utf8Split,
    ];

    /// The fault's name in model ids, headers, flags and the truth log.
    pub fn name(self) -> &'static str {
        match self {
            Fault::Http500 => "http-500",
            Fault::Http429 => "http-429",
            Fault::Reset => "reset",
            Fault::MalformedJson => "malformed-json",
            Fault::NoUsage => "no-usage",
            Fault::NoDone => "no-done",
            Fault::Crlf => "crlf",
            Fault::SplitWrites => "split-writes",
            Fault::KeepAlive => "keep-alive",
            Fault::ReasoningField => "reasoning-field",
            Fault::WrongMarker => "wrong-marker",
            Fault::ForeignMarker => "foreign-marker",
            Fault::SlowHeaders => "slow-headers",
            Fault::Hang => "hang",
            Fault::HoldAfterDone => "hold-after-done",
            Fault::Utf8Split => "utf8-split",
        }
    }

    /// Parses a fault name.
    pub fn parse(name: &str) -> Result<Fault, UnknownFault> {
        let wanted = name.trim();
        Fault::ALL
            .into_iter()
            .find(|fault| fault.name().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| UnknownFault(wanted.to_string()))
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}

/// A fault name that is not one of [`Fault::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown fault `{0}`; known faults: {known}", known = known_fault_names())]
pub struct UnknownFault(pub String);

/// All fault names, comma-separated, for error messages and help text.
pub fn known_fault_names() -> String {
    Fault::ALL.map(Fault::name).join(", ")
}

/// A set of faults, kept in [`Fault::ALL`] order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FaultSet(Vec<Fault>);

impl FaultSet {
    /// Whether `fault` is in the set.
    pub fn contains(&self, fault: Fault) -> bool {
        self.0.contains(&fault)
    }

    /// Adds `fault` (no duplicates).
    pub fn insert(&mut self, fault: Fault) {
        if let Err(position) = self.0.binary_search(&fault) {
            self.0.insert(position, fault);
        }
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The faults in order.
    pub fn iter(&self) -> impl Iterator<Item = Fault> + '_ {
        self.0.iter().copied()
    }
}

/// Parses a list of fault names separated by `separator`, ignoring empty items.
pub fn parse_fault_list(text: &str, separator: char) -> Result<Vec<Fault>, UnknownFault> {
    text.split(separator)
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(Fault::parse)
        .collect()
}

/// The faults a model id asks for: `None` for an ordinary model id, else the `+`-joined names
/// after [`FAULT_MODEL_PREFIX`].
pub fn faults_in_model_id(model: &str) -> Option<Result<Vec<Fault>, UnknownFault>> {
    model
        .strip_prefix(FAULT_MODEL_PREFIX)
        .map(|names| parse_fault_list(names, '+'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fault_name_round_trips_and_is_unique() {
        for fault in Fault::ALL {
            assert_eq!(Fault::parse(fault.name()), Ok(fault));
            let json = serde_json::to_string(&fault).expect("a fault serializes");
            assert_eq!(json, format!("\"{}\"", fault.name()));
        }
        let mut names: Vec<&str> = Fault::ALL.iter().map(|fault| fault.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Fault::ALL.len());
    }

    #[test]
    fn model_ids_and_headers_select_faults() {
        assert_eq!(faults_in_model_id("strobe-sim-1"), None);
        assert_eq!(
            faults_in_model_id("sim-fault-crlf+split-writes"),
            Some(Ok(vec![Fault::Crlf, Fault::SplitWrites]))
        );
        assert_eq!(
            parse_fault_list(" no-done, HTTP-429 ,", ','),
            Ok(vec![Fault::NoDone, Fault::Http429])
        );
        let error = parse_fault_list("no-done,nope", ',').expect_err("nope is not a fault");
        assert!(error.to_string().contains("unknown fault `nope`"));
        assert!(error.to_string().contains("utf8-split"));
    }

    #[test]
    fn a_fault_set_keeps_order_and_no_duplicates() {
        let mut set = FaultSet::default();
        set.insert(Fault::Hang);
        set.insert(Fault::Crlf);
        set.insert(Fault::Hang);
        assert_eq!(
            set.iter().collect::<Vec<_>>(),
            vec![Fault::Crlf, Fault::Hang]
        );
        assert!(set.contains(Fault::Crlf) && !set.contains(Fault::Reset));
        assert_eq!(
            serde_json::to_string(&set).expect("a set serializes"),
            r#"["crlf","hang"]"#
        );
    }
}
