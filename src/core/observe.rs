//! (placeholder: observe)
