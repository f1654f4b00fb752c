//! The artifact library: files dropped on the page (or picked, or the shipped example) are
//! validated by the core and listed with their verdict; selected ones are charted and compared.
//!
//! Everything read from a file is data: it reaches the page only as text nodes and as ECharts
//! canvas text, never as HTML.

use js_sys::Uint8Array;
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos::wasm_split::wasm_split;
use wasm_bindgen_futures::JsFuture;

use crate::core::format::format_bytes;
use crate::core::present::library::{sorted_order, LibraryColumn, LibraryRow};
use crate::core::read::bundle::open_dropped_batch;
use crate::core::read::opened::{OpenedArtifact, MAX_ARTIFACT_TEXT_BYTES};
use crate::core::read::validate::report::Verdict;

use crate::web::platform::clock::measured;
use crate::web::platform::js_error::js_text;
use crate::web::platform::parts::PartNotLoaded;
use crate::web::run::keep;
use crate::web::state::library::{Library, LibraryEntry};
use crate::web::state::AppState;
use crate::web::ui::slo::restore_slo;

/// How many problems a card lists before it summarises the rest.
const PROBLEMS_SHOWN: usize = 50;

/// Reads the files picked or dropped together (artifacts, `.zip`s of them, or other tools'
/// results; an AIPerf run's two exports become one run) and adds what they hold to the library,
/// in the order given.
async fn open_files(library: Library, state: AppState, files: Vec<web_sys::File>) {
    let mut batch = Vec::new();
    for file in files {
        let name = file.name();
        let size = file.size();
        if size > MAX_ARTIFACT_TEXT_BYTES as f64 {
            // Refuse before reading: a huge file would stall the tab and its memory.
            library.add(OpenedArtifact::too_large(&name, size as usize));
            continue;
        }
        match JsFuture::from(file.array_buffer()).await {
            Ok(buffer) => batch.push((name, Uint8Array::new(&buffer).to_vec())),
            Err(err) => {
                library.add(OpenedArtifact::unreadable(
                    &name,
                    &format!("the browser could not read the file: {}", js_text(&err)),
                ));
            }
        }
    }
    if let Err(error) = open_batch(library, state, batch).await {
        library.set_note(Some(error.to_string()));
    }
}

/// Opens a batch of files' bytes and keeps what they hold in the library; a file held to an
/// SLO brings it into the form ([`restore_slo`]). A split point: the results part of the wasm.
#[wasm_split(
    results,
    wasm_split_path = ::leptos::wasm_split,
    fallible,
    preload(preload_results)
)]
fn open_batch(
    library: Library,
    state: AppState,
    batch: Vec<(String, Vec<u8>)>,
) -> Result<(), PartNotLoaded> {
    let opened = measured("strobe:load-artifact", || open_dropped_batch(&batch));
    for artifact in &opened {
        restore_slo(state, artifact);
    }
    keep::add_batch(library, batch, opened);
    Ok(())
}

fn open_file_list(library: Library, state: AppState, files: Option<web_sys::FileList>) {
    let Some(files) = files else {
        return;
    };
    let files: Vec<web_sys::File> = (0..files.length())
        .filter_map(|index| files.get(index))
        .collect();
    spawn_local(open_files(library, state, files));
}

/// Opens the reference artifact shipped in `public/`, relative to the page so it works from
/// any sub-path.
async fn open_example(library: Library) {
    const EXAMPLE: &str = "public/example-artifact.json";
    let text = match gloo_net::http::Request::get(EXAMPLE).send().await {
        Ok(response) if response.ok() => response.text().await.map_err(|err| err.to_string()),
        Ok(response) => Err(format!("the example answered HTTP {}", response.status())),
        Err(err) => Err(err.to_string()),
    };
    match text {
        Ok(text) => {
            if let Err(error) = keep_example(library, text).await {
                library.set_note(Some(error.to_string()));
            }
        }
        Err(reason) => {
            library.add(OpenedArtifact::unreadable("example-artifact.json", &reason));
        }
    }
}

/// Starts fetching the results part of the wasm when a file is about to be given (dragged over
/// the drop zone, the pointer or the keyboard on it), so opening it does not wait for the part;
/// a fetch that fails is tried again, and said, when the file is opened.
fn fetch_readers() {
    spawn_local(async {
        let _ = preload_results().await;
    });
}

