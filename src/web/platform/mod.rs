//! The browser's facilities, for whichever thread the code runs on: the clocks (only
//! [`clock`] reads one), timers as futures, the global scope (window or worker), the address
//! bar and local storage, the library kept in IndexedDB, the clipboard, file downloads,
//! scripts loaded when first needed, and why a part of the split wasm did not arrive.

pub mod clipboard;
pub mod clock;
pub mod files;
pub mod js_error;
pub mod kept;
pub mod parts;
pub mod scope;
pub mod script;
pub mod storage;
pub mod timers;
