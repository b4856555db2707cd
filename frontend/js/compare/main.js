// The comparison page: pick two embeddings of the same points (or a tag's training steps),
// ask the server how each point's neighbourhood changed, and show A and B side by side with
// aligned layouts (B's PCA turned onto A's, B's t-SNE/UMAP started from A's). With several
// steps, a slider and a play button walk the timeline, each step's layout started from the
// previous step's, coloured by the change between consecutive steps.

import { Api, ApiError } from '../api.js';
import { search } from '../kernels.js';
import { startsFromLayout } from '../limits.js';
import { $, el, setOptions } from '../dom.js';
import { flipTheme } from '../theme.js';
import { runLabel } from '../run_list.js';
import { parseMetadataTsv } from '../tsv.js';
import { splitStep } from '../training/timeline.js';
import { changeGradientCss, LinkedPlots } from './linked.js';

const PLAY_PAUSE_MS = 900;
const MOST_CHANGED_SHOWN = 50;
/** An embedding's tensor name without its step (tag:00005 -> tag). */
const tagOf = (embedding) => splitStep(embedding)[0];
const key = (side) => JSON.stringify([side.run, side.embedding]);
const sideOf = (value) => {
  const [run, embedding] = JSON.parse(value);
  return { run, embedding };
};

class ComparePage {
  constructor() {
    this.api = new Api();
    this.methodTable = this.api.methods().catch(() => null); // capabilities: which method starts from a layout
    this.runs = []; // /api/runs
    this.embeddings = []; // [{ run, embedding, rows, dims }]
    this.pairs = [];
    this.timeline = null; // [{ step, embedding }] of A's tag when it has several steps
    this.layouts = new Map(); // key + method -> { jobId, data, cols }
    this.metadata = null;
    this.result = null;
    this.shown = null; // { a, b }
    this.playing = false;
    this.busy = Promise.resolve();
    this.plots = new LinkedPlots($('compare-a'), $('compare-b'), {
      describe: (i) => this.describe(i),
      onHover: (i) => {
        $('compare-hover').textContent = i < 0 ? '' : this.describe(i);
      },
      onSelect: (indices) => this.showSelection(indices),
    });
    $('change-bar').style.background = changeGradientCss(document.documentElement.dataset.theme === 'dark');
    $('theme-toggle').addEventListener('click', () => this.toggleTheme());
  }

  /** The page's theme switch (remembered, as on the main page); the plots follow. */
  toggleTheme() {
    $('change-bar').style.background = changeGradientCss(flipTheme());
    this.plots.themeChanged();
  }

  async start() {
    const [runs, pairs] = await Promise.all([this.api.runs(), this.api.getJson('compare/pairs')]);
    this.runs = runs;
    for (const run of runs) {
      for (const e of run.embeddings) {
        if (e.shape) this.embeddings.push({ run: run.name, embedding: e.name, rows: e.shape[0], dims: e.shape[1] });
      }
    }
    this.pairs = pairs.pairs;
    // Back to the projector's view: the page that linked here passed its URL hash along.
    if (location.hash.startsWith('#s=')) $('back-link').href = `./${location.hash}`;
    const asked = new URLSearchParams(location.search);
    const from = { run: asked.get('run'), embedding: asked.get('embedding') };
    const label = (e) => `${this.runName(e.run)} / ${e.embedding} (${e.rows} x ${e.dims})`;
    const options = this.embeddings.map((e) => ({ value: key(e), label: label(e) }));
    const pairLabel = (p) => `${p.kind === 'steps' ? 'steps' : 'runs'}: ${this.runName(p.a.run)}/${p.a.embedding} -> ${this.runName(p.b.run)}/${p.b.embedding}`;
    const { pairIndex, a, b } = this.firstChoice(from);
    setOptions($('a-select'), options, a ? key(a) : options[0]?.value);
    setOptions($('pair-select'), [{ value: '', label: 'Pick A and B below' },
      ...this.pairs.map((p, i) => ({ value: String(i), label: pairLabel(p) }))], pairIndex >= 0 ? String(pairIndex) : '');
    this.fillB(b ? key(b) : null);
    $('pair-select').addEventListener('change', () => {
      if (this.usePair()) this.run();
    });
    $('a-select').addEventListener('change', () => {
      $('pair-select').value = '';
      this.fillB();
    });
    $('b-select').addEventListener('change', () => {
      $('pair-select').value = '';
    });
    $('compare-run').addEventListener('click', () => this.run());
    $('step-slider').addEventListener('input', () => this.run({ fromSlider: true }));
    $('step-play').addEventListener('click', () => this.togglePlay());
    $('compare-search').addEventListener('input', () => this.search());
    this.usePair();
    this.ready = true;
    if (!$('b-select').value) return; // no partner: B says so and Compare waits
    await this.run();
    if (this.opening) this.status(this.opening);
  }

