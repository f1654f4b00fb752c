// Holding strobe's clock readings against strobe-sim's truth log: the end-to-end tests and the
// benchmarks join each row to the simulator's record of the same request (by canary marker) and
// take client − server for each moment. Both clocks are this machine's wall clock, so an error
// is measurement error plus loopback delivery plus any time either process sat descheduled.

/**
 * The end-to-end tests' truth run: 24 requests at concurrency 4 with canaries, on one origin.
 * run.test.mjs checks its artifact and rows; timing-truth.test.mjs its moments.
 */
export const TRUTH_RUN_SETTINGS = {
  requests: '24',
  concurrency: '4',
  context_tokens: '2048',
  max_tokens: '64',
  request_canaries: 'true',
};

/** A truth-log stamp as Unix epoch ms (null when the moment did not happen). */
export function stampMs(stamp) {
  return stamp ? stamp.unix_ns / 1e6 : null;
}

/**
 * Client − server, in ms, of one request's three moments: `startUnixMs` is when the client
 * called fetch() (Unix ms), the durations are the client's TTFO, TTFT and E2E, and the server's
 * moments come from its truth record:
 *   ttfo → first_reasoning_byte_sent (else first_content_byte_sent)
 *   ttft → first_content_byte_sent
 *   e2e  → last_byte_sent
 */
export function momentErrors(startUnixMs, { ttfo, ttft, e2e }, record) {
  const { times } = record;
  return {
    ttfo: startUnixMs + ttfo - stampMs(times.first_reasoning_byte_sent ?? times.first_content_byte_sent),
    ttft: startUnixMs + ttft - stampMs(times.first_content_byte_sent),
    e2e: startUnixMs + e2e - stampMs(times.last_byte_sent),
  };
}

/**
 * The whole error of one request's durations against the server's own (docs/develop/accuracy.md,
 * *Duration error*): the client's TTFO, TTFT and E2E minus the server's times from receiving the
 * request to its first reasoning (else content) byte, first content byte and last byte. It is the
 * sum of `upstream` (fetch() call → the server's receipt: time the server never saw) and the
 * moment error downstream ({@link momentErrors}). With `clientQueueMs` (the row's fetch() →
 * requestStart) the `*_wire` keys hold the same error of the times from the wire (measured −
 * client_queue_ms); they are null without it.
 */
export function durationErrors(startUnixMs, { ttfo, ttft, e2e }, record, clientQueueMs = null) {
  const { times } = record;
  const received = stampMs(times.received);
  const server = {
    ttfo: stampMs(times.first_reasoning_byte_sent ?? times.first_content_byte_sent) - received,
    ttft: stampMs(times.first_content_byte_sent) - received,
    e2e: stampMs(times.last_byte_sent) - received,
  };
  const wire = (client, serverMs) => (clientQueueMs == null ? null : client - clientQueueMs - serverMs);
  return {
    ttfo_whole: ttfo - server.ttfo,
    ttft_whole: ttft - server.ttft,
    e2e_whole: e2e - server.e2e,
    upstream: received - startUnixMs,
    ttfo_wire: wire(ttfo, server.ttfo),
    ttft_wire: wire(ttft, server.ttft),
    e2e_wire: wire(e2e, server.e2e),
    client_queue: clientQueueMs,
  };
}

/**
 * The errors of every row of a strobe artifact, joined to the truth log by canary marker:
 * `{ request_index, ttfo, ttft, e2e }` per row (moment errors), with its {@link durationErrors}. Throws when a row has no truth record.
 */
export function artifactErrors(artifact, records) {
  const byMarker = new Map(records.map((record) => [record.marker, record]));
  const runStartMs = artifact.started_at_unix_ns / 1e6;
  return artifact.request_timings.map((row) => {
    const record = byMarker.get(row.request_canary?.marker);
    if (!record) throw new Error(`row ${row.request_index} has no truth record (marker ${row.request_canary?.marker})`);
    const durations = { ttfo: row.time_to_first_output_ms, ttft: row.ttft_ms, e2e: row.e2e_ms };
    const startUnixMs = runStartMs + row.started_at_ms;
    return {
      request_index: row.request_index,
      ...momentErrors(startUnixMs, durations, record),
      ...durationErrors(startUnixMs, durations, record, row.client_queue_ms ?? null),
    };
  });
}

/**
 * The most requests the server itself was streaming at one moment (received → the start of its
 * last write: the earliest the client can have read the end, so a server descheduled after a
 * write cannot stretch one request into the next on the same slot).
 */
export function serverConcurrency(records) {
  const edges = [];
  for (const record of records) {
    const { received, last_write_started: lastWriteStarted } = record.times;
    if (!received || !lastWriteStarted) {
      throw new Error(`request ${record.request_id} was not received and streamed to its end`);
    }
    edges.push([received.unix_ns, 1], [lastWriteStarted.unix_ns, -1]);
  }
  // Ends before starts at the same nanosecond: touching intervals do not overlap.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, step] of edges) {
    open += step;
    most = Math.max(most, open);
  }
  return most;
}