/// Opens the example's text and keeps it (a split point: the results part of the wasm).
#[wasm_split(results, wasm_split_path = ::leptos::wasm_split, fallible)]
fn keep_example(library: Library, text: String) -> Result<(), PartNotLoaded> {
    let opened = OpenedArtifact::from_text("example-artifact.json", &text);
    keep::add_run(library, "example-artifact.json", &text, opened, None);
    Ok(())
}

/// Drop zone, file picker and the example button.
#[component]
pub fn ArtifactDrop() -> impl IntoView {
    let library = expect_context::<Library>();
    let state = AppState::expect();
    let dragging = RwSignal::new(false);
    view! {
        <div
            class="drop-zone"
            class:dragging=move || dragging.get()
            data-testid="drop-zone"
            data-restored=move || library.restored().get().to_string()
            on:dragenter=move |_| fetch_readers()
            on:pointerenter=move |_| fetch_readers()
            on:focusin=move |_| fetch_readers()
            on:dragover=move |ev: web_sys::DragEvent| {
                ev.prevent_default();
                dragging.set(true);
            }
            on:dragleave=move |_| dragging.set(false)
            on:drop=move |ev: web_sys::DragEvent| {
                ev.prevent_default();
                dragging.set(false);
                open_file_list(library, state, ev.data_transfer().and_then(|transfer| transfer.files()));
            }
        >
            <p data-testid="drop-zone-text">
                "Drop saved artifacts here: one or many, a sweep's .zip, a strobe report, or the \
                 results of vLLM, GuideLLM or AIPerf. Or choose the files:"
            </p>
            <label class="file-pick">
                <input
                    type="file"
                    aria-label="Artifact files to load"
                    multiple
                    accept=".json,application/json,.jsonl,.zip,application/zip,.html,text/html"
                    data-testid="artifact-input"
                    on:change=move |ev| {
                        let input: web_sys::HtmlInputElement = event_target(&ev);
                        open_file_list(library, state, input.files());
                        input.set_value("");
                    }
                />
            </label>
            <button
                type="button"
                data-testid="open-example"
                on:click=move |_| spawn_local(open_example(library))
            >
                "Open example"
            </button>
        </div>
    }
}

/// The loaded files as a table, one row per run with what tells runs apart, sortable by any
/// column (click its header again to reverse), each with its verdict, problems and Remove.
#[component]
pub fn ArtifactList() -> impl IntoView {
    let library = expect_context::<Library>();
    let sort = RwSignal::new((LibraryColumn::Loaded, true));
    let rows = move || {
        let entries = library.entries().get();
        let table: Vec<LibraryRow> = entries
            .iter()
            .map(|entry| LibraryRow::of(&entry.artifact))
            .collect();
        let (column, ascending) = sort.get();
        sorted_order(&table, column, ascending)
            .into_iter()
            .map(|position| (entries[position].clone(), table[position].clone()))
            .collect::<Vec<_>>()
    };
    view! {
        <Show when=move || library.entries().with(|entries| !entries.is_empty())>
            <div class="artifact-table-wrap">
                <table class="artifact-table" data-testid="artifact-list">
                    <thead>
                        <tr>
                            <th scope="col">"Compare"</th>
                            {LibraryColumn::SHOWN
                                .into_iter()
                                .map(|column| {
                                    let marker = move || match sort.get() {
                                        (shown, true) if shown == column => " ▲",
                                        (shown, false) if shown == column => " ▼",
                                        _ => "",
                                    };
                                    view! {
                                        <th
                                            scope="col"
                                            aria-sort=move || match sort.get() {
                                                (shown, true) if shown == column => "ascending",
                                                (shown, false) if shown == column => "descending",
                                                _ => "none",
                                            }
                                        >
                                            <button
                                                type="button"
                                                class="sort"
                                                data-testid=format!("sort-{}", column.id())
                                                on:click=move |_| {
                                                    sort.update(|(shown, ascending)| {
                                                        if *shown == column {
                                                            *ascending = !*ascending;
                                                        } else {
                                                            *shown = column;
                                                            *ascending = true;
                                                        }
                                                    })
                                                }
                                            >
                                                {column.label()}
                                                {marker}
                                            </button>
                                        </th>
                                    }
                                })
                                .collect_view()}
                            <th scope="col"><span class="visually-hidden">"Remove"</span></th>
                        </tr>
                    </thead>
                    <tbody>
                        <For
                            each=rows
                            key=|(entry, _)| entry.id
                            children=move |(entry, row)| view! { <LibraryEntryRow entry=entry row=row /> }
                        />
                    </tbody>
                </table>
                <p class="actions">
                    <button
                        type="button"
                        class="small"
                        data-testid="library-clear"
                        on:click=move |_| keep::clear(library)
                    >
                        "Clear all"
                    </button>
                </p>
            </div>
        </Show>
    }
}

