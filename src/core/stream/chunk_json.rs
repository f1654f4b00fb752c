//! The JSON of one chat-completions or completions chunk, parsed for only what the measurement
//! reads: the top level's `error`, `usage` and `choices`, each choice's `finish_reason`, `delta`
//! and `text` (the legacy completions API's content), each delta's `reasoning_content`,
//! `reasoning` and `content`. Everything else (`id`, `object`,
//! `created`, `model`, `index`, `logprobs`, `role`, …) is checked as JSON and skipped without
//! being built, and member names are matched without being allocated. The interpretation of
//! what was read stays with [`ChunkEvent::from_sse_data`](super::sse::ChunkEvent::from_sse_data).
//!
//! Why not `serde_json::Value`: this runs once per network read of every measured stream, and
//! building a `Value` (a map per object, a string per key and per ignored member) was most of a
//! read's cost in the browser (`benches/read_path.rs`; docs/design/measurement.md, *Reading*).
//!
//! Python's `json.loads` semantics, as the reference client read chunks:
//! - a member given twice counts with its last value (earlier ones are parsed, then replaced);
//! - escaped member names are unescaped before they are matched (`"cont\u0065nt"` is
//!   `content`);
//! - a member of the wrong shape (a `choices` that is no list, a `delta` that is null) is kept
//!   as such, so the interpretation can fail the request with the reason.
//!
//! Skipped members are checked for JSON syntax but not for what a `Value` would reject beyond
//! it: numbers beyond a double's range (Python reads them as infinity), nesting deeper than
//! serde_json's 128 levels, lone UTF-16 surrogates in escapes (Python keeps them). A payload with
//! those in a skipped member is read as the chunk Python read, where building a `Value` made it
//! "not JSON".

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

/// What a member expected to be an object (or, for `choices`, a list) turned out to be.
#[derive(Debug, PartialEq)]
pub enum Shaped<T> {
    /// The expected shape, read.
    Expected(T),
    /// JSON `null`.
    Null,
    /// Anything else (skipped).
    Other,
}

/// The top level of a chunk.
#[derive(Debug, Default, PartialEq)]
pub struct ChunkFields {
    /// `error`, if present.
    pub error: Option<Value>,
    /// `usage`, if present.
    pub usage: Option<Value>,
    /// `choices`, if present.
    pub choices: Option<Shaped<Vec<Shaped<ChoiceFields>>>>,
}

/// One choice of a chunk.
#[derive(Debug, Default, PartialEq)]
pub struct ChoiceFields {
    /// `finish_reason`, if present.
    pub finish_reason: Option<Value>,
    /// `delta`, if present (chat completions).
    pub delta: Option<Shaped<DeltaFields>>,
    /// `text`, if present (`/v1/completions`, whose choices carry the text with no delta).
    pub text: Option<Value>,
}

/// One choice's delta.
#[derive(Debug, Default, PartialEq)]
pub struct DeltaFields {
    /// `reasoning_content`, if present.
    pub reasoning_content: Option<Value>,
    /// `reasoning`, if present.
    pub reasoning: Option<Value>,
    /// `content`, if present.
    pub content: Option<Value>,
}

/// Parses a data payload: `None` if it is not JSON (the reference client skipped those), else
/// its top level, which may be no object at all.
pub fn parse_chunk(payload: &str) -> Option<Shaped<ChunkFields>> {
    serde_json::from_str::<Shaped<ChunkFields>>(payload).ok()
}

/// An object whose members of interest are read into `Self`, the rest skipped.
trait Members: Default {
    /// The member names read, in the order [`read_member`](Self::read_member) numbers them.
    const NAMES: &'static [&'static str];

    /// Reads the value of member `NAMES[which]` (a later duplicate replaces it).
    fn read_member<'de, A: MapAccess<'de>>(
        &mut self,
        which: usize,
        map: &mut A,
    ) -> Result<(), A::Error>;
}

impl Members for ChunkFields {
    const NAMES: &'static [&'static str] = &["error", "usage", "choices"];

    fn read_member<'de, A: MapAccess<'de>>(
        &mut self,
        which: usize,
        map: &mut A,
    ) -> Result<(), A::Error> {
        match which {
            0 => self.error = Some(map.next_value()?),
            1 => self.usage = Some(map.next_value()?),
            _ => self.choices = Some(map.next_value()?),
        }
        Ok(())
    }
}

impl Members for ChoiceFields {
    const NAMES: &'static [&'static str] = &["finish_reason", "delta", "text"];

    fn read_member<'de, A: MapAccess<'de>>(
        &mut self,
        which: usize,
        map: &mut A,
    ) -> Result<(), A::Error> {
        match which {
            0 => self.finish_reason = Some(map.next_value()?),
            1 => self.delta = Some(map.next_value()?),
            _ => self.text = Some(map.next_value()?),
        }
        Ok(())
    }
}

impl Members for DeltaFields {
    const NAMES: &'static [&'static str] = &["reasoning_content", "reasoning", "content"];

    fn read_member<'de, A: MapAccess<'de>>(
        &mut self,
        which: usize,
        map: &mut A,
    ) -> Result<(), A::Error> {
        match which {
            0 => self.reasoning_content = Some(map.next_value()?),
            1 => self.reasoning = Some(map.next_value()?),
            _ => self.content = Some(map.next_value()?),
        }
        Ok(())
    }
}

/// A member name matched against `names` without being allocated: its index, or `None` for
/// a member that is skipped.
struct MemberName(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for MemberName {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for MemberName {
    type Value = Option<usize>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Self::Value, E> {
        Ok(self.0.iter().position(|known| *known == name))
    }
}

/// Skips a list's elements (each still checked as JSON).
fn skip_list<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Skips an object's members (each still checked as JSON).
fn skip_object<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// What a value is expected to be, and how it is read when it is: an object's members
/// ([`Members`]) or a list's elements. A value of any other shape is skipped.
trait Expected<'de>: Sized {
    /// The value is an object.
    fn read_object<A: MapAccess<'de>>(map: A) -> Result<Shaped<Self>, A::Error> {
        skip_object(map)?;
        Ok(Shaped::Other)
    }

    /// The value is a list.
    fn read_list<A: SeqAccess<'de>>(seq: A) -> Result<Shaped<Self>, A::Error> {
        skip_list(seq)?;
        Ok(Shaped::Other)
    }
}

impl<'de, T: Members> Expected<'de> for T {
    fn read_object<A: MapAccess<'de>>(mut map: A) -> Result<Shaped<Self>, A::Error> {
        let mut fields = T::default();
        while let Some(name) = map.next_key_seed(MemberName(T::NAMES))? {
            match name {
                Some(which) => fields.read_member(which, &mut map)?,
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Shaped::Expected(fields))
    }
}

impl<'de, T: Deserialize<'de>> Expected<'de> for Vec<T> {
    fn read_list<A: SeqAccess<'de>>(mut seq: A) -> Result<Shaped<Self>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(1).min(16));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Shaped::Expected(items))
    }
}

/// The shape of a value expected to be a `T`: [`Shaped::Expected`] when it is one (read),
/// [`Shaped::Null`] for null, [`Shaped::Other`] for anything else.
struct ShapeVisitor<T>(PhantomData<T>);

impl<'de, T: Expected<'de>> Deserialize<'de> for Shaped<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor(PhantomData))
    }
}

impl<'de, T: Expected<'de>> Visitor<'de> for ShapeVisitor<T> {
    type Value = Shaped<T>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        T::read_object(map)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        T::read_list(seq)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Shaped::Null)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Shaped::Other)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Shaped::Other)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Shaped::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Shaped::Other)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Shaped::Other)
    }
}
