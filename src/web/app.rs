//! The application shell: header, the run view and the results view.

use leptos::prelude::*;

/// The whole page. Later issues fill the run and results views; the shell is stable so tests can
/// rely on its `data-testid` landmarks.
#[component]
pub fn App() -> impl IntoView {
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
            <span>" artifacts."</span>
        </footer>
    }
}

/// Where a benchmark is configured and run.
#[component]
fn RunView() -> impl IntoView {
    view! {
        <section class="panel run-view" data-testid="run-view">
            <h2>"Run"</h2>
            <p class="empty-state" data-testid="run-empty">
                "No endpoint yet. Start one with the README's serve command, then point strobe at it."
            </p>
        </section>
    }
}

/// Where finished runs and loaded artifacts are shown.
#[component]
fn ResultsView() -> impl IntoView {
    view! {
        <section class="panel results-view" data-testid="results-view">
            <h2>"Results"</h2>
            <p class="empty-state" data-testid="results-empty">
                "No results yet. Finish a run or load a saved artifact."
            </p>
        </section>
    }
}
