//! The application shell: provides the shared state and lays out the run and results views.

use leptos::prelude::*;

use crate::core::config::form::RunForm;

use crate::web::platform::storage;
use crate::web::run::{keep, link};
use crate::web::state::library::Library;
use crate::web::state::AppState;
use crate::web::ui::results::ResultsView;
use crate::web::ui::run_view::RunView;

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let query = window().location().search().unwrap_or_default();
    let (form, notices) = RunForm::from_query(&query);
    let remembered_key = storage::load_api_key();
    let state = AppState::new(form, notices, remembered_key);
    provide_context(state);
    let library = Library::new();
    provide_context(library);
    open_kept_and_linked(library);

    // Keep the URL in step with the form, so the address bar is always a link to this setup.
    // The API key is not part of the form, so it can never reach the URL.
    Effect::new(move |_| {
        let query = state.form().with(RunForm::to_query);
        storage::replace_query(&query);
    });
    // Keep the key in local storage only while the user asks for it.
    Effect::new(move |_| {
        let outcome = if state.remember_key().get() {
            storage::save_api_key(&state.api_key().get())
        } else {
            storage::forget_api_key()
        };
        state.key_storage_outcome(outcome.err());
    });

    view! {
        <header class="app-header">
            <h1 class="brand">"strobe"</h1>
            <p class="tagline">"Benchmark LLM serving endpoints from your browser."</p>
        </header>
        <main class="app-main" data-testid="app-ready">
            <RunView />
            <ResultsView />
        </main>
        <footer class="app-footer">
            <span>"Writes and reads "</span>
            <code>"anvil-serving.benchmark/v1"</code>
            <span>" artifacts. Nothing leaves your browser except the requests you run."</span>
        </footer>
    }
}

/// What the library kept on an earlier visit; then the run of the link the page was opened
/// with, if it was (read now: the address bar soon shows the form's link instead), and of any
/// link pasted into this tab's address bar later.
fn open_kept_and_linked(library: Library) {
    let hash = window().location().hash().unwrap_or_default();
    keep::restore(library, move || link::open(library, hash));
    let on_hash_change = window_event_listener_untyped("hashchange", move |_| {
        let hash = window().location().hash().unwrap_or_default();
        leptos::task::spawn_local(link::open(library, hash));
    });
    on_cleanup(move || on_hash_change.remove());
}
