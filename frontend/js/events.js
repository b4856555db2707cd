// The server's one stream of what changes (GET /api/events, server-sent events): the page
// follows it once and hands each event to the parts that asked for its kind, so an edit made
// in another tab, by another user, a notebook or an assistant shows here without a reload.
// The browser's EventSource reconnects by itself and resumes after the last event seen; a
// `reset` event (events lost meanwhile) tells every follower to read its state again.

/** @typedef {(data: any) => void} EventHandler  an event's data (its JSON: action, fields, time) */

export class ServerEvents {
  /** @param {import('./api.js').Api} api */
  constructor(api) {
    this.api = api;
    /** @type {Map<string, Set<EventHandler>>} handlers by event kind */
    this.handlers = new Map();
    /** @type {EventSource | null} */
    this.source = null;
    /** Whether the stream is open now (false while the browser reconnects). */
    this.open = false;
  }

  /**
   * Calls `handler` with each event of `kind` from now on (`reset`: events were lost; read
   * the state again). Starts following the stream on the first call. Returns the unsubscribe.
   * @param {string} kind
   * @param {EventHandler} handler
   */
  on(kind, handler) {
    if (!this.handlers.has(kind)) {
      this.handlers.set(kind, new Set());
      this.source?.addEventListener(kind, (event) => this._dispatch(kind, event));
    }
    this.handlers.get(kind).add(handler);
    this._follow();
    return () => this.handlers.get(kind)?.delete(handler);
  }

  _follow() {
    if (this.source || typeof EventSource === 'undefined' || this.api.isStatic) return;
    const source = new EventSource(this.api.url('events'));
    this.source = source;
    source.addEventListener('open', () => {
      this.open = true;
    });
    source.addEventListener('error', () => {
      this.open = false; // the browser tries again, and resumes after the last id it saw
    });
    for (const kind of this.handlers.keys()) source.addEventListener(kind, (event) => this._dispatch(kind, event));
  }

  /** @param {string} kind @param {Event} event */
  _dispatch(kind, event) {
    let data;
    try {
      data = JSON.parse(/** @type {MessageEvent} */ (event).data);
    } catch {
      return; // not ours to read
    }
    for (const handler of this.handlers.get(kind) ?? []) handler(data);
  }

  close() {
    this.source?.close();
    this.source = null;
    this.open = false;
  }
}

/** The tag of an embedding name: "enc" for a training step "enc:00010" (data/steps.py's rule),
 * the name itself otherwise: every step of a tag shows the same labels and bookmarks. */
export function tagOf(name) {
  const match = /^(.*):(\d+)$/.exec(name ?? '');
  return match ? match[1] : name;
}
