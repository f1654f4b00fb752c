//! Checkpoints of a run in progress (docs/guide/results.md, *Checkpoints*): every few seconds while
//! a run measures in the worker, the page writes the requests that have ended so far as a
//! partial artifact ([`crate::core::live::checkpoint`]) into the kept library, so a tab closed
//! or crashed during the run leaves them behind, labelled partial, for the next visit. When
//! the run ends its own artifact takes the checkpoint's place under the same key; when it
//! fails, a last checkpoint saying why joins the library.
//!
//! Only the page's thread does this work, from what the worker already sent it: the measuring
//! thread never builds or stores a checkpoint. A run measured on the page's own thread is not
//! checkpointed, since that work would take time from the reads it stamps.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::channel::oneshot;
use leptos::task::spawn_local;

use crate::core::config::choices::MeasurementThread;
use crate::core::live::checkpoint::CheckpointError;
use crate::core::plan::RunPlan;
use crate::core::read::opened::OpenedArtifact;
use crate::core::schema::client::{ClientBlock, ClientSseCounts, ClientTransport};

use crate::web::platform::clock::Clock;
use crate::web::platform::kept::{self, KeepError, KeptFile};
use crate::web::platform::scope::{cross_origin_isolated, user_agent};
use crate::web::platform::timers::sleep_ms;
use crate::web::run::host::Measurement;
use crate::web::state::library::Library;

/// How often a checkpoint is saved at most: a person loses at most this much of a run.
const CHECKPOINT_EVERY_MS: f64 = 5_000.0;

/// The share of the page's time checkpoints may take: a checkpoint that took 40 ms waits at
/// least 40 × this long before the next (large runs are saved less often).
const CHECKPOINT_SPACING: f64 = 20.0;

/// How often the loop looks whether the run has ended.
const TICK_MS: f64 = 250.0;

/// The checkpoints of one run in progress.
pub struct Checkpoints {
    live: Rc<Measurement>,
    plan: RunPlan,
    clock: Clock,
    library: Library,
    /// The key the checkpoint is kept under, once one is.
    key: Rc<Cell<Option<f64>>>,
    /// The `client` block of every checkpoint (made once: measuring the timer takes a moment).
    client: RefCell<Option<ClientBlock>>,
    stop: Rc<Cell<bool>>,
    stopped: RefCell<Option<oneshot::Receiver<()>>>,
}

impl Checkpoints {
    /// Starts saving checkpoints of `live` (a run of `plan`), when it measures in the worker.
    pub fn start(
        live: Rc<Measurement>,
        plan: &RunPlan,
        clock: Clock,
        library: Library,
    ) -> Option<Rc<Self>> {
        if plan.config().client.measurement != MeasurementThread::Worker {
            return None;
        }
        let (done, stopped) = oneshot::channel();
        let checkpoints = Rc::new(Self {
            live,
            plan: plan.clone(),
            clock,
            library,
            key: Rc::new(Cell::new(None)),
            client: RefCell::new(None),
            stop: Rc::new(Cell::new(false)),
            stopped: RefCell::new(Some(stopped)),
        });
        spawn_local(checkpoints.clone().save_while_running(done));
        Some(checkpoints)
    }

    async fn save_while_running(self: Rc<Self>, done: oneshot::Sender<()>) {
        let mut saved_count = 0;
        let mut wait_ms = CHECKPOINT_EVERY_MS;
        let mut waited_ms = 0.0;
        while !self.stop.get() {
            sleep_ms(TICK_MS).await;
            waited_ms += TICK_MS;
            if self.stop.get() || waited_ms < wait_ms {
                continue;
            }
            waited_ms = 0.0;
            let count = self.live.finished_count();
            if count == saved_count {
                continue;
            }
            let began_ms = self.clock.now_ms();
            match self.build(None) {
                Ok((name, text)) => match self.store(&name, &text).await {
                    Ok(()) => saved_count = count,
                    Err(error) => {
                        // A full storage stays full: say so once, and save no more of this run.
                        self.library.set_note(Some(error.to_string()));
                        break;
                    }
                },
                // Nothing to save yet (the warm-up): try again next time.
                Err(CheckpointError::NothingYet) => {}
                // The run's own artifact is built from the same rows when it ends; until then
                // no checkpoint can be kept, and the library says so.
                Err(error @ CheckpointError::Artifact(_)) => {
                    self.library.set_note(Some(format!(
                        "This run is not being checkpointed ({error}); its results are kept \
                         when it ends."
                    )));
                    break;
                }
            }
            let took_ms = self.clock.now_ms() - began_ms;
            wait_ms = CHECKPOINT_EVERY_MS.max(took_ms * CHECKPOINT_SPACING);
        }
        // A receiver gone means nobody waits for the end: nothing to tell.
        done.send(()).unwrap_or_default();
    }

