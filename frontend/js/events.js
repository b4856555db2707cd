// The page's one follower of the server's event stream (GET /api/events: server-sent events,
// server/routes/events.py): every feature that wants to hear what changes on the server
// (runs, embeddings and training steps, annotations, ...) subscribes here by kind instead of
// opening a stream of its own or polling. One EventSource per page.
//
// Resuming is the browser's: a dropped stream is reopened by the EventSource itself after the
// server's `retry`, sending the last id it saw (`Last-Event-ID`), and the server sends what was
// missed, or a `reset` event when it no longer keeps it (another server, or too far behind). A
// stream the browser gave up on (closed: the server answered an error) is opened again here
// after a pause; a fresh EventSource cannot send the last id, so its subscribers hear a
// `reset` first: read the state again. A `reset` handler re-reads what it keeps once.

/** How long a stream the browser closed waits before it is opened again (ms). */
const REOPEN_MS = 2000;

/**
 * What a subscriber hears: the event's parsed data (its `action`, its kind's fields, `time`),
 * and its id and kind.
 * @typedef {(data: any, meta: { id: string, kind: string }) => void} EventHandler
 */

/**
 * The smallest EventSource this needs (a test hands in its own).
 * @typedef {{ readyState: number, addEventListener: (kind: string, listener: (event: any) => void) => void,
 *   close: () => void, onerror: ((event: any) => void) | null }} EventStreamLike
 */

export class EventFeed {
  /**
   * @param {string} url  of GET /api/events
   * @param {{ open?: (url: string) => EventStreamLike, reopenMs?: number }} [options]
   */
  constructor(url, { open = (u) => new EventSource(u), reopenMs = REOPEN_MS } = {}) {
    this.url = url;
    this.open = open;
    this.reopenMs = reopenMs;
    /** @type {Map<string, Set<EventHandler>>} kind -> its subscribers */
    this.handlers = new Map();
    /** @type {EventStreamLike | null} */
    this.source = null;
    /** @type {string | null} the last event id heard */
    this.lastId = null;
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.reopening = null;
    let opened = () => {};
    /** @type {Promise<void>} the server has this page's stream (its `open` message came) */
    this.opened = new Promise((resolve) => {
      opened = resolve;
    });
    /** @type {() => void} settles `opened` */
    this.markOpen = opened;
    this.closed = false;
    Object.seal(this);
  }

  /**
   * Calls `handler` for every event of `kind` from now on (the stream opens with the first
   * subscription); returns the function that stops it.
   * @param {string} kind  'run' | 'embedding' | 'step' | 'reset' | ...
   * @param {EventHandler} handler
   */
  subscribe(kind, handler) {
    let set = this.handlers.get(kind);
    if (!set) {
      set = new Set();
      this.handlers.set(kind, set);
      this.source?.addEventListener(kind, (event) => this._heard(kind, event));
    }
    set.add(handler);
    this._connect();
    return () => set.delete(handler);
  }

  /**
   * Resolves once the server holds this page's stream: an event published from then on
   * reaches the page, so a state read after this misses nothing (resolves at once for a
   * stream already open).
   */
  ready() {
    this._connect();
    return this.opened;
  }

  /** Stops following (the page goes away, or a test ends). */
  close() {
    this.closed = true;
    if (this.reopening) clearTimeout(this.reopening);
    this.source?.close();
    this.source = null;
  }

  _connect() {
    if (this.source || this.closed) return;
    const source = this.open(this.url);
    this.source = source;
    for (const kind of this.handlers.keys()) source.addEventListener(kind, (event) => this._heard(kind, event));
    // The server's first message (the browser's own `open` event, without data, shares its name).
    source.addEventListener('open', (event) => {
      if (typeof event.data === 'string') this.markOpen();
    });
    source.onerror = () => {
      // CONNECTING (0): the browser reconnects by itself, with Last-Event-ID. CLOSED (2): it gave up.
      if (source.readyState !== 2 || this.source !== source) return;
      this.source = null;
      this.reopening = setTimeout(() => {
        this.reopening = null;
        this._connect();
        this._dispatch('reset', { action: 'reset', reason: 'the event stream was opened again' }, this.lastId ?? '');
      }, this.reopenMs);
    };
  }

  _heard(kind, event) {
    if (event.lastEventId) this.lastId = event.lastEventId;
    let data;
    try {
      data = JSON.parse(event.data);
    } catch {
      return; // not one of the server's messages
    }
    this._dispatch(kind, data, event.lastEventId ?? '');
  }

  _dispatch(kind, data, id) {
    for (const handler of [...(this.handlers.get(kind) ?? [])]) {
      try {
        handler(data, { id, kind });
      } catch (err) {
        console.error(`event ${kind}:`, err); // one subscriber's failure stops no other
      }
    }
  }
}
