//! (placeholder: pyjson)
