//! The browser's facilities, for whichever thread the code runs on: the clocks (only
//! [`clock`] reads one), timers as futures, the global scope (window or worker), the address
//! bar and local storage, the library kept in IndexedDB, the clipboard, file downloads, and
//! scripts loaded when first needed.

pub mod clipboard;
pub mod clock;
pub mod files;
pub mod js_error;
pub mod kept;
pub mod scope;
pub mod script;
pub mod storage;
pub mod timers;
