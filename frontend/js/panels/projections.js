// Projections panel: PCA components with variance, t-SNE and UMAP parameters with live job
// controls and progress, and the custom projection's four queries with match counts.

import { $, formatCount, setOptions } from '../dom.js';
import { CUSTOM_SIDES } from '../state.js';
import { clampToLimit, limitFor, paramInfo } from '../limits.js';
import { superviseChoices } from '../supervision.js';
import { jobStatus } from '../projection/projection.js';

/** What a sampled fit says of itself once done (its info: mode, sample_size, n_points). */
export function sampleNote(info) {
  if (info?.mode !== 'sample' || !info.sample_size) return '';
  const of = info.n_points ? ` of ${formatCount(info.n_points)}` : '';
  return `Fitted on a random sample of ${formatCount(info.sample_size)}${of} points; the others were placed by the fitted map.`;
}

/**
 * A control's range from the parameter table of the open data set (its data's limits
 * applied: perplexity at most (N - 1) / 3). Whole-number controls get whole bounds inside
 * it; without a table (local data) the page's own, from the same table, stay.
 */
function rangeFrom(input, param) {
  if (!param) return;
  const whole = param.type === 'integer' || Number(input.step) >= 1;
  if (param.minimum != null) {
    const min = String(whole ? Math.ceil(param.minimum) : param.minimum);
    if (input.min !== min) input.min = min;
  }
  if (param.maximum != null) {
    const max = String(Math.max(Number(input.min), whole ? Math.floor(param.maximum) : param.maximum));
    if (input.max !== max) input.max = max;
  }
}

