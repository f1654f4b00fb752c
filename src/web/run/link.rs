//! A run opened from a link (docs/guide/results.md, *A link to a run*): the fragment of the address
//! the page opened with (or changed to) is read by the core ([`read_link`], [`link_runs`]);
//! its run joins the library like a dropped file and is the one selected, and the banner says
//! where it came from. A fragment that carries nothing strobe can show says why in the banner,
//! and nothing else on the page changes. The fragment is read once: the address bar then shows
//! the form's link again, so a reload does not open it twice.

use leptos::wasm_split::wasm_split;

use crate::core::read::link::{is_link, link_runs, read_link};

use crate::web::platform::parts::PartNotLoaded;
use crate::web::run::keep;
use crate::web::state::library::{Library, SharedRun};

/// Opens the run the fragment `hash` (`location.hash`) carries, if it is a link to one; a page
/// opened without a link (no fragment, or an anchor) loads nothing for it.
pub async fn open(library: Library, hash: String) {
    if !is_link(&hash) {
        return;
    }
    if let Err(error) = open_fragment(library, hash).await {
        library.set_shared(Some(SharedRun::Refused(error.to_string())));
    }
}

/// Reads the fragment and opens its run (a split point: the results part of the wasm).
#[wasm_split(results, wasm_split_path = ::leptos::wasm_split, fallible)]
fn open_fragment(library: Library, hash: String) -> Result<(), PartNotLoaded> {
    let Some(read) = read_link(&hash) else {
        return Ok(());
    };
    let outcome = read.and_then(|file| {
        let runs = link_runs(&file)?;
        Ok((file, runs))
    });
    match outcome {
        Ok((file, runs)) => {
            // Kept on an earlier visit (the same link opened again): show that copy.
            let mut ids = library.ids_of_file(&file.name, &file.text);
            if ids.is_empty() {
                let files = vec![(file.name.clone(), file.text.as_bytes().to_vec())];
                ids = keep::add_batch(library, files, runs);
            }
            library.select_only(&ids);
            library.set_shared(Some(SharedRun::Opened(file.name)));
        }
        Err(error) => library.set_shared(Some(SharedRun::Refused(error.to_string()))),
    }
    Ok(())
}
