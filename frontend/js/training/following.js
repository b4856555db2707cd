// Following a training run in the main page: the open embedding's steps (timeline.js), the
// step shown, Follow (each new step shown as the server tells of it, events.js), Play and the
// scrubber (walking the steps written), and each step's change since the one before
// (GET /api/compare, the Compare page's comparison) as the points' colours and the chart.
//
// A step is the same points with another tensor: the data set stays (DatasetLoading.openStep,
// so selection, search, colours, labels and camera stay), and the state's projection is
// computed again from the layout on screen (Projecting.showStep: t-SNE and UMAP start from
// it, PCA and custom are turned onto it) and glides there. Asking for a step cancels the
// projection of one asked before that is still running. The page holds the per-point change
// of the step shown only; of the others, their mean (the chart).

import { changeColors } from '../compare/linked.js';
import { ApiError } from '../api.js';
import { splitStep, stepTimeline, writtenRecently } from './timeline.js';

/** The neighbours compared per point, and how (GET /api/compare's defaults). */
const COMPARE = { k: 10, metric: 'cosine' };
/** How long Play holds each step once it is shown (ms). */
const PLAY_HOLD_MS = 700;

export class TrainingSteps {
  /** @param {import('../app.js').App} app */
  constructor(app) {
    this.app = app;
    /** @type {string | null} the run and tag followed (null: the open embedding is no step) */
    this.run = null;
    /** @type {string | null} */
    this.tag = null;
    /** @type {Array<{ step: number, embedding: string }>} its steps, ascending */
    this.steps = [];
    /** @type {boolean} each new step is shown as it is written */
    this.follow = false;
    /** @type {boolean} the user set Follow for this run: its default is not applied again */
    this.followChosen = false;
    /** @type {boolean} the points are coloured by their change since the step before */
    this.colorByChange = true;
    /** @type {Map<string, number | null>} embedding -> mean change from the step before (the chart) */
    this.means = new Map();
    /** @type {Map<string, Promise<any>>} comparisons asked, by the pair's key */
    this.asked = new Map();
    /** @type {{ embedding: string, before: string, perPoint: Array<number | null> } | null} the change the colours show */
    this.change = null;
    /** @type {string | null} why the change of the step shown is not shown */
    this.changeError = null;
    /** @type {boolean} */
    this.playing = false;
    /** @type {number} the latest step asked for: an older one's answers are dropped */
    this.token = 0;
    /** @type {boolean} the chart's missing means are being measured */
    this.filling = false;
    /** @type {{ token: number, resolve: () => void } | null} goTo waiting for its step's picture */
    this.awaitingPicture = null;
    /** @type {() => void} the panel redraws */
    this.changed = () => {};
    Object.seal(this);
  }

  /** Index of the step shown in `steps` (-1: none of them). */
  get current() {
    const name = this.app.dataset?.name;
    return this.steps.findIndex((s) => s.embedding === name);
  }

  /**
   * Brings the timeline up to the run list and the data set shown (called as the page
   * renders): a new run or tag starts afresh, with Follow on when it is being written.
   */
  sync() {
    this._checkPicture();
    const { app } = this;
    const ds = app.dataset;
    const timeline = ds && !ds.local ? stepTimeline(app.datasets.runs, ds.run, ds.name, ds.n) : null;
    if (!timeline) {
      if (this.run !== null) this._leave();
      return;
    }
    this.steps = timeline.steps;
    if (timeline.run === this.run && timeline.tag === this.tag) return;
    this._leave();
    this.run = timeline.run;
    this.tag = timeline.tag;
    this._followIfWritten(timeline.run, timeline.tag);
    this.showChange(this.current, this.token);
  }

  _leave() {
    this.run = null;
    this.tag = null;
    this.steps = [];
    this.follow = false;
    this.followChosen = false;
    this.playing = false;
    this.means.clear();
    this.asked.clear();
    this.change = null;
    this.changeError = null;
    this.token++;
  }

  /** Follow is on by default while the run is written (its newest step is under a minute old)
   * and the page shows its newest step: a link or bookmark to an older step stays there. */
  async _followIfWritten(run, tag) {
    let answer;
    try {
      answer = await this.app.api.getJson('steps', { run });
    } catch {
      return; // no word on when: Follow stays off until asked for
    }
    const timeline = answer.timelines.find((t) => t.tag === tag);
    if (this.run !== run || this.tag !== tag || this.followChosen || !timeline) return;
    if (this.current !== this.steps.length - 1) return;
    if (writtenRecently(timeline.steps, Date.now() / 1000)) this.setFollow(true, { chosen: false });
  }

  /**
   * Follow on (the newest step is shown now, and each new one as it lands) or off.
   * `chosen`: the user's choice (a default is not applied over it).
   */
  setFollow(on, { chosen = true } = {}) {
    this.follow = on;
    if (chosen) this.followChosen = true;
    if (on) {
      this.playing = false;
      this.goTo(this.steps.length - 1);
    }
    this.changed();
  }

  /** A `step` event (server/routes/events.py): a step of the run followed became readable. */
  heard(data) {
    if (data.run !== this.run || data.tag !== this.tag) return;
    this.sync(); // the run list has its entry: its `embedding` event came first
    // Followed, the new step's picture comes first: its comparison (the chart's and the
    // colours') would take half the cores from the projection drawing it.
    if (this.follow && data.state === 'ready') this.goTo(this.steps.length - 1).then(() => this._fillSoon());
    else this._fillSoon();
    this.changed();
  }

