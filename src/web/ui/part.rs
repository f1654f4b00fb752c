//! Views from the parts of the app's wasm that are fetched the first time they are shown (split
//! points, docs/design/architecture.md, *Parts of the wasm*): nothing while the part loads, its
//! view once it has, or, when it could not be fetched, what to do.

use std::future::Future;

use leptos::prelude::*;

use crate::web::platform::parts::PartNotLoaded;

/// The view `load` brings from its part of the wasm (a split point's function).
pub fn part_view<Fut>(load: impl Fn() -> Fut + Send + Sync + 'static) -> impl IntoView
where
    Fut: Future<Output = Result<AnyView, PartNotLoaded>> + Send + 'static,
{
    view! {
        <Suspense fallback=|| ()>
            {move || {
                let loading = load();
                Suspend::new(async move {
                    match loading.await {
                        Ok(view) => view,
                        Err(error) => view! {
                            <p class="error-box" role="alert" data-testid="part-not-loaded">
                                {error.to_string()}
                            </p>
                        }
                        .into_any(),
                    }
                })
            }}
        </Suspense>
    }
}
