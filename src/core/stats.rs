//! (placeholder: stats)