  /** A run's name as shown: "." with its folder's name (run_list.js runLabel). */
  runName(run) {
    return runLabel(this.runs, run);
  }

  /** Embeddings B may be for A: the same number of rows (a comparison pairs rows), not A. */
  partners(a) {
    const rows = this.embeddings.find((e) => e.run === a.run && e.embedding === a.embedding)?.rows;
    return this.embeddings.filter((e) => e.rows === rows && key(e) !== key(a));
  }

  /**
   * Where the page opens: on the embedding the projector showed (its offered pair, else it
   * with a partner of its own name: another step of its tag or its tensor in another run),
   * else the first offered pair (an unrelated embedding with the same row count is no
   * question anyone asked), else the first embedding that has a partner.
   */
  firstChoice(from) {
    const same = (side) => side.run === from.run && side.embedding === from.embedding;
    const known = this.embeddings.find(same);
    if (known) {
      const pairIndex = [this.pairs.findIndex((p) => same(p.a)), this.pairs.findIndex((p) => same(p.b))].find((i) => i >= 0) ?? -1;
      if (pairIndex >= 0) return { pairIndex, a: this.pairs[pairIndex].a, b: this.pairs[pairIndex].b };
      const b = this.partners(known).find((e) => tagOf(e.embedding) === tagOf(known.embedding));
      if (b || !this.pairs.length) return { pairIndex: -1, a: known, b: b ?? null };
      this.opening = `No offered pair holds ${this.runName(known.run)} / ${known.embedding}: showing an offered pair. Pick A and B below to compare it.`;
    }
    if (this.pairs.length) return { pairIndex: 0, a: this.pairs[0].a, b: this.pairs[0].b };
    return { pairIndex: -1, a: this.embeddings.find((e) => this.partners(e).length) ?? null, b: null };
  }

  /** B's choices for the current A, keeping B when it still fits; none: Compare waits. */
  fillB(preferred = null) {
    const a = sideOf($('a-select').value);
    const fits = this.partners(a);
    const label = (e) => `${this.runName(e.run)} / ${e.embedding} (${e.rows} x ${e.dims})`;
    const current = preferred ?? $('b-select').value;
    const chosen = fits.find((e) => key(e) === current) ?? fits.find((e) => e.run === a.run) ?? fits[0];
    const value = chosen ? key(chosen) : '';
    const rows = this.embeddings.find((e) => key(e) === key(a))?.rows;
    setOptions($('b-select'), fits.length ? fits.map((e) => ({ value: key(e), label: label(e) }))
      : [{ value: '', label: `(no other embedding has ${rows ?? 0} rows)` }], value);
    $('b-select').disabled = !fits.length;
    $('compare-run').disabled = !fits.length;
    if (!fits.length) $('compare-summary').textContent = `No other embedding here has A's ${rows ?? 0} rows: a comparison pairs the same points.`;
  }

  /** Puts the offered pair into A and B; whether there was one. */
  usePair() {
    const pair = this.pairs[Number($('pair-select').value)];
    if (!pair || $('pair-select').value === '') return false;
    $('a-select').value = key(pair.a);
    this.fillB(key(pair.b));
    return true;
  }

  /**
   * Which two embeddings to show now: the slider's step pair (A, B and the offered pair
   * follow it, so Compare reruns what is shown), or A and B as picked.
   */
  _sides(fromSlider) {
    if (fromSlider && this.timeline) {
      const i = Number($('step-slider').value);
      const run = sideOf($('a-select').value).run;
      const a = { run, embedding: this.timeline[i - 1].embedding };
      const b = { run, embedding: this.timeline[i].embedding };
      $('a-select').value = key(a);
      this.fillB(key(b));
      const offered = this.pairs.findIndex((p) => key(p.a) === key(a) && key(p.b) === key(b));
      $('pair-select').value = offered >= 0 ? String(offered) : '';
      return { a, b };
    }
    return { a: sideOf($('a-select').value), b: sideOf($('b-select').value) };
  }

