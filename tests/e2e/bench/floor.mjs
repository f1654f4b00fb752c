// The floor of the fidelity benchmark: what any browser client could do, in plain JavaScript.
// Its function is serialized into the page (or a worker), so it uses nothing from outside
// its own body.

/**
 * The floor: a minimal streaming client in plain JavaScript, run in the page's main thread.
 * fetch() with a streaming body reader, one performance.now() per read, a line-level SSE parse.
 * Slot k sends to endpoint k mod n, like strobe. Returns one entry per request.
 *
 * With `synthetic` (a list of texts, each one read's bytes), nothing is sent: every request is answered in the
 * browser by a stream of those chunks, one per read, and there is no warm-up. The read-path
 * benchmark (read-path.mjs) times the floor's reading that way.
 */
export async function floorClient({ urls, requests, concurrency, maxTokens, words, contextChars, tag, synthetic }) {
  // Prompts exactly as long as strobe's (`contextChars` characters, its instruction included:
  // strobe's prompt is three characters per planned token), so the server's prefill takes as
  // long for both and their streams line up alike. With the filler alone that long and the
  // instruction after it, the floor's prompts were 3,175 characters to strobe's 3,072 (c = 64:
  // 1,008 prompt tokens to 976, a prefill of 10.08 ms to 9.76 on the serial prefill lane), which
  // shifted every stream's token times against the others' differently for the two clients:
  // strobe's first-wave E2E median error read 0.38–0.60 ms to the floor's 0.33–0.45 in the
  // probes of 2026-11-30 (same rounds), and 0.44 to 0.45 once the prompts were equal.
  const filler = 'lorem ipsum dolor sit amet consectetur '.repeat(Math.ceil(contextChars / 39) + 1);
  const prompt = (tail) => `${filler.slice(0, Math.max(0, contextChars - tail.length - 1))}\n${tail}`;
  const body = (max, content) => JSON.stringify({
    model: 'strobe-sim-1',
    messages: [{ role: 'user', content }],
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: max,
    temperature: 0,
    chat_template_kwargs: { enable_thinking: true },
  });
  const headers = { 'Content-Type': 'application/json', Accept: 'text/event-stream' };
  const slotsOf = (endpoint) => Math.floor(concurrency / urls.length) + (endpoint < concurrency % urls.length ? 1 : 0);
  // Warm-up as strobe does it: a priming round of two per connection each endpoint's slots
  // use (max_tokens 1), then one check round of one per connection (max_tokens 8), each all at
  // once and read to the end (strobe also reads the check round's Resource Timing and repeats
  // it while a connection was still opening; against strobe-sim one round is enough).
  const round = (perConnection, maxTokens) => Promise.all(urls.flatMap((url, endpoint) => Array.from(
    { length: perConnection * Math.min(slotsOf(endpoint), 6) },
    () => fetch(url, { method: 'POST', headers, body: body(maxTokens, 'Reply with one word.') }).then((r) => r.text()),
  )));
  const chunks = synthetic?.map((text) => new TextEncoder().encode(text));
  const send = chunks
    ? () => Promise.resolve(new Response(new ReadableStream({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    })))
    : (url, init) => fetch(url, init);
  if (!synthetic) {
    await round(2, 1);
    await round(1, 8);
  }

  const decoder = () => new TextDecoder();
  const rows = [];
  let next = 0;
  async function one(url, index) {
    const marker = `FLOOR_${tag}_${String(index).padStart(5, '0')}`;
    const text = body(maxTokens,
      prompt(`Begin with the exact marker ${marker} then emit exactly ${words} repetitions of the lowercase word code.`));
    const utf8 = decoder();
    const startedUnixMs = performance.timeOrigin + performance.now();
    const t0 = performance.now();
    const response = await send(url, { method: 'POST', headers, body: text });
    const reader = response.body.getReader();
    let buffer = '';
    let firstOutput = null;
    let firstContent = null;
    let end = null;
    for (;;) {
      const { done, value } = await reader.read();
      const now = performance.now();
      if (done) {
        end ??= now;
        break;
      }
      buffer += utf8.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        for (const line of event.split('\n')) {
          if (!line.startsWith('data:')) continue;
          const payload = line.slice(5).trim();
          if (payload === '[DONE]') {
            end ??= now;
            continue;
          }
          const delta = JSON.parse(payload).choices?.[0]?.delta;
          if (delta?.reasoning_content || delta?.reasoning) firstOutput ??= now;
          if (delta?.content) {
            firstOutput ??= now;
            firstContent ??= now;
          }
        }
      }
    }
    rows.push({ marker, started_unix_ms: startedUnixMs, ttfo: firstOutput - t0, ttft: firstContent - t0, e2e: end - t0 });
  }
  async function slot(k) {
    const url = urls[k % urls.length];
    while (next < requests) {
      const index = next;
      next += 1;
      await one(url, index);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, (_, k) => slot(k)));
  return rows;
}
