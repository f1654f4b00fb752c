//! A conversation run's TTFT by turn and the history tokens per turn, as one table under the
//! run's notes; the rows and their text are [`crate::core::present::turns`]'.

use leptos::prelude::*;

use crate::core::present::turns::TurnsTable;

/// TTFT p50/p90 and the server's prompt tokens per turn index; nothing for a run without
/// sessions of several turns.
#[component]
pub fn TurnsTableView(
    /// The run's table ([`crate::core::present::turns::turns_table`]), if it has one.
    table: Option<TurnsTable>,
) -> impl IntoView {
    table.map(|table| {
        let header = table.header();
        let cells = table.cells();
        let note = table.note();
        view! {
            <section class="turns" data-testid="turns-table">
                <h4>"TTFT by turn"</h4>
                <table class="metrics-table">
                    <thead>
                        <tr>{header.into_iter().map(|name| view! { <th>{name}</th> }).collect_view()}</tr>
                    </thead>
                    <tbody>
                        {cells
                            .into_iter()
                            .map(|row| {
                                let turn = row.first().cloned().unwrap_or_default();
                                view! {
                                    <tr data-turn=turn>
                                        {row.into_iter().map(|cell| view! { <td>{cell}</td> }).collect_view()}
                                    </tr>
                                }
                            })
                            .collect_view()}
                    </tbody>
                </table>
                <p class="turns-note">{note}</p>
            </section>
        }
    })
}