  /** Compares and shows one pair; calls queue so a fast slider never interleaves two. */
  run({ fromSlider = false } = {}) {
    this.busy = this.busy.then(() => this._run(fromSlider)).catch((error) => this.fail(error));
    return this.busy;
  }

  async _run(fromSlider) {
    const { a, b } = this._sides(fromSlider);
    $('compare-error').hidden = true;
    if (!fromSlider) await this.loadTimeline(a, b);
    const method = $('compare-method').value;
    const question = {
      run: a.run, embedding: a.embedding, other_run: b.run, other_embedding: b.embedding,
      k: $('compare-k').value, metric: $('compare-metric').value, top: MOST_CHANGED_SHOWN,
    };
    // As a job first, so a long comparison shows its progress; then the answer, kept by the server.
    const { job } = await this.api.getJson('compare', { ...question, background: true });
    const last = await this.api.follow(job, {
      onStatus: (s) => this.status(`Comparing ${a.embedding} with ${b.embedding}: ${Math.round((s.progress || 0) * 100)}%`),
    });
    if (last && last.status && last.status !== 'done') throw new ApiError(422, last.error || `comparison ${last.status}`);
    const result = await this.api.getJson('compare', question);
    if (!this.metadata || this.metadata.run !== a.run || this.metadata.embedding !== a.embedding) {
      this.metadata = await this.loadMetadata(a);
    }
    // Along a timeline, every step starts from the previous one so motion is real change.
    const la = await this.layout(a, method, fromSlider ? this.previousLayout(a, method) : null);
    const lb = await this.layout(b, method, la);
    const n = result.rows;
    const animate = Boolean(this.shown) && this.plots.n === n;
    this.plots.setLayouts(la.data, la.cols, lb.data, lb.cols, n, { animate });
    this.plots.setChange(result.per_point);
    this.result = result;
    this.shown = { a, b };
    $('title-a').textContent = `A: ${this.runName(a.run)} / ${a.embedding}`;
    $('title-b').textContent = `B: ${this.runName(b.run)} / ${b.embedding}`;
    this.showSummary(result);
    this.status('');
  }

  /** The layout of the timeline step before `side`, if it was computed (slider walks). */
  previousLayout(side, method) {
    const i = this.timeline?.findIndex((s) => s.embedding === side.embedding) ?? -1;
    if (i <= 0) return null;
    return this.layouts.get(key({ run: side.run, embedding: this.timeline[i - 1].embedding }) + method) ?? null;
  }

  async loadTimeline(a, b) {
    const steps = await this.api.getJson('steps', { run: a.run });
    const timeline = steps.timelines.find((t) => t.steps.some((s) => s.embedding === a.embedding));
    const same = timeline && timeline.steps.length > 1 && timeline.steps.every((s) => s.rows === timeline.steps[0].rows);
    this.timeline = same ? timeline.steps : null;
    $('steps-panel').hidden = !this.timeline;
    if (!this.timeline) {
      $('step-label').textContent = ''; // nothing left from the last pair's timeline
      return;
    }
    const slider = $('step-slider');
    slider.min = '1';
    slider.max = String(this.timeline.length - 1);
    const ib = b.run === a.run ? this.timeline.findIndex((s) => s.embedding === b.embedding) : -1;
    const ia = this.timeline.findIndex((s) => s.embedding === a.embedding);
    slider.value = String(ib === ia + 1 ? ib : Math.max(1, ia + 1));
    this._stepLabel();
  }

  _stepLabel() {
    const i = Number($('step-slider').value);
    if (!this.timeline) return;
    const tag = tagOf(this.timeline[i].embedding);
    $('step-label').textContent = `${tag}: step ${this.timeline[i - 1].step} -> ${this.timeline[i].step} (${i} of ${this.timeline.length - 1})`;
  }

