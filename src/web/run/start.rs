//! Starting a run from the page: the endpoint check, the plan, the measurement on the chosen
//! thread (or a sweep's steps, each such a run, or `repeats` of them); then following it (the
//! live numbers a few times a second) until its artifact joins the results and the library, or
//! its reason is shown.

use std::cell::Cell;

use futures::future::LocalBoxFuture;
use futures::FutureExt;
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos::wasm_split::wasm_split;

use crate::core::config::error::ConfigError;
use crate::core::config::fields::FieldKey;
use crate::core::config::form::RunForm;
use crate::core::config::models::engine_hint;
use crate::core::config::settings::{url_origin, RunConfig};
use crate::core::plan::RunPlan;
use crate::core::schema::calibration::ContextCalibration;
use crate::core::schema::repeat::RepeatBlock;
use crate::core::telemetry::scrape::{check_metrics_answer, MetricsCheck};

use crate::web::platform::clock::Clock;
use crate::web::run::calibrate::calibrate;
use crate::web::run::context::RunContext;
use crate::web::run::metrics::fetch_bounded;
use crate::web::run::preflight::{fetch_models, probe_window};
use crate::web::run::sweep::run_sweep;
use crate::web::state::error::RunError;
use crate::web::state::library::Library;
use crate::web::state::AppState;

/// The page's Run: an action that checks the endpoint, plans, measures on the chosen thread
/// and files the result; dispatching it while a run is being started or running does nothing.
pub fn run_action(state: AppState, library: Library) -> Action<(), ()> {
    Action::new_local(move |_: &()| run(state, library))
}

async fn run(state: AppState, library: Library) {
    if !state.begin_run() {
        return;
    }
    let outcome = match start_part(state, library).await {
        Ok(running) => running.await,
        Err(error) => Err(error),
    };
    match outcome {
        Ok(()) => {}
        // Cancel during the prefix-cache reset or while the worker started: nothing of the
        // run was sent, nothing failed.
        Err(error) if error.cancelled_before_measuring() => {
            state.cancelled_before_measuring(error.to_string())
        }
        Err(error) => state.fail(error),
    }
}

/// Starts fetching the part of the wasm that runs, when Run is about to be pressed (the pointer
/// or the keyboard on it), so the press does not wait for it; a fetch that fails is tried again,
/// and said, when Run is pressed.
pub fn fetch_run_code() {
    spawn_local(async {
        let _ = preload_run().await;
    });
}

/// [`start`], from the part of the wasm that runs (a split point: fetched at the first Run, or
/// when the pointer reaches Run).
#[wasm_split(run, wasm_split_path = ::leptos::wasm_split, fallible, preload(preload_run))]
fn start_part(
    state: AppState,
    library: Library,
) -> Result<LocalBoxFuture<'static, Result<(), RunError>>, RunError> {
    Ok(start(state, library).boxed_local())
}

/// Checks, plans, calibrates and runs what the form asks for (one run or a sweep); the run's
/// own end (finished or failed) is set by the run or the sweep.
async fn start(state: AppState, library: Library) -> Result<(), RunError> {
    let discovered = load_models(state).await;
    if state.preflight_error().with_untracked(Option::is_some) {
        return Err(RunError::EndpointCheck);
    }
    // to_config reports the SLO fields' errors too, so a run never starts with an unread SLO.
    let (config, sweep, repeats) = state
        .form()
        .with_untracked(|form| {
            Ok::<_, Vec<ConfigError>>((form.to_config()?, form.to_sweep()?, form.to_repeats()?))
        })
        .map_err(|errors| {
            RunError::InvalidFields(errors.iter().map(|error| error.field).collect())
        })?;
    // Repeats wait the sweep's cool-down between them (the field's error shows at the field).
    let cooldown_s = state.form().with_untracked(|form| {
        form.get(FieldKey::SweepCooldownS)
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
            .unwrap_or(0.0)
    });
    let clock = Clock::of_this_thread().ok_or(RunError::NoClock)?;
    let api_key = state.api_key_for_requests();
    // A workload's prompts are sent as given: nothing to size.
    let has_workload = matches!(state.workload_for_run(), Ok(Some(_)));
    let calibration = if config.client.context_calibration && !has_workload {
        Some(calibrate_context(&clock, &config, discovered, api_key.as_deref()).await?)
    } else {
        None
    };
    let context = RunContext {
        state,
        library,
        clock,
        discovered_max_model_len: discovered,
        api_key,
        slo: state.slo().get_untracked().ok().flatten(),
        calibration,
        runs_started: Cell::new(0),
        checkpoint: Cell::new(None),
    };
    state.clear_last_run();
    match sweep {
        Some(spec) => run_sweep(&context, spec, config, repeats).await,
        None => run_repeats(&context, config, repeats, cooldown_s).await?,
    }
    Ok(())
}

