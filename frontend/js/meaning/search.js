// Search by meaning and by example, the page's part of it (docs/SEARCH_BY_MEANING.md). A
// phrase is embedded on the server by the model that made the vectors (GET
// /api/search/meaning, with the shown projection's job once it is done, for each phrase's
// marker); "More like these" asks the neighbours of the selection's centroid (POST
// /api/neighbors with its rows; the browser's own kernel for uploaded data), with no model.
// Either answer is listed with its similarities and highlighted as the selection (the page's
// Marks), when the user asked (a state restored from a link or bookmark keeps its own
// selection). While the model loads the server answers 503 with its job: its progress is
// followed and the phrases asked again once it is ready. One part of the App (app.js): its
// fields are declared here and it writes no other's, nor the state but through app.update.

import { PALETTE, rgbToCss } from '../colors.js';
import { debounce } from '../dom.js';
import { exampleNeighbors, neighborLimit } from '../kernels.js';
import { clampToLimit, limitFor } from '../limits.js';

/** How often a loading model's job is asked for its progress (ms). */
const FOLLOW_MS = 1000;
/** Distinct colours of phrases (the palette's first ten are far apart). */
const PHRASE_COLOURS = 10;

/** @typedef {{ index: number, similarity: number | null, distance: number }} Found */
/**
 * One phrase's answer, or the examples' ("More like these": no marker).
 * @typedef {{ text: string, color: string, marker: number[] | null, neighbors: Found[] }} Group
 */
/**
 * @typedef {object} Answer  the phrases' answer, or the examples'
 * @property {Group[]} groups
 * @property {string | null} job  the projection its markers are placed on
 * @property {string} note  what answered: the model, the index, the server's time
 */

/** The colour of the i-th phrase (CSS). */
export function phraseColor(i) {
  return rgbToCss(PALETTE[i % PHRASE_COLOURS]);
}

/** The phrases the state searches: the kept ones, then the one being typed; blank and repeated ones left out. */
export function phrasesOf(meaning) {
  return [...new Set([...meaning.phrases, meaning.query].map((t) => t.trim()).filter(Boolean))];
}

/** At most `most` of `rows`, evenly spaced (all of them when they fit). */
export function evenSample(rows, most) {
  if (rows.length <= most) return rows.slice();
  return Array.from({ length: most }, (_, i) => rows[Math.floor((i * rows.length) / most)]);
}

export class MeaningSearch {
  /** @param {import('../app.js').App} app */
  constructor(app) {
    this.app = app;
    /** @type {Answer | null} the phrases' answer, listed and drawn */
    this.answer = null;
    /** @type {Answer | null} the last "More like these", listed above them */
    this.examples = null;
    /** @type {string | null} why the last question got no answer */
    this.error = null;
    /** @type {{ job: string | null, progress: number } | null} the model (or tensor) the server still loads */
    this.loading = null;
    /** @type {string | null} the phrase question asked last (run, embedding, phrases, k, job) */
    this.asked = null;
    /** The latest question: an older answer is dropped. */
    this.token = 0;
    /** The next answer selects its points (the user asked, not a restored link). */
    this.selectNext = false;
    /** @type {Array<{ serverMs: number | null, pageMs: number, phrases: number }>} answered phrase searches: the server's time and the page's to the highlight drawn (bench/) */
    this.timings = [];
    /** @type {import('../dataset.js').Dataset | null} the data set the answers are of */
    this.datasetSeen = null;
    this.askSoon = debounce(() => this.sync(), 200);
    /** @type {ReturnType<typeof setTimeout> | null} the next look at a loading model's job */
    this.following = null;
    Object.seal(this);
  }

  /** The model that made the shown embedding's vectors, as /api/runs listed it (null: none). */
  model() {
    const ds = this.app.dataset;
    return ds && !ds.local ? ds.info?.model ?? null : null;
  }

  /** The job whose map the markers go on: the shown projection's, once done. */
  job() {
    const p = this.app.shown;
    return p && p.status === 'done' && p.jobId ? p.jobId : null;
  }

  /** The phrases searched now (none unless meaning mode is on and there is a model). */
  phrases() {
    const { meaning } = this.app.state;
    return meaning.on && this.model() && !this.app.api.isStatic ? phrasesOf(meaning) : [];
  }

  /** Markers to draw: the answer's, when it was placed on the projection shown. */
  markers() {
    const answer = this.answer;
    if (!answer || !answer.job || answer.job !== this.job()) return [];
    return answer.groups.filter((g) => g.marker).map((g) => ({ text: g.text, color: g.color, coords: g.marker }));
  }

  /** The state or the shown projection changed: the phrases are asked again if their question did. */
  changed() {
    const ds = this.app.dataset;
    if (ds !== this.datasetSeen) {
      this.datasetSeen = ds;
      this.clear();
    }
    if (this.question() !== this.asked) this.askSoon();
  }

  /** What the state asks now, as a key (null: nothing). */
  question() {
    const ds = this.app.dataset;
    const phrases = this.phrases();
    if (!ds || !phrases.length) return null;
    return JSON.stringify([ds.run, ds.name, phrases, this.k(), this.job()]);
  }

  /** Points per phrase: the state's, within the data's limit. */
  k() {
    const ds = this.app.dataset;
    const limit = ds?.local ? neighborLimit(ds.n) : limitFor(ds, 'neighbors', 'k');
    return clampToLimit(this.app.state.meaning.k, limit);
  }

