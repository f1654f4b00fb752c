//! Typed reads of another tool's JSON that name the field when it is missing or of the wrong
//! type, so a broken file is refused with the exact place to look.

use serde_json::{Map, Value};

use super::{ForeignError, Tool};

/// A JSON object of one tool's file, with the path it sits at.
#[derive(Clone)]
pub(crate) struct Fields<'a> {
    pub(crate) tool: Tool,
    pub(crate) path: String,
    pub(crate) object: &'a Map<String, Value>,
}

/// The largest count a tool may claim (a request count, a token count): far above any real
/// run, small enough that sums of them cannot overflow.
pub(crate) const MAX_COUNT: u64 = 1 << 40;

impl<'a> Fields<'a> {
    pub(crate) fn new(tool: Tool, path: impl Into<String>, object: &'a Map<String, Value>) -> Self {
        Fields {
            tool,
            path: path.into(),
            object,
        }
    }

    /// The object at `item` (e.g. `[3]`) of the array `key` of this object.
    pub(crate) fn item(
        &self,
        key: &str,
        index: usize,
        value: &'a Value,
    ) -> Result<Fields<'a>, ForeignError> {
        let field = format!("{key}[{index}]");
        match value {
            Value::Object(object) => Ok(Fields::new(self.tool, self.path_of(&field), object)),
            value => Err(self.error(&field, must_be("an object", value))),
        }
    }

    /// `path.key`, or `key` at the top.
    pub(crate) fn path_of(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    pub(crate) fn error(&self, key: &str, reason: impl Into<String>) -> ForeignError {
        ForeignError {
            tool: self.tool,
            field: self.path_of(key),
            reason: reason.into(),
        }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&'a Value> {
        self.object.get(key).filter(|value| !value.is_null())
    }

    /// A finite number ≥ 0, when present and not null.
    pub(crate) fn optional_non_negative(&self, key: &str) -> Result<Option<f64>, ForeignError> {
        match self.get(key) {
            None => Ok(None),
            Some(value) => non_negative(value)
                .map(Some)
                .ok_or_else(|| self.error(key, must_be("a finite number ≥ 0", value))),
        }
    }

    pub(crate) fn non_negative(&self, key: &str) -> Result<f64, ForeignError> {
        self.optional_non_negative(key)?
            .ok_or_else(|| self.error(key, "is missing; it must be a finite number ≥ 0"))
    }

    /// An integer count, when present and not null.
    pub(crate) fn optional_count(&self, key: &str) -> Result<Option<u64>, ForeignError> {
        match self.get(key) {
            None => Ok(None),
            Some(value) => count(value)
                .map(Some)
                .ok_or_else(|| self.error(key, must_be("a whole number ≥ 0", value))),
        }
    }

    pub(crate) fn optional_str(&self, key: &str) -> Result<Option<&'a str>, ForeignError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(value) => Err(self.error(key, must_be("a string", value))),
        }
    }

    pub(crate) fn object(&self, key: &str) -> Result<Fields<'a>, ForeignError> {
        self.optional_object(key)?
            .ok_or_else(|| self.error(key, "is missing; it must be an object"))
    }

    pub(crate) fn optional_object(&self, key: &str) -> Result<Option<Fields<'a>>, ForeignError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(object)) => {
                Ok(Some(Fields::new(self.tool, self.path_of(key), object)))
            }
            Some(value) => Err(self.error(key, must_be("an object", value))),
        }
    }

    pub(crate) fn array(&self, key: &str) -> Result<&'a [Value], ForeignError> {
        match self.object.get(key) {
            Some(Value::Array(items)) => Ok(items),
            None | Some(Value::Null) => Err(self.error(key, "is missing; it must be an array")),
            Some(value) => Err(self.error(key, must_be("an array", value))),
        }
    }

    pub(crate) fn optional_array(&self, key: &str) -> Result<Option<&'a [Value]>, ForeignError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items)),
            Some(value) => Err(self.error(key, must_be("an array", value))),
        }
    }
}

/// A finite number ≥ 0.
pub(crate) fn non_negative(value: &Value) -> Option<f64> {
    value
        .as_f64()
        .filter(|number| number.is_finite() && *number >= 0.0)
}

/// A whole number ≥ 0 (an integral float counts) no larger than [`MAX_COUNT`].
pub(crate) fn count(value: &Value) -> Option<u64> {
    if let Some(count) = value.as_u64() {
        return (count <= MAX_COUNT).then_some(count);
    }
    let number = value.as_f64()?;
    (number.is_finite() && number >= 0.0 && number.fract() == 0.0 && number <= MAX_COUNT as f64)
        .then_some(number as u64)
}

/// "must be X, found Y".
pub(crate) fn must_be(expected: &str, found: &Value) -> String {
    let found = match found {
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => format!("{flag}"),
        Value::Number(number) => format!("{number}"),
        Value::String(text) => format!("a string of {} characters", text.chars().count()),
        Value::Array(items) => format!("an array of {}", items.len()),
        Value::Object(_) => "an object".to_owned(),
    };
    format!("must be {expected}, found {found}")
}