    /// The run so far as an artifact: its file name and text, or why there is none (nothing
    /// has ended yet, or it cannot be written as text).
    fn build(&self, run_failed: Option<String>) -> Result<(String, String), CheckpointError> {
        let artifact = self
            .live
            .checkpoint(&self.plan, self.client_block(), run_failed)?;
        let text = artifact
            .to_json_text()
            .map_err(|error| CheckpointError::Artifact(error.to_string()))?;
        Ok((artifact.file_name(), text))
    }

    /// Keeps `text` under the checkpoint's key (anew the first time).
    async fn store(&self, name: &str, text: &str) -> Result<(), KeepError> {
        let files: Vec<KeptFile> = vec![(name.to_owned(), text.as_bytes().to_vec())];
        match self.key.get() {
            Some(key) => kept::replace(key, &files).await,
            None => {
                self.key.set(Some(kept::keep(&files).await?));
                Ok(())
            }
        }
    }

    fn client_block(&self) -> ClientBlock {
        self.client
            .borrow_mut()
            .get_or_insert_with(|| {
                let config = self.plan.config();
                ClientBlock::strobe(
                    user_agent(),
                    cross_origin_isolated(),
                    self.clock.measure_resolution_ms(),
                    // The transport is read from the browser's Resource Timing after the run:
                    // a checkpoint does not know it.
                    ClientTransport {
                        http_protocols_seen: Vec::new(),
                        connection_limit_suspected: false,
                        endpoints: Some(self.plan.endpoint_count() as u64),
                        max_in_flight_per_origin: None,
                    },
                    ClientSseCounts::default(),
                )
                .with_measurement_thread(MeasurementThread::Worker)
                .with_live_view(config.client.live_view)
                .with_context_calibration(self.plan.calibration().cloned())
            })
            .clone()
    }

    /// Stops saving and waits for a save in flight to end: the key the checkpoint is kept
    /// under, for the run's own artifact to take its place.
    async fn stop(&self) -> Option<f64> {
        self.stop.set(true);
        let stopped = self.stopped.borrow_mut().take();
        if let Some(stopped) = stopped {
            // The loop answers as it ends; a dropped sender means it has ended too.
            stopped.await.unwrap_or_default();
        }
        self.key.get()
    }

    /// The run ended with its artifact: the key its artifact takes the place of.
    pub async fn ended(&self) -> Option<f64> {
        self.stop().await
    }

    /// The run failed with `reason`: a last checkpoint saying so joins the library (when any
    /// request had ended), kept in the place of the last, so nothing measured is lost.
    pub async fn failed(&self, reason: String) {
        self.stop().await;
        let (name, text) = match self.build(Some(reason)) {
            Ok(file) => file,
            // Nothing had ended: the run's failure, shown above the results, is all there is.
            Err(CheckpointError::NothingYet) => return,
            Err(error @ CheckpointError::Artifact(_)) => {
                self.library.set_note(Some(format!(
                    "The failed run's requests could not be kept ({error})."
                )));
                return;
            }
        };
        let id = self.library.add(OpenedArtifact::from_text(&name, &text));
        match self.store(&name, &text).await {
            Ok(()) => {
                if let Some(key) = self.key.get() {
                    self.library.set_kept(&[id], key);
                }
            }
            Err(error) => self.library.set_note(Some(error.to_string())),
        }
    }
}
