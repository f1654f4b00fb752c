// The library's files kept in the browser's IndexedDB, so they are there after a reload or a
// browser restart (docs/guide/results.md, "The library keeps what it holds"). One database
// `strobe`, one object store `library`: each record is one batch of files as they were loaded (a
// run's artifact, or the files dropped together), `{ files: [{ name, bytes }], saved_unix_ms }`,
// under a key the database numbers. The files are read again by the same code that read them first,
// so a kept run shows the numbers it showed. Never the API key: nothing here is given one.
//
// Every function answers a promise; a failure rejects with `{ kind, message }`, `kind` one of
// `unavailable` (no IndexedDB: a private window, a blocked storage), `quota` (the browser's
// storage for this page is full) or `failed`.

const DB_NAME = 'strobe';
const DB_VERSION = 1;
const STORE = 'library';

let opened = null;

function failure(kind, error) {
  const message = error && error.message ? error.message : String(error ?? 'unknown error');
  return { kind, message };
}

function kindOf(error) {
  return error && error.name === 'QuotaExceededError' ? 'quota' : 'failed';
}

function openDb() {
  if (opened) return opened;
  opened = new Promise((resolve, reject) => {
    if (typeof indexedDB === 'undefined' || indexedDB === null) {
      reject(failure('unavailable', 'this browser gives the page no IndexedDB'));
      return;
    }
    let request;
    try {
      request = indexedDB.open(DB_NAME, DB_VERSION);
    } catch (error) {
      reject(failure('unavailable', error));
      return;
    }
    request.onupgradeneeded = () => {
      const db = request.result;
      if (!db.objectStoreNames.contains(STORE)) db.createObjectStore(STORE, { autoIncrement: true });
    };
    request.onsuccess = () => {
      const db = request.result;
      // Another tab deleting or upgrading the library: let it, and open anew next time.
      db.onversionchange = () => {
        db.close();
        opened = null;
      };
      resolve(db);
    };
    request.onerror = () => reject(failure('unavailable', request.error));
    request.onblocked = () => reject(failure('unavailable', 'another tab of strobe holds an older library open: close it'));
  });
  // A failed open may succeed later (another tab closed): try again next time.
  opened.catch(() => {
    opened = null;
  });
  return opened;
}

/** Runs `body(store)` in one transaction; resolves with what its last request gave. */
async function inStore(mode, body) {
  const db = await openDb();
  return new Promise((resolve, reject) => {
    let result;
    let transaction;
    try {
      transaction = db.transaction(STORE, mode);
      const request = body(transaction.objectStore(STORE));
      if (request) request.onsuccess = () => (result = request.result);
    } catch (error) {
      reject(failure(kindOf(error), error));
      return;
    }
    transaction.oncomplete = () => resolve(result);
    transaction.onerror = () => reject(failure(kindOf(transaction.error), transaction.error));
    transaction.onabort = () => reject(failure(kindOf(transaction.error), transaction.error ?? 'the write was aborted'));
  });
}

/** Keeps a batch of files (`names[i]`, `bytes[i]`: a Uint8Array); resolves with its key. */
export function storePut(names, bytes) {
  const files = names.map((name, i) => ({ name, bytes: bytes[i] }));
  return inStore('readwrite', (store) => store.add({ files, saved_unix_ms: Date.now() }));
}

/** Replaces the batch kept under `key`. */
export function storeReplace(key, names, bytes) {
  const files = names.map((name, i) => ({ name, bytes: bytes[i] }));
  return inStore('readwrite', (store) => store.put({ files, saved_unix_ms: Date.now() }, key));
}

/** Every kept batch in the order kept: `[{ key, names, bytes }]`. */
export async function storeAll() {
  const records = [];
  await inStore('readonly', (store) => {
    const cursor = store.openCursor();
    cursor.onsuccess = () => {
      const at = cursor.result;
      if (!at) return;
      const files = Array.isArray(at.value?.files) ? at.value.files : [];
      records.push({
        key: at.key,
        names: files.map((file) => String(file?.name ?? '')),
        bytes: files.map((file) => (file?.bytes instanceof Uint8Array ? file.bytes : new Uint8Array())),
      });
      at.continue();
    };
    return null;
  });
  return records;
}

/** Forgets the batch kept under `key`. */
export function storeDelete(key) {
  return inStore('readwrite', (store) => store.delete(key));
}

/** Forgets every kept batch. */
export function storeClear() {
  return inStore('readwrite', (store) => store.clear());
}