/// Runs `config` `count` times (the same plan, so the same requests), `cooldown_s` apart; with
/// more than one, each artifact carries the group's `repeat` block and joins the library, so
/// the group is compared as one. Cancel ends the group after the run it stopped.
async fn run_repeats(
    context: &RunContext,
    config: RunConfig,
    count: u64,
    cooldown_s: f64,
) -> Result<(), RunError> {
    let mut group_id = None::<String>;
    for index in 0..count {
        // Cancel pressed after a repeat was filed (during the cool-down or before it) ends the
        // group there: the repeats filed so far are kept.
        if index > 0 && !context.cool_down(cooldown_s * 1000.0).await {
            break;
        }
        let mut artifact = match context.measure(config.clone()).await {
            Ok(artifact) => artifact,
            // Cancel before a later repeat sent anything (during its reset, or while its worker
            // started): the repeats measured before it are kept.
            Err(error) if error.cancelled_before_measuring() && index > 0 => break,
            Err(error) => return Err(error),
        };
        if count > 1 {
            let group_id = group_id
                .get_or_insert_with(|| format!("repeat-{}", artifact.run_id))
                .clone();
            artifact.repeat = Some(RepeatBlock {
                group_id,
                index,
                count,
            });
        }
        let (filed, _) = context.file(artifact).await?;
        if count > 1 {
            context.state.repeat_filed(filed);
        }
    }
    context.state.finish_run();
    Ok(())
}

/// Sizes the run's prompts in the server's tokens (docs/guide/metrics.md, *Context calibration*):
/// the probes are aimed at the plan `config` makes, and one calibration serves every step of a
/// sweep. The reason is the plan's or the calibration's error.
async fn calibrate_context(
    clock: &Clock,
    config: &RunConfig,
    discovered: Option<u64>,
    api_key: Option<&str>,
) -> Result<ContextCalibration, RunError> {
    let plan =
        RunPlan::new(config, discovered).map_err(|error| RunError::Plan(error.to_string()))?;
    calibrate(clock, config, &plan, api_key)
        .await
        .map_err(|error| RunError::Calibration(error.to_string()))
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
    // The check resets nothing, and an engine still to be discovered has no reset route yet.
    if form.get(FieldKey::Engine).trim().is_empty() {
        probe.set(FieldKey::ResetPrefixCache, "off");
    }
    let mut config = probe.to_config()?;
    config.model = form.get(FieldKey::Model).trim().to_string();
    config.engine =
        Some(form.get(FieldKey::Engine).trim().to_string()).filter(|engine| !engine.is_empty());
    Ok(config)
}

/// Checks the endpoint the form names: its models (the first fills an empty model field, its
/// `owned_by` an empty engine), the context window, or why the check failed. Returns the
/// model's context window, when the server reports one.
pub async fn load_models(state: AppState) -> Option<u64> {
    let Ok(config) = state.form().with_untracked(config_for_preflight) else {
        state.endpoint_check_failed("Fix the fields marked in red first.".to_string(), false);
        return None;
    };
    let key = state.api_key_for_requests();
    match fetch_models(&config.models_url(), key.as_deref()).await {
        Ok(mut models) => {
            let model_fill = config
                .model
                .is_empty()
                .then(|| models.ids.first().cloned())
                .flatten();
            let model = model_fill.clone().unwrap_or_else(|| config.model.clone());
            let engine_fill = config
                .engine
                .is_none()
                .then(|| engine_hint(&models.body, &model))
                .flatten();
            probe_window(
                &mut models,
                &model,
                |path| config.server_url(path),
                key.as_deref(),
            )
            .await;
            let max_len = models.max_model_len(&model);
            state.endpoint_checked(models, model_fill, engine_fill);
            state.metrics_checked(check_metrics(&config).await);
            max_len
        }
        Err(error) => {
            state.endpoint_check_failed(error.summary, error.show_cors_help);
            None
        }
    }
}

/// How long the endpoint check waits for the server's `/metrics`: a check that hangs there
/// would hold up the run it precedes.
const METRICS_CHECK_TIMEOUT_MS: f64 = 2_000.0;

/// Tries the run's metrics URL once, as the endpoint check (docs/guide/telemetry.md): what
/// answers there, or why nothing can be read and what to do; `None` when `server_metrics` is
/// off. The `/models` request just answered, so an unreadable answer from the same origin is
/// CORS, not a server that is down.
async fn check_metrics(config: &RunConfig) -> Option<MetricsCheck> {
    let url = config.client.metrics_url(&config.base_url)?;
    let same_origin =
        url_origin(&url).is_some() && url_origin(&url) == url_origin(&config.base_url);
    let outcome = fetch_bounded(&url, METRICS_CHECK_TIMEOUT_MS).await;
    Some(check_metrics_answer(
        &url,
        config.client.server_metrics_interval_ms,
        outcome
            .as_ref()
            .map(|(status, body)| (*status, body.as_slice()))
            .map_err(Clone::clone),
        same_origin,
    ))
}
