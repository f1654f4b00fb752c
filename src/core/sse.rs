//! (placeholder: sse)
