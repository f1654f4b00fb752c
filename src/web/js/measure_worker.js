// The measurement worker's bootstrap: the page starts a module worker from this file (its URL
// comes from `worker_script_url`), then posts `{glue, module}`: the URL of the app's JavaScript
// glue and the page's own compiled `WebAssembly.Module` (or, failing that, the wasm's URL).
// Sharing the page's module shares its compiled and optimized code, so the worker does not
// compile the app again while it measures. The app's `main` then sees no window, fetches the
// part of the split wasm that measures (or reads a workload), and serves measurements
// (docs/design/measurement.md, The measurement worker; docs/design/architecture.md, Parts of
// the wasm).
//
// The page's glue imports this module too (for `worker_script_url`), so nothing below runs
// outside a worker; in the worker, the glue's import of it is the same module instance.

/** The URL this module was loaded from: the script the page starts the worker with. */
export function worker_script_url() {
  return import.meta.url;
}

/** The `failed` message the page's worker host understands (see `core::live::FromMeasurement`). */
function failed(reason) {
  return JSON.stringify({ kind: 'failed', progress: {}, finished: [], reason });
}

const inWorker =
  typeof WorkerGlobalScope !== 'undefined' && globalThis instanceof WorkerGlobalScope;

// Evaluated once per worker: should the glue's import ever evaluate it again, the first
// message has been taken already and the app's own handler must not be replaced.
if (inWorker && !globalThis.strobeBootstrapStarted) {
  globalThis.strobeBootstrapStarted = true;
  self.onmessage = async (event) => {
    self.onmessage = null;
    const { glue, module, useMainThread } = event.data;
    let init;
    try {
      ({ default: init } = await import(glue));
    } catch (error) {
      // A rejected promise in a worker never reaches the page's `onerror`: say it in a message,
      // or the page would wait for `ready` until its start timeout.
      postMessage(failed(`the measurement worker failed: its code could not be loaded (${error}). ${useMainThread}`));
      return;
    }
    try {
      await init({ module_or_path: module });
    } catch (error) {
      postMessage(failed(`the measurement worker could not start strobe's code (${error}). ${useMainThread}`));
    }
  };
}
