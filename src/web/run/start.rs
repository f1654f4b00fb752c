//! Starting a run from the page: the endpoint check, the plan, the measurement on the chosen
//! thread; then following it (the live numbers a few times a second) until its artifact joins
//! the results and the library, or its reason is shown.

use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::core::config::choices::LiveView;
use crate::core::plan::RunPlan;
use crate::core::read::loaded::LoadedArtifact;

use crate::core::config::error::ConfigError;
use crate::core::config::fields::FieldKey;
use crate::core::config::form::RunForm;
use crate::core::config::models::engine_hint;
use crate::core::config::settings::RunConfig;
use crate::web::measure::live_run::RunSetup;
use crate::web::platform::clock::Clock;
use crate::web::platform::timers::sleep_ms;
use crate::web::run::host::Measurement;
use crate::web::run::preflight::fetch_models;
use crate::web::ui::library::Library;
use crate::web::ui::live_charts::LIVE_CHART_REFRESH_MS;
use crate::web::ui::state::{AppState, FinishedRun, RunPhase};

/// The page's Run: an action that checks the endpoint, plans, measures on the chosen thread
/// and files the result; dispatching it while a run is being started or running does nothing.
pub fn run_action(state: AppState, library: Library) -> Action<(), ()> {
    Action::new_local(move |_: &()| run(state, library))
}

async fn run(state: AppState, library: Library) {
    if matches!(
        state.phase.get_untracked(),
        RunPhase::Preflight | RunPhase::Running
    ) {
        return;
    }
    state.phase.set(RunPhase::Preflight);
    let discovered = load_models(state).await;
    if state.preflight_error.with_untracked(Option::is_some) {
        state.phase.set(RunPhase::Failed(
            "the endpoint check failed; see the message above".to_string(),
        ));
        return;
    }
    let config = match state.form.with_untracked(|form| form.to_config()) {
        Ok(config) => config,
        Err(errors) => {
            let fields: Vec<&str> = errors.iter().map(|error| error.field).collect();
            state.phase.set(RunPhase::Failed(format!(
                "fix these fields first: {}",
                fields.join(", ")
            )));
            return;
        }
    };
    let plan = match RunPlan::new(&config, discovered) {
        Ok(plan) => plan,
        Err(error) => {
            state.phase.set(RunPhase::Failed(error.to_string()));
            return;
        }
    };
    let Some(clock) = Clock::of_this_thread() else {
        state.phase.set(RunPhase::Failed(
            "this browser has no performance clock".to_string(),
        ));
        return;
    };
    let key = state.api_key.get_untracked();
    let setup = RunSetup {
        config,
        plan,
        api_key: (!key.is_empty()).then_some(key),
    };
    state.finished.set(None);
    let quiet = setup.config.client.live_view == LiveView::End;
    let (live, result) = match Measurement::start(clock, setup, discovered) {
        Ok(started) => started,
        Err(reason) => {
            state.phase.set(RunPhase::Failed(reason.to_string()));
            return;
        }
    };
    state.live.set_value(Some(live.clone()));
    state.snapshot.set(live.snapshot());
    state.quiet_run.set(quiet);
    state.phase.set(RunPhase::Running);
    if !quiet {
        poll_live(live.clone(), state);
    }
    let result = result.await;
    live.refresh();
    state.snapshot.set(live.snapshot());
    match result {
        Ok(artifact) => {
            // The run joins the library too, so it is charted and can be compared with
            // saved artifacts exactly like a dropped file.
            if let Ok(text) = artifact.to_json_text() {
                library.add(LoadedArtifact::from_text(&artifact.file_name(), &text));
            }
            state.finished.set(Some(FinishedRun {
                artifact: Rc::new(artifact),
            }));
            state.phase.set(RunPhase::Finished);
        }
        Err(reason) => state.phase.set(RunPhase::Failed(reason.to_string())),
    }
}

/// How often the live numbers are refreshed: a few times a second is plenty for a person, and
/// every refresh is main-thread work that competes for the CPU with the thread taking the
/// measurements (on the same thread in main-thread mode, on a shared core in worker mode).
const LIVE_REFRESH_MS: f64 = 250.0;

/// Copies the run's numbers into the page every [`LIVE_REFRESH_MS`], and the rows for the live
/// charts at most every [`LIVE_CHART_REFRESH_MS`], until the run ends. A timer, not an
/// animation-frame loop: a page that asks for every frame makes the browser produce 60 frames a
/// second even when nothing changed: CPU time taken from the cores the measurement shares.
fn poll_live(live: Rc<Measurement>, state: AppState) {
    spawn_local(async move {
        let mut charts_at = f64::NEG_INFINITY;
        loop {
            live.refresh();
            let finished = live.is_finished();
            state.snapshot.set(live.snapshot());
            let now_ms = live.now_ms();
            if state.live_charts.get_untracked()
                && (finished || now_ms - charts_at >= LIVE_CHART_REFRESH_MS)
            {
                state.live_rows.set(live.views().into());
                charts_at = now_ms;
            }
            if finished {
                return;
            }
            sleep_ms(LIVE_REFRESH_MS).await;
        }
    });
}

/// Fields the endpoint check fills when they are empty (from `/models`).
pub const FILLED_BY_PREFLIGHT: [FieldKey; 2] = [FieldKey::Model, FieldKey::Engine];

/// The configuration to check the endpoint with: model and engine may still be empty then,
/// since the check is what fills them.
pub fn config_for_preflight(form: &RunForm) -> Result<RunConfig, Vec<ConfigError>> {
    let mut probe = form.clone();
    for key in FILLED_BY_PREFLIGHT {
        if probe.get(key).trim().is_empty() {
            probe.set(key, "to-be-discovered");
        }
    }
    let mut config = probe.to_config()?;
    config.model = form.get(FieldKey::Model).trim().to_string();
    config.engine =
        Some(form.get(FieldKey::Engine).trim().to_string()).filter(|engine| !engine.is_empty());
    Ok(config)
}

pub async fn load_models(state: AppState) -> Option<u64> {
    let Ok(config) = state.form.with_untracked(config_for_preflight) else {
        state.preflight_error.set(Some((
            "Fix the fields marked in red first.".to_string(),
            false,
        )));
        return None;
    };
    let key = state.api_key.get_untracked();
    match fetch_models(&config.models_url(), Some(key.as_str())).await {
        Ok(models) => {
            state.preflight_error.set(None);
            if config.model.is_empty() {
                if let Some(first) = models.ids.first() {
                    state.form.update(|form| {
                        form.set(FieldKey::Model, first.as_str());
                    });
                }
            }
            let model = state
                .form
                .with_untracked(|form| form.get(FieldKey::Model).to_string());
            if config.engine.is_none() {
                if let Some(engine) = engine_hint(&models.body, &model) {
                    state.form.update(|form| {
                        form.set(FieldKey::Engine, engine);
                    });
                }
            }
            let max_len = models.max_model_len(&model);
            state.models.set(Some(models));
            max_len
        }
        Err(error) => {
            state.models.set(None);
            state
                .preflight_error
                .set(Some((error.summary, error.show_cors_help)));
            None
        }
    }
}
