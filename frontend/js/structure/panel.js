// The structure panel: the density layer switch (with its legend), automatic clusters named
// from a metadata column, and projection quality (quality.js: colour by it; the inspector
// line). Server analyses run on the shown projection's finished job; a local data set has none.

import { el, formatCount, setOptions } from '../dom.js';
import { CELL, LEVELS, SIGMA } from './density.js';
import { createQualitySection } from './quality.js';

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
  if (p.status === 'interrupted') return 'Server unreachable: available once it is back and the projection has finished.';
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
  const quality = createQualitySection(app, () => shownJob(app));
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
    ...quality.elements);
  let clustersFor = null;
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
    quality.render();
  }

  return { element: section, pointQuality: quality.pointQuality, render };
}
