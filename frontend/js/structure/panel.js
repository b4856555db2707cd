// The structure panel: the density layer switch (with its legend), automatic clusters named
// from a metadata column, and projection quality (colour by it; the inspector line). Server
// analyses run on the shown projection's finished job; a local data set has none.

import { gradientCss } from '../colors.js';
import { el, formatCount, setOptions } from '../dom.js';
import { CELL, LEVELS, SIGMA } from './density.js';

const QUALITY_K = 10;
const AUTO_QUALITY_LIMIT = 200000; // below, a clicked point's quality is measured unasked

/**
 * The finished server job behind the shown projection, or null.
 * @param {import('../app.js').App} app
 */
export function shownJob(app) {
  const p = app.shown;
  return p && p.status === 'done' && p.jobId && !app.dataset?.local ? p.jobId : null;
}

/** Why the shown view has no finished server job to cluster, in the user's terms. */
function whyNoJob(app) {
  const p = app.shown;
  if (app.dataset?.local) return 'Clusters and quality need a projection computed by the server.';
  if (!p) return 'Show a projection to find its clusters.';
  if (p.running) return 'Available once the projection has finished.';
  if (p.status === 'failed') return 'The projection failed: no clusters to find.';
  if (p.status === 'cancelled') return 'The projection was stopped before its end: run it again to find clusters.';
  return 'This view shows coordinates stored in a bookmark: run the projection again to find clusters.';
}