/** @param {import('../app.js').App} app */
export function createProjectionsPanel(app) {
  const panel = $('projections-panel');
  const tabs = [...panel.querySelectorAll('[role="tab"]')];
  const bodies = [...panel.querySelectorAll('[data-body]')];
  const pcaAxes = { x: $('pca-x'), y: $('pca-y'), z: $('pca-z') };
  const tsne = {
    threeD: $('tsne-3d'),
    perplexity: $('tsne-perplexity'),
    perplexityValue: $('tsne-perplexity-value'),
    learningRate: $('tsne-learning-rate'),
    iterations: $('tsne-iterations'),
    superviseColumn: $('tsne-supervise-column'),
    superviseWeight: $('tsne-supervise-weight'),
    superviseWeightValue: $('tsne-supervise-weight-value'),
    run: $('tsne-run'),
    pause: $('tsne-pause'),
    stop: $('tsne-stop'),
  };
  const umap = {
    threeD: $('umap-3d'),
    neighbors: $('umap-neighbors'),
    neighborsValue: $('umap-neighbors-value'),
    minDist: $('umap-min-dist'),
    minDistValue: $('umap-min-dist-value'),
    run: $('umap-run'),
    stop: $('umap-stop'),
  };
  // Each control and the parameter of the table it sets.
  const ranged = [
    [tsne.perplexity, 'tsne', 'perplexity'], [tsne.learningRate, 'tsne', 'learning_rate'],
    [tsne.iterations, 'tsne', 'n_iter'], [tsne.superviseWeight, 'tsne', 'supervise_weight'],
    [umap.neighbors, 'umap', 'n_neighbors'], [umap.minDist, 'umap', 'min_dist'],
  ];
  // A typed value goes into the table's range (the box then shows what will be asked).
  const typed = (method, param, value) => clampToLimit(value, limitFor(app.dataset, method, param));
  const customColumn = $('custom-column');
  const customInputs = Object.fromEntries(CUSTOM_SIDES.map((side) => [side, $(`custom-${side}`)]));

  for (const tab of tabs) tab.addEventListener('click', () => app.update({ projection: tab.dataset.tab }));

  // The toolbar's 2D/3D badge switches the shown projection's dimensions (a custom
  // projection is always 2D: the badge says so and does nothing).
  const badge = $('mode-badge');
  badge.addEventListener('click', () => {
    const method = app.state.projection;
    if (method === 'custom') return;
    app.update({ [method]: { ...app.state[method], is3d: !app.state[method].is3d } });
  });

  for (const [axis, select] of Object.entries(pcaAxes)) {
    select.addEventListener('change', () => app.update({ pca: { ...app.state.pca, [axis]: Number(select.value) } }));
  }
  $('pca-3d').addEventListener('change', (e) => app.update({ pca: { ...app.state.pca, is3d: e.target.checked } }));

  const setTsne = (patch) => app.update({ tsne: { ...app.state.tsne, ...patch } });
  tsne.threeD.addEventListener('change', () => setTsne({ is3d: tsne.threeD.checked }));
  tsne.perplexity.addEventListener('input', () => (tsne.perplexityValue.textContent = tsne.perplexity.value));
  tsne.perplexity.addEventListener('change', () => setTsne({ perplexity: Number(tsne.perplexity.value) }));
  tsne.learningRate.addEventListener('change', () => {
    const v = Number(tsne.learningRate.value);
    setTsne({ learningRate: tsne.learningRate.value.trim() && v > 0 ? typed('tsne', 'learning_rate', v) : null });
  });
  tsne.iterations.addEventListener('change', () => {
    const v = Math.round(Number(tsne.iterations.value));
    if (!tsne.iterations.value.trim() || !Number.isFinite(v)) return;
    const nIter = typed('tsne', 'n_iter', v);
    tsne.iterations.value = String(nIter);
    setTsne({ nIter });
  });
  tsne.superviseColumn.addEventListener('change', () => setTsne({ superviseColumn: tsne.superviseColumn.value || null }));
  tsne.superviseWeight.addEventListener('input', () => (tsne.superviseWeightValue.textContent = tsne.superviseWeight.value));
  tsne.superviseWeight.addEventListener('change', () => setTsne({ superviseWeight: Number(tsne.superviseWeight.value) }));
  tsne.run.addEventListener('click', () => app.projecting.run());
  tsne.pause.addEventListener('click', () => app.projecting.togglePause('tsne'));
  tsne.stop.addEventListener('click', () => app.projecting.stopJob('tsne'));

  const setUmap = (patch) => app.update({ umap: { ...app.state.umap, ...patch } });
  umap.threeD.addEventListener('change', () => setUmap({ is3d: umap.threeD.checked }));
  umap.neighbors.addEventListener('input', () => (umap.neighborsValue.textContent = umap.neighbors.value));
  umap.neighbors.addEventListener('change', () => setUmap({ nNeighbors: Number(umap.neighbors.value) }));
  umap.minDist.addEventListener('input', () => (umap.minDistValue.textContent = umap.minDist.value));
  umap.minDist.addEventListener('change', () => setUmap({ minDist: Number(umap.minDist.value) }));
  umap.run.addEventListener('click', () => app.projecting.run());
  umap.stop.addEventListener('click', () => app.projecting.stopJob('umap'));

  const setCustom = (patch) => app.update({ custom: { ...app.state.custom, ...patch } });
  customColumn.addEventListener('change', () => setCustom({ column: customColumn.value || null }));
  for (const [side, input] of Object.entries(customInputs)) input.addEventListener('input', () => setCustom({ [side]: input.value }));
  $('custom-regex').addEventListener('change', (e) => setCustom({ regex: e.target.checked }));

  function renderPca() {
    const p = app.projecting.projections.pca;
    const ratios = p?.info?.explained_variance_ratio ?? [];
    const count = Math.max(p?.cols ?? 0, ratios.length, Math.min(10, app.dataset?.d ?? 3));
    const options = Array.from({ length: count }, (_, i) => ({
      value: String(i),
      // "PC1": the principal component's short name, so the choice fits a narrow column.
      label: ratios[i] !== undefined ? `PC${i + 1} (variance ${(ratios[i] * 100).toFixed(1)}%)` : `PC${i + 1}`,
    }));
    const { x, y, z, is3d } = app.state.pca;
    setOptions(pcaAxes.x, options, x);
    setOptions(pcaAxes.y, options, y);
    setOptions(pcaAxes.z, options, z);
    pcaAxes.z.disabled = !is3d;
    $('pca-3d').checked = is3d;
    const shown = is3d ? [x, y, z] : [x, y];
    const total = shown.reduce((sum, i) => sum + (ratios[i] ?? 0), 0);
    $('pca-variance').textContent = ratios.length
      ? `Total variance described: ${(total * 100).toFixed(1)}%`
      : p?.running
        ? 'Computing the principal components…'
        : '';
  }

  /** A job's status line, bar, Run button and notes (the progress card says the same: jobStatus). */
  function renderJob(p, prefix, run) {
    $(`${prefix}-status`).textContent = jobStatus(p);
    const fill = $(`${prefix}-progress`);
    fill.style.width = `${Math.round((p?.progress ?? 0) * 100)}%`;
    const stale = Boolean(p) && JSON.stringify(p.params) !== JSON.stringify(app.projecting.requestFor(prefix).params);
    // Running with these parameters: pressing Run again would not restart it, so it is off.
    run.disabled = Boolean(p?.running) && !stale;
    run.textContent = !p ? 'Run' : p.running && !stale ? 'Running…' : 'Re-run';
    const notes = [
      stale ? 'Parameters changed: Re-run to apply them.' : '',
      p?.status === 'done' ? sampleNote(p.info) : '',
    ].filter(Boolean);
    const note = $(`${prefix}-note`);
    note.hidden = notes.length === 0;
    note.textContent = notes.join(' ');
  }

  function renderTsne() {
    const s = app.state.tsne;
    const p = app.projecting.projections.tsne;
    tsne.threeD.checked = s.is3d;
    if (document.activeElement !== tsne.perplexity) tsne.perplexity.value = s.perplexity;
    tsne.perplexityValue.textContent = s.perplexity;
    if (document.activeElement !== tsne.learningRate) tsne.learningRate.value = s.learningRate ?? '';
    if (document.activeElement !== tsne.iterations) tsne.iterations.value = s.nIter;
    const choices = superviseChoices(app.dataset).map((c) => ({ value: c, label: c }));
    setOptions(tsne.superviseColumn, [{ value: '', label: '(none)' }, ...choices], s.superviseColumn ?? '');
    if (document.activeElement !== tsne.superviseWeight) tsne.superviseWeight.value = s.superviseWeight;
    tsne.superviseWeightValue.textContent = s.superviseWeight;
    tsne.pause.disabled = !p?.running;
    tsne.pause.textContent = p?.paused ? 'Resume' : 'Pause';
    tsne.stop.disabled = !p?.running;
    $('tsne-iteration').textContent = formatCount(p?.iteration ?? 0);
    renderJob(p, 'tsne', tsne.run);
  }

  function renderUmap() {
    const s = app.state.umap;
    const p = app.projecting.projections.umap;
    umap.threeD.checked = s.is3d;
    if (document.activeElement !== umap.neighbors) umap.neighbors.value = s.nNeighbors;
    umap.neighborsValue.textContent = s.nNeighbors;
    if (document.activeElement !== umap.minDist) umap.minDist.value = s.minDist;
    umap.minDistValue.textContent = s.minDist;
    umap.stop.disabled = !p?.running;
    renderJob(p, 'umap', umap.run);
  }

  function renderCustom() {
    const c = app.state.custom;
    const columns = app.dataset ? app.dataset.columns : [];
    setOptions(customColumn, columns.map((col) => ({ value: col, label: col })), c.column ?? '');
    for (const [side, input] of Object.entries(customInputs)) if (input.value !== c[side]) input.value = c[side];
    $('custom-regex').checked = c.regex;
    const p = app.projecting.projections.custom;
    const matches = p?.status === 'done' ? p.info?.matches : null;
    for (const side of CUSTOM_SIDES) {
      const count = matches?.[side];
      $(`custom-${side}-matches`).textContent =
        c[side].trim() && count !== undefined ? `${formatCount(count)} match${count === 1 ? '' : 'es'}` : '';
    }
    const error = $('custom-error');
    error.hidden = p?.status !== 'failed';
    error.textContent = p?.status === 'failed' ? p.error : '';
  }

  function render() {
    for (const [input, method, param] of ranged) rangeFrom(input, paramInfo(app.dataset, method, param));
    const current = app.state.projection;
    for (const tab of tabs) tab.setAttribute('aria-selected', String(tab.dataset.tab === current));
    for (const body of bodies) body.hidden = body.dataset.body !== current;
    renderPca();
    renderTsne();
    renderUmap();
    renderCustom();
    const custom = current === 'custom';
    badge.disabled = custom;
    badge.setAttribute('aria-pressed', String(!custom && Boolean(app.state[current]?.is3d)));
    badge.title = custom ? 'A custom projection is 2D' : `Switch to ${app.state[current]?.is3d ? '2D' : '3D'}`;
  }

  return { render };
}
