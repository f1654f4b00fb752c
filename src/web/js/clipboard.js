// Copying a link to the clipboard (docs/guide/results.md, "A link to a run"). The browser may
// refuse: no permission, a page that is not a secure context, a document without focus. A refusal
// is an answer, not an error: the promise resolves with `{ kind: 'copied' }` or
// `{ kind: 'refused', message }` and never rejects, and the page then shows the link in a
// field to copy by hand.

export async function copyText(text) {
  const clipboard = globalThis.navigator?.clipboard;
  if (!clipboard || typeof clipboard.writeText !== 'function') {
    return { kind: 'refused', message: 'this browser gives the page no clipboard' };
  }
  try {
    await clipboard.writeText(text);
    return { kind: 'copied' };
  } catch (error) {
    const message = error && error.message ? error.message : String(error ?? 'refused');
    return { kind: 'refused', message };
  }
}