/// What the library has to say: a file it could not keep, storage it could not use, a part of
/// the app it could not load.
#[component]
pub fn LibraryNote() -> impl IntoView {
    let library = expect_context::<Library>();
    move || {
        library.note().get().map(|note| {
            view! { <p class="warning" role="status" data-testid="library-note">{note}</p> }
        })
    }
}

/// One file's row: whether it is charted, what tells it apart, its verdict, and its status and
/// problems on a line of their own (the problems folded when there are many).
#[component]
fn LibraryEntryRow(
    /// The loaded file.
    entry: LibraryEntry,
    /// What its columns show.
    row: LibraryRow,
) -> impl IntoView {
    let library = expect_context::<Library>();
    let artifact = entry.artifact.clone();
    let verdict_class = match artifact.verdict() {
        Verdict::Valid => "verdict valid",
        Verdict::ValidLegacy(_) => "verdict legacy",
        Verdict::Invalid => "verdict invalid",
        Verdict::Foreign => "verdict foreign",
    };
    let verdict_text = artifact.verdict_label();
    let problems = artifact.problems();
    let hidden = problems.len().saturating_sub(PROBLEMS_SHOWN);
    let selectable = artifact.verdict() != Verdict::Invalid;
    let id = entry.id;
    let selected = entry.selected;
    let kept = entry.kept;
    let text_bytes = artifact.text_bytes;
    let label = artifact.label();
    let mut cells = row.cells.into_iter();
    let _run = cells.next();
    let _verdict = cells.next();
    let rest: Vec<String> = cells.collect();
    let problem_count = problems.len();
    view! {
        <tr
            class="library-row"
            data-testid="library-row"
            data-partial=artifact.partial_label().is_some().to_string()
        >
            <td>
                {selectable
                    .then(|| {
                        view! {
                            <input
                                type="checkbox"
                                data-testid="select-artifact"
                                aria-label=format!("chart and compare {label}")
                                prop:checked=move || selected.get()
                                on:change=move |ev| selected.set(event_target_checked(&ev))
                            />
                        }
                    })}
            </td>
            <td class="artifact-name">
                <strong data-testid="artifact-label">{artifact.label()}</strong>
                <span class="status" data-testid="artifact-status">{artifact.status_line()}</span>
                <span class="status" data-testid="artifact-kept" data-kept=move || kept.get().is_some().to_string()>
                    {move || kept_line(text_bytes, kept.get().is_some())}
                </span>
                {(!problems.is_empty())
                    .then(|| {
                        view! {
                            <details class="problems" open=problem_count <= 3>
                                <summary>{format!("{problem_count} problem{}", if problem_count == 1 { "" } else { "s" })}</summary>
                                <ul class="violations" data-testid="violations">
                                    {problems
                                        .into_iter()
                                        .take(PROBLEMS_SHOWN)
                                        .map(|problem| view! { <li>{problem}</li> })
                                        .collect_view()}
                                    {(hidden > 0).then(|| view! { <li>{format!("… and {hidden} more")}</li> })}
                                </ul>
                            </details>
                        }
                    })}
            </td>
            <td><span class=verdict_class data-testid="verdict">{verdict_text}</span></td>
            {rest.into_iter().map(|cell| view! { <td>{cell}</td> }).collect_view()}
            <td>
                <button
                    type="button"
                    class="small"
                    data-testid="remove-artifact"
                    on:click=move |_| keep::remove(library, id)
                >
                    "Remove"
                </button>
            </td>
        </tr>
    }
}

/// "12.3 KB, kept in this browser" (or "not kept": it lasts until the tab closes).
fn kept_line(bytes: usize, kept: bool) -> String {
    let size = format_bytes(bytes);
    if kept {
        format!("{size}, kept in this browser")
    } else {
        format!("{size}, not kept (until the tab closes)")
    }
}