  /** Forgets every answer (another data set). */
  clear() {
    this.token += 1;
    this.answer = null;
    this.examples = null;
    this.error = null;
    this.loading = null;
    this.asked = null;
    if (this.following) clearTimeout(this.following);
    this.following = null;
    this.app.plot.requestRender();
  }

  /** Asks the phrases the state holds, unless that question was asked last. */
  async sync() {
    const question = this.question();
    if (question === this.asked) return;
    this.asked = question;
    const select = this.selectNext;
    this.selectNext = false;
    if (question === null) {
      this.answer = null;
      this.error = null;
      this.loading = null;
      this.token += 1;
      this.app.plot.requestRender();
      this.app.render();
      return;
    }
    const { dataset: ds, api } = this.app;
    const phrases = this.phrases();
    const job = this.job();
    const token = ++this.token;
    const started = performance.now();
    try {
      const found = await api.searchMeaning(ds.run, ds.name, phrases, this.k(), job);
      if (token !== this.token) return;
      this.loading = null;
      this.error = null;
      const timing = found.timing_ms ?? {};
      this.answer = {
        job: found.job,
        note: `${found.model} · ${found.index} index · ${timing.total ?? '–'} ms at the server`,
        groups: found.results.map((r, i) => ({
          text: r.text,
          color: phraseColor(i),
          marker: r.marker,
          neighbors: r.neighbors.map((n) => ({ index: n.index, similarity: n.similarity, distance: 1 - n.similarity })),
        })),
      };
      this.show(select, this.answer);
      await drawn();
      if (token === this.token) this.timings.push({ serverMs: timing.total ?? null, pageMs: performance.now() - started, phrases: phrases.length });
    } catch (err) {
      if (token !== this.token) return;
      if (err.status === 503) {
        // The model (or the tensor) still loads: its progress is followed, then asked again.
        this.loading = { job: err.body?.job ?? null, progress: err.body?.progress?.fraction ?? 0 };
        this.error = null;
        this.follow(token, select);
      } else {
        this.loading = null;
        this.error = err.message;
        this.answer = null;
      }
      this.app.plot.requestRender();
      this.app.render();
    }
  }

  /** Follows the loading job's progress, then asks the question again. */
  follow(token, select) {
    if (this.following) clearTimeout(this.following);
    this.following = setTimeout(async () => {
      this.following = null;
      if (token !== this.token || !this.loading) return;
      const id = this.loading.job;
      let status = null;
      try {
        status = id ? await this.app.api.job(id) : null;
      } catch {
        status = null; // asked again below
      }
      if (token !== this.token) return;
      if (status && (status.status === 'queued' || status.status === 'running')) {
        this.loading = { job: id, progress: status.progress ?? 0 };
        this.app.render();
        this.follow(token, select);
        return;
      }
      this.asked = null; // ready (or failed: the question then says why)
      this.selectNext = select;
      this.sync();
    }, FOLLOW_MS);
  }

  /** "More like these": the neighbours of the selection's centroid, the selection kept and they added to it. */
  async moreLikeThese() {
    const { dataset: ds, state, api } = this.app;
    const selected = state.selection;
    if (!ds || !selected.length) return;
    const rowsLimit = ds.local ? null : limitFor(ds, 'neighbors', 'rows');
    const examples = evenSample(selected, rowsLimit?.maximum ?? selected.length);
    const k = Math.min(this.k(), ds.n - new Set(examples).size);
    const { metric } = state.neighbors;
    const count = this.app.highlight.selectedCount();
    try {
      if (k < 1) throw new Error('every point is selected: there are none left to find');
      const list = ds.local ? exampleNeighbors(ds.vectors, ds.n, ds.d, examples, k, metric) : (await api.neighborsOfRows(ds.run, ds.name, examples, k, metric)).neighbors;
      if (this.app.dataset !== ds || this.app.state.selection !== selected) return; // moved on meanwhile
      const sampled = examples.length < count ? ` (their centroid from ${examples.length.toLocaleString('en-US')} of them)` : '';
      const via = api.isStatic ? ' · from the exported neighbour lists' : '';
      this.examples = {
        job: null,
        note: `${metric} · nearest to the centroid${via}`,
        groups: [{
          text: `Like the ${count.toLocaleString('en-US')} selected${sampled}`,
          color: 'var(--accent)',
          marker: null,
          neighbors: list.map((n) => ({ index: n.index, similarity: metric === 'cosine' ? 1 - n.distance : null, distance: n.distance })),
        }],
      };
      this.show(true, this.examples, selected);
    } catch (err) {
      if (this.app.dataset !== ds) return;
      this.examples = { job: null, note: `More like these: ${err.message}`, groups: [] };
      this.app.render();
    }
  }

  /** An answer listed, drawn, and (when asked) selected: its points, after `keep`. */
  show(select, answer, keep = []) {
    this.app.plot.requestRender();
    if (!select) {
      this.app.render();
      return;
    }
    const rows = new Set(keep);
    for (const group of answer.groups) for (const n of group.neighbors) rows.add(n.index);
    this.app.update({ selection: [...rows], focus: null });
  }

  /** Drops the "More like these" list (its selection stays). */
  dismiss() {
    this.examples = null;
    this.app.render();
  }
}

/** Resolves once the frame after the next is drawn (the highlight is on screen). */
function drawn() {
  return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve())));
}
