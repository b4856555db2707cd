// Projection quality in the Structure panel: how many of each point's nearest neighbours in
// the original space stay near it in the shown projection, measured by the server for the
// shown projection's finished job. It costs O(N^2) exact work (minutes at 100,000 points), so
// the page measures it by itself only for a small set (QUALITY_AUTO_POINTS); above, when asked
// ("Measure", or ticking "Colour by projection quality"), with its progress and a Cancel in
// the panel: never minutes of work nobody asked for, over the plot.

import { gradientCss } from '../colors.js';
import { el, formatCount } from '../dom.js';

const QUALITY_K = 10;
/** Up to this many points quality is measured unasked (colouring on, or a point clicked):
 * seconds of server work (5,000 x 64: about a second on two cores). */
export const QUALITY_AUTO_POINTS = 5000;

/** Whether a set of `n` points has its quality measured without being asked. */
export function measuredUnasked(n) {
  return n <= QUALITY_AUTO_POINTS;
}

/**
 * @typedef {{ job: string, metric: string, body: any, said?: string }} Measured  a finished
 *   measure; body null: none, `said` says why (too few points, failed, cancelled)
 * @typedef {{ job: string, metric: string, abort: AbortController, jobId: string | null, progress: number | null }} Measuring
 */

/**
 * @param {import('../app.js').App} app
 * @param {() => string | null} shownJob  the shown projection's finished server job (panel.js)
 */
