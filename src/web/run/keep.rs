//! The library kept across reloads and browser restarts (docs/guide/results.md, *The library keeps
//! what it holds*): what is added to the [`Library`] — a finished run's artifact, the files
//! dropped together, the example — is kept as the batch of files it was read from
//! ([`crate::web::platform::kept`]); what is removed is forgotten once no entry was read from
//! it; when the page opens, every kept batch is read again by the reader that read it first,
//! so a kept run shows the numbers it showed. What keeping runs into (no storage, a full
//! quota) is the library's note, with what to do; nothing loaded is lost by it.

use std::future::Future;

use futures::future::LocalBoxFuture;
use futures::FutureExt;
use leptos::task::spawn_local;
use leptos::wasm_split::wasm_split;

use crate::core::read::bundle::open_dropped_batch;
use crate::core::read::opened::OpenedArtifact;

use crate::web::platform::kept::{self, KeepError, KeptBatch, KeptFile};
use crate::web::platform::parts::PartNotLoaded;
use crate::web::platform::timers::yield_to_event_loop;
use crate::web::state::library::Library;

/// Adds `loaded` (what was read from `files`) to the library, and keeps `files`; the ids of
/// the entries added.
pub fn add_batch(library: Library, files: Vec<KeptFile>, opened: Vec<OpenedArtifact>) -> Vec<u64> {
    add_batch_in_place(library, files, opened, None)
}

/// [`add_batch`], keeping `files` in the place of the batch kept under `in_place_of` (a run's
/// checkpoint, which its finished artifact replaces) when there is one.
fn add_batch_in_place(
    library: Library,
    files: Vec<KeptFile>,
    opened: Vec<OpenedArtifact>,
    in_place_of: Option<f64>,
) -> Vec<u64> {
    let readable = opened.iter().any(|artifact| artifact.refusal.is_none());
    let ids: Vec<u64> = opened
        .into_iter()
        .map(|artifact| library.add(artifact))
        .collect();
    if files.is_empty() || !readable {
        return ids;
    }
    let kept_ids = ids.clone();
    spawn_local(async move {
        let kept = match in_place_of {
            Some(key) => kept::replace(key, &files).await.map(|()| key),
            None => kept::keep(&files).await,
        };
        match kept {
            Ok(key) => library.set_kept(&kept_ids, key),
            Err(error) => note(library, &error),
        }
    });
    ids
}

/// Adds a finished run (its artifact's file name and text) to the library, and keeps it, in
/// the place of its checkpoint when one was kept (`checkpoint`, docs/guide/results.md).
pub fn add_run(
    library: Library,
    name: &str,
    text: &str,
    opened: OpenedArtifact,
    checkpoint: Option<f64>,
) -> Vec<u64> {
    add_batch_in_place(
        library,
        vec![(name.to_owned(), text.as_bytes().to_vec())],
        vec![opened],
        checkpoint,
    )
}

/// Puts a run's new text in the place of the entry named `name` (a sweep's step gains its
/// sweep block at the end), kept anew under the same key.
pub fn replace_named(library: Library, name: &str, text: &str) {
    library.replace_named(name, OpenedArtifact::from_text(name, text));
    let Some(key) = library.kept_key_of(name) else {
        return;
    };
    let files = vec![(name.to_owned(), text.as_bytes().to_vec())];
    spawn_local(async move {
        if let Err(error) = kept::replace(key, &files).await {
            note(library, &error);
        }
    });
}

/// Removes entry `id`, and forgets its files when no other entry was read from them.
pub fn remove(library: Library, id: u64) {
    if let Some(key) = library.remove(id) {
        spawn_local(async move {
            if let Err(error) = kept::forget(key).await {
                note(library, &error);
            }
        });
    }
}

/// Empties the library and forgets everything kept.
pub fn clear(library: Library) {
    library.clear();
    library.set_note(None);
    spawn_local(async move {
        if let Err(error) = kept::forget_all().await {
            note(library, &error);
        }
    });
}

/// Reads every kept batch back into the library, in the order kept (called as the page
/// opens), then calls `then` (which opens a link's run, once the library it may already be in
/// is there); only the last batch's runs start selected (a library of many runs would otherwise
/// open as one large comparison).
pub fn restore<Then>(library: Library, then: impl FnOnce() -> Then + 'static)
where
    Then: Future<Output = ()> + 'static,
{
    spawn_local(async move {
        match kept::kept().await {
            // Nothing kept: the readers are not loaded for it.
            Ok(batches) if batches.is_empty() => {}
            Ok(batches) => match open_kept(library, batches).await {
                Ok(opening) => opening.await,
                Err(error) => library.set_note(Some(error.to_string())),
            },
            Err(error) => note(library, &error),
        }
        library.set_restored();
        then().await;
    });
}

/// Opens the kept batches and lists their runs (a split point: the results part of the wasm).
#[wasm_split(results, wasm_split_path = ::leptos::wasm_split, fallible)]
fn open_kept(
    library: Library,
    batches: Vec<KeptBatch>,
) -> Result<LocalBoxFuture<'static, ()>, PartNotLoaded> {
    Ok(async move {
        let last = batches.len().saturating_sub(1);
        let mut read = Vec::new();
        for (position, batch) in batches.into_iter().enumerate() {
            for artifact in open_dropped_batch(&batch.files) {
                read.push((artifact, batch.key, position == last));
            }
            // Reading a run takes milliseconds: the page answers between runs, so a
            // long library does not freeze it as it opens.
            yield_to_event_loop().await;
        }
        // Listed at once: the table is drawn once, not once per run.
        library.add_all_kept(read);
    }
    .boxed_local())
}

fn note(library: Library, error: &KeepError) {
    library.set_note(Some(error.to_string()));
}
