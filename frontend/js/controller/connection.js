// Whether the server can be reached, a part of the App (app.js). A stopped server is not a
// user's action: the page says "server unreachable" (not "Cancelled", not "Failed to fetch"),
// and carries on by itself once it is back. Two signals tell it: the event stream
// (GET /api/events, followed with an EventSource that reconnects by itself), and any request
// that found no server (api.js Unreachable); each is checked with GET /api/health, asked
// again with a growing pause until the server answers.

import { Unreachable } from '../api.js';

/** Pauses between health probes while the server is away (ms): quick at first, then calmer. */
const PROBE_MS = [500, 1000, 2000, 4000, 8000];

export class Connection {
  /** @param {import('../app.js').App} app */
  constructor(app) {
    this.app = app;
    /** @type {boolean} the server answered last time it was asked */
    this.reachable = true;
    /** @type {EventSource | null} the event stream followed (none on a shared static site) */
    this.events = null;
    /** @type {Array<() => void>} who waits for the server to be back */
    this.waiters = [];
    /** @type {boolean} a probe loop runs */
    this.probing = false;
    /** @type {Array<() => void>} what runs each time the server is back (after an outage) */
    this.onBack = [];
    Object.seal(this);
  }

  /** Follows the server's event stream: its drops and reconnects say when the server goes and comes. */
  follow() {
    if (this.app.api.isStatic || typeof EventSource === 'undefined') return;
    this.app.api.onUnreachable = () => this.lost();
    const events = new EventSource(this.app.api.url('events'));
    events.addEventListener('open', () => this._back());
    events.addEventListener('error', () => {
      // A dropped stream reconnects by itself (its `retry`); one refused for good is opened again.
      if (events.readyState === EventSource.CLOSED && this.events === events) setTimeout(() => this.follow(), PROBE_MS[1]);
      this.check();
    });
    this.events?.close();
    this.events = events;
  }

  /**
   * Whether the server answers now (GET /api/health); a miss makes the page unreachable
   * until it answers again.
   */
  async check() {
    try {
      await this.app.api.health();
      this._back();
      return true;
    } catch (err) {
      if (!(err instanceof Unreachable)) return true; // it answered, with an error
      this.lost();
      return false;
    }
  }

  /** A request found no server: said at once, and asked again until it answers. */
  lost() {
    if (this.reachable) {
      this.reachable = false;
      this.app.setMessage('Server unreachable: the page goes on by itself once it is back (trying again every few seconds)', true, { holds: () => !this.reachable });
      this.app.render();
    }
    if (!this.probing) this._probe();
  }

  /** Resolves once the server answers (at once when it does now). */
  whenBack() {
    return this.reachable ? Promise.resolve() : new Promise((resolve) => this.waiters.push(() => resolve(undefined)));
  }

  async _probe() {
    this.probing = true;
    for (let i = 0; !this.reachable; i++) {
      await new Promise((resolve) => setTimeout(resolve, PROBE_MS[Math.min(i, PROBE_MS.length - 1)]));
      if (this.reachable) break;
      try {
        await this.app.api.health();
        this._back();
      } catch {
        // still away: the next pause is longer
      }
    }
    this.probing = false;
  }

  _back() {
    if (this.reachable) return;
    this.reachable = true;
    this.app.setMessage('Server back: carrying on');
    for (const resolve of this.waiters.splice(0)) resolve();
    for (const then of this.onBack) then();
    this.app.render();
  }
}
