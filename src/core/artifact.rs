//! (placeholder: artifact)