  /**
   * Shows step `index`: the data set becomes that step, its projection starts from the one
   * on screen, and its change since the step before colours the points once measured.
   */
  async goTo(index) {
    const { app } = this;
    const target = this.steps[index];
    if (!target) return;
    const token = ++this.token;
    if (app.dataset.name !== target.embedding) {
      if (!app.datasets.openStep(target.embedding)) return;
      app.projecting.showStep();
      if (app.state.focus !== null) app.highlight.loadNeighbors(); // its neighbours at this step
      app.render();
    }
    this.changed();
    await this._pictured(token); // on a busy server the picture comes first, then the colours
    await this.showChange(index, token);
  }

  /**
   * Resolves once the shown projection put its points in the plot (or ended without).
   * @param {number} token
   * @returns {Promise<void>}
   */
  _pictured(token) {
    return new Promise((resolve) => {
      this.awaitingPicture?.resolve();
      this.awaitingPicture = { token, resolve: () => resolve() };
      this._checkPicture();
    });
  }

  /** Settles goTo's wait when its step is pictured, ended, or overtaken by a newer step. */
  _checkPicture() {
    const waiting = this.awaitingPicture;
    const p = this.app.shown;
    if (!waiting || (waiting.token === this.token && p && !p.displayedOnce && p.running)) return;
    this.awaitingPicture = null;
    waiting.resolve();
  }

  /** Colours the points by their change from step `index - 1` to `index` (when asked to). */
  async showChange(index, token) {
    const { app } = this;
    const step = this.steps[index];
    const before = this.steps[index - 1];
    this.changeError = null;
    if (!step || !before || !this.colorByChange) {
      this.change = null;
      app.highlight.colorWith(null);
      return;
    }
    let answer;
    try {
      answer = await this.compare(before.embedding, step.embedding);
    } catch (err) {
      if (token === this.token) this.changeError = err.message;
      this.changed();
      return;
    }
    if (token !== this.token || !this.colorByChange) return;
    this.change = { embedding: step.embedding, before: before.embedding, perPoint: answer.per_point };
    this._paint();
    this._fillSoon();
    this.changed();
  }

  /** The change shown as the points' colours, for the theme on screen. */
  _paint() {
    const dark = document.documentElement.dataset.theme === 'dark';
    this.app.highlight.colorWith({ kind: 'change', colors: changeColors(this.change.perPoint, dark), legend: null });
  }

  /** Colour by change on or off (off: the state's colours show again). */
  setColorByChange(on) {
    this.colorByChange = on;
    this.showChange(this.current, this.token);
    this.changed();
  }

  /** The theme changed: the change colours are drawn for it. */
  themeChanged() {
    if (this.change && this.colorByChange) this._paint();
  }

  /**
   * How each point's neighbourhood changed from embedding `a` to `b` of the run (GET
   * /api/compare, as a job first so the server computes it once however often it is asked);
   * its mean goes to the chart.
   */
  compare(a, b) {
    const key = JSON.stringify([this.run, a, b]);
    let asked = this.asked.get(key);
    if (!asked) {
      const { api } = this.app;
      const question = { run: this.run, embedding: a, other_run: this.run, other_embedding: b, top: 0, ...COMPARE };
      asked = (async () => {
        const { job } = await api.getJson('compare', { ...question, background: true });
        const last = await api.follow(job, { frames: false });
        if (last?.status && last.status !== 'done') throw new ApiError(422, last.error || `comparison ${last.status}`);
        const answer = await api.getJson('compare', question);
        this.means.set(b, answer.mean === null ? null : 1 - answer.mean);
        return answer;
      })();
      this.asked.set(key, asked);
      // Only the means are kept: a step's per-point answer is asked again if shown again.
      asked.then(() => this.asked.delete(key), () => this.asked.delete(key));
    }
    return asked;
  }

  /** Measures, one at a time, the changes the chart lacks (after the step shown's). */
  async _fillSoon() {
    if (this.filling) return;
    this.filling = true;
    const run = this.run;
    try {
      for (;;) {
        const i = this.steps.findIndex((s, k) => k > 0 && !this.means.has(s.embedding));
        if (i < 0 || this.run !== run) break;
        await this.compare(this.steps[i - 1].embedding, this.steps[i].embedding).catch(() => this.means.set(this.steps[i].embedding, null));
        this.changed();
      }
    } finally {
      this.filling = false;
    }
  }

  /** Play walks the steps written from the one shown (from the first at the end); again: pause. */
  async togglePlay() {
    if (this.playing) {
      this.playing = false;
      this.changed();
      return;
    }
    this.playing = true;
    this.follow = false;
    this.followChosen = true;
    let i = this.current >= this.steps.length - 1 ? -1 : this.current;
    this.changed();
    while (this.playing && i < this.steps.length - 1) {
      i += 1;
      await this.goTo(i);
      await this.app.shown?.finished;
      if (this.playing && i < this.steps.length - 1) await new Promise((resolve) => setTimeout(resolve, PLAY_HOLD_MS));
    }
    this.playing = false;
    this.changed();
  }

  /** The scrubber moved to `index`: a step before the newest stops Follow. */
  scrubTo(index) {
    if (index < this.steps.length - 1 && this.follow) {
      this.follow = false;
      this.followChosen = true;
    }
    this.playing = false;
    this.goTo(index);
  }

  /** The chart's points: each step with its change since the step before (null: not yet). */
  chart() {
    return this.steps.map((s) => ({ step: s.step, change: this.means.get(s.embedding) ?? null }));
  }

  /** What the panel's line says of the step shown. */
  label() {
    const i = this.current;
    if (i < 0) return '';
    const [tag] = splitStep(this.steps[i].embedding);
    return `${tag}: step ${this.steps[i].step} (${i + 1} of ${this.steps.length})`;
  }
}