export function createQualitySection(app, shownJob) {
  const id = (name) => ({ 'data-testid': name });
  const toggle = el('input', { type: 'checkbox', ...id('quality-toggle') });
  const status = el('p', { class: 'stat', ...id('quality-status') });
  const measure = el('button', { type: 'button', class: 'button', ...id('quality-run') }, 'Measure');
  const cancel = el('button', { type: 'button', class: 'button', ...id('quality-cancel'), hidden: true }, 'Cancel');
  const fill = el('div', { class: 'progress-fill', ...id('quality-progress') });
  const bar = el('div', { class: 'progress-line', hidden: true }, fill);
  const gradient = el('div', { class: 'quality-bar' });
  gradient.style.background = gradientCss();
  const legend = el('div', { class: 'quality-legend', ...id('quality-legend'), hidden: true },
    gradient, el('div', { class: 'quality-ends' }, el('span', {}, `0 of ${QUALITY_K} kept`), el('span', {}, `${QUALITY_K} of ${QUALITY_K}`)),
    el('p', { class: 'hint' }, `Colour: how many of each point's ${QUALITY_K} nearest neighbours in the original space are also among its ${QUALITY_K} nearest here. Grey: not computed.`));
  const pointQuality = el('p', { class: 'stat point-quality', ...id('point-quality'), hidden: true });
  const elements = [
    el('div', { class: 'subsection-title' }, el('span', {}, 'Projection quality')),
    el('label', { class: 'check' }, toggle, ' Colour by projection quality'),
    legend,
    el('div', { class: 'button-row' }, measure, cancel),
    bar,
    status,
  ];
  /** @type {Measured | null} */
  let measured = null;
  /** @type {Measuring | null} */
  let measuring = null;

  // Colouring by quality is part of the view (the state: URL, bookmarks); ticking it asks for
  // the measure, and the app's one colour rule applies it once the values are in.
  toggle.addEventListener('change', () => {
    app.update({ colorByQuality: toggle.checked });
    if (toggle.checked) start({ asked: true });
  });
  measure.addEventListener('click', () => start({ asked: true }));
  cancel.addEventListener('click', () => {
    const { job, metric } = measuring ?? current();
    stop();
    if (job) measured = { job, metric, body: null, said: 'Quality: not measured (cancelled).' };
    app.render();
  });

  const current = () => ({ job: shownJob(), metric: app.state.neighbors.metric });
  const isFor = (m, { job, metric }) => m !== null && m.job === job && m.metric === metric;

  /** Measures the shown projection's quality: `asked` (again, after a failure or a cancel),
   * or unasked for a small set (once). */
  async function start({ asked = false } = {}) {
    const { job, metric } = current();
    const done = isFor(measured, { job, metric }) && (!asked || measured.body !== null);
    if (!job || done || isFor(measuring, { job, metric })) return;
    stop();
    // The measure needs k below half the points: a small data set is measured with fewer.
    const k = Math.min(QUALITY_K, Math.floor(((app.dataset?.n ?? 0) - 1) / 2));
    if (k < 1) {
      measured = { job, metric, body: null, said: 'Quality: too few points to measure' };
      app.render();
      return;
    }
    const mine = { job, metric, abort: new AbortController(), jobId: null, progress: null };
    measuring = mine;
    render();
    let body = null;
    let failure = null;
    try {
      body = await ask(mine, k);
    } catch (err) {
      failure = err;
    }
    if (measuring !== mine) return; // cancelled, or another measure replaced it
    measuring = null;
    // A failure is remembered too: renders do not ask again.
    measured = { job, metric, body, said: failure ? `Quality: ${failure.message}` : undefined };
    app.render();
  }

  /**
   * The measure, as a job followed for its progress where the server makes one
   * (`background=true` answers 202 with a job, as /api/compare does), else one request.
   * @param {Measuring} mine
   */
  async function ask(mine, k) {
    const path = `jobs/${mine.job}/quality`;
    const params = { k, metric: mine.metric };
    const { signal } = mine.abort;
    const first = await app.api.getJson(path, { ...params, background: true }, { signal });
    if (!first?.job) return first; // answered at once
    mine.jobId = first.job;
    const last = await app.api.follow(first.job, {
      onStatus: (s) => {
        if (measuring !== mine) return;
        if (typeof s.progress === 'number') mine.progress = s.progress;
        app.render();
      },
    });
    if (measuring !== mine) return null;
    if (last?.status && last.status !== 'done') throw new Error(last.error || `measure ${last.status}`);
    return app.api.getJson(path, params, { signal });
  }

  /** Cancels the measure under way (its request, and its job where there is one). */
  function stop() {
    const mine = measuring;
    if (!mine) return;
    measuring = null;
    mine.abort.abort();
    if (mine.jobId) app.api.cancelJob(mine.jobId).catch(() => {});
  }

  function render() {
    const ds = app.dataset;
    const now = current();
    if (measuring && !isFor(measuring, now)) stop(); // the projection or metric changed: its measure is of no use
    const colouring = Boolean(app.state.colorByQuality);
    toggle.checked = colouring;
    legend.hidden = !colouring;
    const small = Boolean(ds) && measuredUnasked(ds.n);
    const asked = isFor(measured, now); // measured, failed or cancelled
    if (small && now.job && !asked && !measuring && (colouring || app.state.focus !== null)) queueMicrotask(() => start());
    const body = asked ? measured.body : null;
    app.highlight.setQuality(body?.per_point ?? null);
    measure.hidden = Boolean(measuring) || Boolean(body) || !now.job;
    cancel.hidden = !measuring;
    bar.hidden = !measuring;
    fill.classList.toggle('indeterminate', measuring?.progress == null);
    fill.style.width = measuring?.progress == null ? '' : `${Math.round(measuring.progress * 100)}%`;
    if (measuring) {
      status.textContent = `Measuring the quality of ${formatCount(ds?.n ?? 0)} points…${measuring.progress == null ? '' : ` ${Math.round(measuring.progress * 100)}%`}`;
    } else if (body) {
      const sample = body.sample_size ? `, on a sample of ${formatCount(body.sample_size)}` : '';
      const excluded = body.excluded_rows ? `; ${formatCount(body.excluded_rows)} points without coordinates left out` : '';
      status.textContent = `Trustworthiness ${body.trustworthiness.toFixed(3)} · continuity ${body.continuity.toFixed(3)} · neighbours kept ${(body.mean * 100).toFixed(0)}% (k = ${body.k}, ${app.state.neighbors.metric}${sample})${excluded}.`;
    } else if (asked) {
      status.textContent = measured.said ?? '';
    } else if (now.job && !small) {
      status.textContent = `Not measured for this projection: ${formatCount(ds?.n ?? 0)} points take a while; Measure when wanted.`;
    } else {
      status.textContent = '';
    }
    const focus = app.state.focus;
    const value = body && focus !== null ? body.per_point[focus] : undefined;
    pointQuality.hidden = value === undefined;
    if (value !== undefined) {
      pointQuality.textContent = value === null
        ? `Point #${focus}: quality not computed (no coordinates or not in the sample).`
        : `Point #${focus}: ${Math.round(value * body.k)} of ${body.k} original neighbours are near it here.`;
    }
  }

  return { elements, pointQuality, render };
}