/** @param {import('../app.js').App} app */
export function createStructurePanel(app, overlay) {
  const id = (name) => ({ 'data-testid': name });
  const densityToggle = el('input', { type: 'checkbox', ...id('density-toggle') });
  const densityLegend = el('p', { class: 'hint', ...id('density-legend'), hidden: true },
    `Shading and contour lines: a kernel density estimate of the points on screen (Gaussian, σ = ${SIGMA * CELL} px), recomputed as the view or the projection changes. Lines at ${LEVELS.map((l) => `${l * 100}%`).join(', ')} of the densest spot.`);
  const minSize = el('input', { type: 'number', min: '2', step: '1', placeholder: 'auto', id: 'cluster-min-size', ...id('cluster-min-size') });
  const labelColumn = el('select', { id: 'cluster-label-column', ...id('cluster-label-column') });
  const space = el('select', { id: 'cluster-space', ...id('cluster-space') }, el('option', { value: 'projection' }, 'Projected points'), el('option', { value: 'original' }, 'Original space'));
  const run = el('button', { type: 'button', class: 'button', ...id('cluster-run') }, 'Find clusters');
  const labelsToggle = el('input', { type: 'checkbox', checked: true, ...id('cluster-labels-toggle') });
  const clusterStatus = el('p', { class: 'stat', ...id('cluster-status') });
  const clusterHint = el('p', { class: 'notice', ...id('cluster-hint'), hidden: true });
  const qualityToggle = el('input', { type: 'checkbox', ...id('quality-toggle') });
  const qualityStatus = el('p', { class: 'stat', ...id('quality-status') });
  const bar = el('div', { class: 'quality-bar' });
  bar.style.background = gradientCss();
  const qualityLegend = el('div', { class: 'quality-legend', ...id('quality-legend'), hidden: true },
    bar, el('div', { class: 'quality-ends' }, el('span', {}, `0 of ${QUALITY_K} kept`), el('span', {}, `${QUALITY_K} of ${QUALITY_K}`)),
    el('p', { class: 'hint' }, `Colour: how many of each point's ${QUALITY_K} nearest neighbours in the original space are also among its ${QUALITY_K} nearest here. Grey: not computed.`));
  const pointQuality = el('p', { class: 'stat point-quality', ...id('point-quality'), hidden: true });
  const section = el('section', { class: 'panel', ...id('structure-panel'), 'aria-label': 'Structure' },
    el('h2', { class: 'panel-title' }, 'Structure'),
    el('label', { class: 'check' }, densityToggle, ' Density contours'),
    densityLegend,
    el('div', { class: 'subsection-title' }, el('span', {}, 'Clusters (HDBSCAN)')),
    el('div', { class: 'field-row' },
      el('div', { class: 'field' }, el('label', { for: 'cluster-min-size' }, 'Min size'), minSize),
      el('div', { class: 'field' }, el('label', { for: 'cluster-label-column' }, 'Name by'), labelColumn)),
    el('div', { class: 'field' }, el('label', { for: 'cluster-space' }, 'Cluster'), space),
    el('div', { class: 'button-row' }, run),
    el('label', { class: 'check' }, labelsToggle, ' Show cluster names'),
    clusterStatus,
    clusterHint,
    el('div', { class: 'subsection-title' }, el('span', {}, 'Projection quality')),
    el('label', { class: 'check' }, qualityToggle, ' Colour by projection quality'),
    qualityLegend,
    qualityStatus);
  let clustersFor = null;
  let quality = null; // { job, metric, body }
  let qualityLoading = null;
  let nameBy = null; // the column chosen here; until then, the "label by" column
  let waitingNote = null; // the "why no clusters yet" text on show, cleared once a job is there

  // The contours are part of the view: the state (URL, bookmarks) keeps them.
  densityToggle.addEventListener('change', () => app.update({ density: densityToggle.checked }));
  let densityShown = false;
  labelColumn.addEventListener('change', () => {
    nameBy = labelColumn.value;
  });
  labelsToggle.addEventListener('change', () => overlay.setShowClusters(labelsToggle.checked));
  run.addEventListener('click', () => findClusters());
  // Colouring by quality is part of the view: the state (URL, bookmarks) keeps it, and the
  // app's one colour rule applies it once the values are measured.
  qualityToggle.addEventListener('change', () => app.update({ colorByQuality: qualityToggle.checked }));

  async function findClusters() {
    const job = shownJob(app);
    if (!job) return;
    const params = { label_column: labelColumn.value || null, space: space.value, min_cluster_size: minSize.value || null };
    clusterStatus.textContent = 'Clustering…';
    clusterHint.hidden = true;
    const task = app.progress.start('Finding clusters…');
    try {
      const body = await app.api.getJson(`jobs/${job}/clusters`, params);
      const byParent = new Map();
      for (const c of body.clusters) if (c.parent !== null) byParent.set(c.parent, [...(byParent.get(c.parent) ?? []), c]);
      overlay.setClusters({ clusters: body.clusters, byParent });
      clustersFor = job;
      const top = body.clusters.filter((c) => c.parent === null).length;
      const noise = body.assignment.filter((a) => a < 0).length;
      const named = body.label_kind === 'unique'
        ? ` Named by their most central members: “${params.label_column}” has a different value for every point.`
        : '';
      clusterStatus.textContent = `${top} clusters (${body.clusters.length - top} sub-clusters shown when zoomed in), ${formatCount(noise)} points unclustered; min size ${body.min_cluster_size}${body.sampled ? `, from a sample of ${formatCount(body.sampled)}` : ''}.${named}`;
      clusterHint.textContent = body.hint ?? '';
      clusterHint.hidden = !body.hint;
    } catch (err) {
      clusterStatus.textContent = `Clusters: ${err.message}`;
    } finally {
      task.done();
    }
  }

  async function loadQuality() {
    const job = shownJob(app);
    const metric = app.state.neighbors.metric;
    if (!job || (quality && quality.job === job && quality.metric === metric) || qualityLoading === job) return;
    // The measure needs k below half the points: a small data set is measured with fewer.
    const k = Math.min(QUALITY_K, Math.floor(((app.dataset?.n ?? 0) - 1) / 2));
    if (k < 1) {
      quality = { job, metric, body: null };
      qualityStatus.textContent = 'Quality: too few points to measure';
      render();
      return;
    }
    qualityLoading = job;
    qualityStatus.textContent = 'Measuring…';
    const task = app.progress.start('Measuring projection quality…');
    try {
      const body = await app.api.getJson(`jobs/${job}/quality`, { k, metric });
      quality = { job, metric, body };
    } catch (err) {
      quality = { job, metric, body: null }; // remembered, so renders do not ask again
      qualityStatus.textContent = `Quality: ${err.message}`;
    } finally {
      qualityLoading = null;
      task.done();
    }
    render();
  }

  function render() {
    const ds = app.dataset;
    const density = Boolean(app.state.density);
    densityToggle.checked = density;
    densityLegend.hidden = !density;
    if (density !== densityShown) overlay.setDensity(density);
    densityShown = density;
    const job = shownJob(app);
    const columns = ds ? ds.columns : [];
    const chosen = nameBy !== null && (nameBy === '' || columns.includes(nameBy));
    // Names by default from a column of a few values (a class, a category): a column of a
    // value per point (a word) names points, not clusters.
    const categorical = ds?.defaultColorColumn?.() ?? null;
    const fallback = categorical ?? (columns.includes(app.state.labelBy) ? app.state.labelBy : '');
    const naming = chosen ? nameBy : fallback;
    setOptions(labelColumn, [{ value: '', label: '(cluster numbers)' }, ...columns.map((c) => ({ value: c, label: c }))], naming);
    run.disabled = !job;
    if (!job) {
      waitingNote = whyNoJob(app);
      clusterStatus.textContent = waitingNote;
    } else if (waitingNote !== null && clusterStatus.textContent === waitingNote) {
      clusterStatus.textContent = ''; // finished: the note no longer holds
      waitingNote = null;
    }
    if (clustersFor && clustersFor !== job) {
      overlay.setClusters(null);
      clustersFor = null;
    }
    const asked = quality && quality.job === job && quality.metric === app.state.neighbors.metric;
    const current = asked ? quality.body : null;
    const colouring = Boolean(app.state.colorByQuality);
    qualityToggle.checked = colouring;
    const wanted = colouring || (app.state.focus !== null && ds && ds.n <= AUTO_QUALITY_LIMIT);
    if (wanted && job && !asked) loadQuality();
    qualityLegend.hidden = !colouring;
    app.highlight.setQuality(current?.per_point ?? null);
    if (current) {
      const sample = current.sample_size ? `, on a sample of ${formatCount(current.sample_size)}` : '';
      const excluded = current.excluded_rows ? `; ${formatCount(current.excluded_rows)} points without coordinates left out` : '';
      qualityStatus.textContent = `Trustworthiness ${current.trustworthiness.toFixed(3)} · continuity ${current.continuity.toFixed(3)} · neighbours kept ${(current.mean * 100).toFixed(0)}% (k = ${current.k}, ${app.state.neighbors.metric}${sample})${excluded}.`;
    } else if (!qualityLoading && !asked && !colouring) {
      qualityStatus.textContent = '';
    }
    const focus = app.state.focus;
    const value = current && focus !== null ? current.per_point[focus] : undefined;
    pointQuality.hidden = value === undefined;
    if (value !== undefined) {
      pointQuality.textContent = value === null
        ? `Point #${focus}: quality not computed (no coordinates or not in the sample).`
        : `Point #${focus}: ${Math.round(value * current.k)} of ${current.k} original neighbours are near it here.`;
    }
  }

  return { element: section, pointQuality, render };
}
