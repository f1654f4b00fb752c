//! Why a part of the app's wasm did not arrive. The wasm is split at split points
//! (docs/design/architecture.md, *Parts of the wasm*): a part is fetched the first time one of
//! its functions is called, and a fetch that fails is this error, which every caller shows with
//! what to do instead of failing.

use leptos::wasm_split::SplitLoaderError;
use thiserror::Error;

/// A part of the app's wasm that is fetched the first time it is used (a split point,
/// docs/design/architecture.md, *Parts of the wasm*) could not be fetched or started: the
/// network failed, or the site was updated since this page was opened and the part it names
/// is gone. What was measured and loaded stays; a reload brings the current parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error(
    "a part of strobe's code could not be loaded (the network failed, or the site was updated \
     since this page was opened): reload the page; what it already shows is kept until then"
)]
pub struct PartNotLoaded;

impl From<SplitLoaderError> for PartNotLoaded {
    fn from(_: SplitLoaderError) -> Self {
        Self
    }
}
