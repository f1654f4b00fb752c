//! Starting a run from the page: the endpoint check, the plan, the measurement on the chosen
//! thread (or a sweep's steps, each such a run); then following it (the live numbers a few
//! times a second) until its artifact joins the results and the library, or its reason is
//! shown.

use leptos::prelude::*;

use crate::core::config::error::ConfigError;
use crate::core::config::fields::FieldKey;
use crate::core::config::form::RunForm;
use crate::core::config::models::engine_hint;
use crate::core::config::settings::RunConfig;
use crate::core::plan::calibration::ContextCalibration;
use crate::core::plan::RunPlan;
use crate::web::platform::clock::Clock;
use crate::web::run::calibrate::calibrate;
use crate::web::run::context::RunContext;
use crate::web::run::preflight::fetch_models;
use crate::web::run::sweep::run_sweep;
use crate::web::ui::library::Library;
use crate::web::ui::state::{AppState, RunPhase};

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
    let read = state
        .form
        .with_untracked(|form| Ok::<_, Vec<ConfigError>>((form.to_config()?, form.to_sweep()?)));
    // to_config reports the SLO fields' errors too, so a run never starts with an unread SLO.
    let (config, sweep) = match read {
        Ok(read) => read,
        Err(errors) => {
            let fields: Vec<&str> = errors.iter().map(|error| error.field).collect();
            state.phase.set(RunPhase::Failed(format!(
                "fix these fields first: {}",
                fields.join(", ")
            )));
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
    let api_key = (!key.is_empty()).then_some(key);
    let calibration = if config.client.context_calibration {
        match calibrate_context(&clock, &config, discovered, api_key.as_deref()).await {
            Ok(calibration) => Some(calibration),
            Err(reason) => {
                state.phase.set(RunPhase::Failed(reason));
                return;
            }
        }
    } else {
        None
    };
    let context = RunContext {
        state,
        library,
        clock,
        discovered_max_model_len: discovered,
        api_key,
        slo: state.slo.get_untracked().ok().flatten(),
        calibration,
    };
    state.finished.set(None);
    state.sweep.set(None);
    state.sweep_cancelled.set(false);
    match sweep {
        Some(spec) => run_sweep(&context, spec, config).await,
        None => match context.measure(config).await {
            Ok(artifact) => {
                let _ = context.file(artifact);
                state.phase.set(RunPhase::Finished);
            }
            Err(reason) => state.phase.set(RunPhase::Failed(reason)),
        },
    }
}

/// Sizes the run's prompts in the server's tokens (docs/metrics.md, *Context calibration*):
/// the probes are aimed at the plan `config` makes, and one calibration serves every step of a
/// sweep. The reason is the plan's or the calibration's error.
async fn calibrate_context(
    clock: &Clock,
    config: &RunConfig,
    discovered: Option<u64>,
    api_key: Option<&str>,
) -> Result<ContextCalibration, String> {
    let plan = RunPlan::new(config, discovered).map_err(|error| error.to_string())?;
    calibrate(clock, config, &plan, api_key)
        .await
        .map_err(|error| error.to_string())
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
        Ok(mut models) => {
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
            models
                .probe_window(&model, |path| config.server_url(path), Some(key.as_str()))
                .await;
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
