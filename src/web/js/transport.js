// The fetch transport's JavaScript: one call sends a request, one function takes its response
// from the headers to the end of the body. Bound from Rust in `src/web/js/mod.rs`; why the
// send and the reads are JavaScript: docs/design/measurement.md (Sending, Reading).

/** What the per-read callback answers. `src/web/js/mod.rs` has the same numbers; a native
 * test (tests/architecture.rs) holds the two to each other. */
export const KEEP_READING = 0;
/** The stream has ended (`[DONE]`): read the rest of the body, calling into the module no more. */
export const READ_TO_THE_END = 1;
/** The stream failed: cancel the rest of the body. */
export const STOP_READING = 2;

/**
 * Reads the clock and calls `fetch(url, init)` at once. `cache: 'default'`: Chromium bypasses
 * its CORS preflight cache for `no-store`, `no-cache` and `reload`, so every request would pay
 * an OPTIONS round trip inside its TTFO. With `synthetic` events (a dry run's), nothing is
 * sent: the response streams them, one per read.
 * @returns {{sent: number, response: Promise<Response>}}
 */
export function send_chat(url, body, headers, signal, synthetic) {
  const init = { method: 'POST', headers, body, signal, mode: 'cors', cache: 'default' };
  const sent = performance.now();
  if (synthetic !== undefined) {
    const stream = new ReadableStream({
      start(controller) {
        for (const event of synthetic) controller.enqueue(event);
        controller.close();
      },
    });
    const headers = { 'content-type': 'text/event-stream' };
    return { sent, response: Promise.resolve(new Response(stream, { headers })) };
  }
  try {
    return { sent, response: fetch(url, init) };
  } catch (error) {
    return { sent, response: Promise.reject(error) };
  }
}

/**
 * Takes a response from its headers to the end of its body. Calls `onRead(null, now)` when the
 * headers arrive; then, for an event stream, `onRead(chunk, now)` for every read (`undefined`
 * once the body has ended), `now` being `performance.now()` taken the moment the read resolved,
 * while `onRead` answers KEEP_READING. On READ_TO_THE_END it reads the rest of the body without
 * calling into the module, for at most `graceMs`, so the browser can reuse the connection (a
 * body cancelled before its end closes it); on STOP_READING it cancels the body.
 * Resolves `{kind: 'read'}` when done with the stream, `{kind: 'not_a_stream', response}` for an
 * HTTP error, a JSON answer or a response without a body, `{kind: 'fetch_failed', error}` when
 * `fetch()` failed; rejects with a read's error before the stream ended.
 */
export async function pump_response(responsePromise, onRead, graceMs) {
  let response;
  try {
    response = await responsePromise;
  } catch (error) {
    return { kind: 'fetch_failed', error };
  }
  onRead(null, performance.now());
  const type = response.headers.get('content-type') ?? '';
  if (!response.ok || type.startsWith('application/json') || !response.body) {
    return { kind: 'not_a_stream', response };
  }
  const reader = response.body.getReader();
  let verdict;
  for (;;) {
    const read = await reader.read();
    const now = performance.now();
    if (read.done) {
      onRead(undefined, now);
      return { kind: 'read' };
    }
    verdict = onRead(read.value, now);
    if (verdict !== KEEP_READING) break;
  }
  if (verdict !== READ_TO_THE_END) {
    reader.cancel().catch(() => {});
    return { kind: 'read' };
  }
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(resolve, graceMs, null);
  });
  try {
    for (;;) {
      const read = await Promise.race([reader.read(), late]);
      if (read === null) {
        reader.cancel().catch(() => {});
        break;
      }
      if (read.done) break;
    }
  } catch {
    // The measurement has ended; a body that breaks after [DONE] only costs its connection.
  } finally {
    clearTimeout(timer);
  }
  return { kind: 'read' };
}