  /** A projection of `side`, started from / turned onto `reference` when given (cached). */
  async layout(side, method, reference) {
    const id = key(side) + method + (reference ? reference.jobId : '');
    const cached = this.layouts.get(id);
    if (cached) return cached;
    const params = {};
    const table = await this.methodTable;
    if (reference) params[startsFromLayout(table, method) ? 'init_from_job' : 'align_to_job'] = reference.jobId;
    if (method === 'tsne') params.n_iter = 500;
    const n = this.embeddings.find((e) => e.run === side.run && e.embedding === side.embedding).rows;
    const jobId = await this.api.startProjection({ run: side.run, embedding: side.embedding, method, dims: 2, params },
      { followed: !table?.methods?.[method]?.quick });
    const last = await this.api.follow(jobId, {
      onStatus: (s) => this.status(`${method} of ${side.embedding}: ${Math.round((s.progress || 0) * 100)}%`),
    });
    if (last && last.status && last.status !== 'done') throw new ApiError(422, last.error || `${method} ${last.status}`);
    const result = await this.api.jobResult(jobId, n);
    const layout = { jobId, data: result.data, cols: result.cols };
    this.layouts.set(id, layout);
    this.layouts.set(key(side) + method, layout);
    return layout;
  }

  async loadMetadata(side) {
    try {
      const text = await this.api.metadata(side.run, side.embedding);
      const parsed = parseMetadataTsv(text, { header: true });
      setOptions($('compare-search-column'), parsed.names.map((name) => ({ value: name, label: name })), parsed.names[0]);
      return { ...side, ...parsed };
    } catch {
      return { ...side, names: [], columns: [] };
    }
  }

  describe(i) {
    const labels = this.metadata?.columns?.[0];
    const name = labels ? `${labels[i]} (#${i})` : `#${i}`;
    const overlap = this.result?.per_point?.[i];
    return overlap === null || overlap === undefined ? name : `${name}: ${Math.round(overlap * 100)}% of neighbours kept`;
  }

  showSummary(result) {
    const mean = result.mean === null ? 'n/a' : `${Math.round(result.mean * 1000) / 10}%`;
    const how = result.neighbors === 'approximate' ? `, approximate neighbours (recall ${result.recall.toFixed(3)})` : '';
    $('compare-summary').textContent = `${result.rows} points, k = ${result.k}: ${mean} of neighbours kept on average${how}`;
    const list = $('most-changed');
    // Each row its own values, in the server's order: least kept first, then the old
    // neighbours farthest in B (former_rank: their mean rank there; 8k = not within 8k).
    list.replaceChildren(...result.most_changed.slice(0, MOST_CHANGED_SHOWN).map((i, place) => {
      const far = result.former_rank?.[place];
      const went = far === null || far === undefined ? '' : `old neighbours now ~${Math.round(far) + 1}th in B, `;
      // Reached with Tab as well: Enter selects the point in both plots.
      const item = el('li', { class: 'changed-item', tabindex: '0', dataset: { index: String(i), testid: 'changed-item' } },
        el('span', {}, `${place + 1}. ${this.describe(i)}`),
        el('span', { class: 'hint' }, `${went}shift ${result.rank_displacement[i]?.toFixed(1) ?? 'n/a'}`));
      item.addEventListener('click', () => this.plots.select([i]));
      item.addEventListener('keydown', (event) => {
        if (event.key === 'Enter') this.plots.select([i]);
      });
      return item;
    }));
    if (this.timeline) this._stepLabel();
  }

  showSelection(indices) {
    $('compare-selection').textContent = indices.length ? `${indices.length} selected` : '';
  }

  async search() {
    const column = this.metadata?.names?.indexOf($('compare-search-column').value) ?? -1;
    // The main page's substring search (compute.js, pinned against the server's by tests/cases).
    this.plots.select(column < 0 ? [] : search(this.metadata.columns[column], $('compare-search').value, false));
  }

  async togglePlay() {
    if (this.playing) {
      this.playing = false;
      return;
    }
    this.playing = true;
    $('step-play').textContent = 'Pause';
    const slider = $('step-slider');
    if (Number(slider.value) >= Number(slider.max)) slider.value = slider.min;
    await this.run({ fromSlider: true });
    while (this.playing && Number(slider.value) < Number(slider.max)) {
      await new Promise((resolve) => setTimeout(resolve, PLAY_PAUSE_MS));
      if (!this.playing) break;
      slider.value = String(Number(slider.value) + 1);
      await this.run({ fromSlider: true });
    }
    this.playing = false;
    $('step-play').textContent = 'Play';
  }

  status(text) {
    $('compare-status').textContent = text;
  }

  fail(error) {
    const box = $('compare-error');
    box.textContent = error instanceof Error ? error.message : String(error);
    box.hidden = false;
    this.status('');
  }
}

const page = new ComparePage();
/** Hooks for tests: the page and its plots. */
/** @type {any} */ (window).__compare = page;
page.start().catch((error) => page.fail(error));
