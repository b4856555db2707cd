// What leaves the app: "Save image" in the plot toolbar (PNG at 1x, 2x, 4x or a chosen width,
// or SVG), "Export selection" in the inspector (the selected rows' metadata and coordinates
// as CSV/TSV, headed by the URL of the view they came from) and "Export site" in the Data
// panel (a zip of the current view as a static site, built by the server: hidden in a
// shared site). Installed with installExports(app); uses the app's public members only.

import { errorOf } from '../api.js';
import { download, el, formatCount } from '../dom.js';
import { encodeState } from '../state.js';
import { plotSvg, renderPlotImage, scaleFor } from './plot_image.js';
import { selectionTable } from './selection.js';

const CHOICES = [
  ['2', 'PNG 2×'],
  ['1', 'PNG 1×'],
  ['4', 'PNG 4×'],
  ['width', 'PNG, width…'],
  ['svg', 'SVG'],
];

/** Neighbour lists a site made from the page holds at most (rows x k; 40 MB of rows and
 * distances): its view's k when they fit, else fewer, but never fewer than `projector
 * export`'s own default. */
const SITE_NEIGHBOR_ENTRIES = 5_000_000;
const SITE_NEIGHBORS_AT_LEAST = 30;

/** The neighbours per point a site of `n` points keeps for a view asking `k`. */
export function siteNeighbors(n, k) {
  return Math.min(k, Math.max(SITE_NEIGHBORS_AT_LEAST, Math.floor(SITE_NEIGHBOR_ENTRIES / Math.max(1, n))));
}

function legendOf(app) {
  const coloring = app.highlight.coloring;
  if (!coloring || coloring.kind === 'none' || !coloring.legend) return null;
  return { title: app.state.colorBy, coloring };
}

function baseName(app) {
  const ds = app.dataset;
  const safe = (s) => String(s).replace(/[^\w.-]+/g, '_');
  return `${safe(ds?.name ?? 'plot')}-${safe(app.shown?.method ?? 'view')}`;
}

/**
 * Saves the plot as `choice` ('1', '2', '4', 'width' with `width`, or 'svg').
 * @param {import('../app.js').App} app
 */
export async function saveImage(app, choice = '2', width = null) {
  const plot = app.plot;
  if (!plot.n) {
    app.setMessage('Nothing to save yet', true);
    return null;
  }
  const legend = legendOf(app);
  const name = baseName(app);
  try {
    if (choice === 'svg') {
      download(`${name}.svg`, plotSvg(plot, { legend }), 'image/svg+xml');
      app.setMessage(`Saved ${name}.svg`);
      return { format: 'svg' };
    }
    const scale = choice === 'width' ? scaleFor(plot, { width }) : Number(choice) || 2;
    const canvas = renderPlotImage(plot, { scale, legend });
    const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
    download(`${name}.png`, blob);
    app.setMessage(`Saved ${name}.png (${canvas.width} × ${canvas.height} px)`);
    return { format: 'png', width: canvas.width, height: canvas.height };
  } catch (err) {
    app.setMessage(`Save image: ${err.message}`, true);
    return null;
  }
}

/** A toolbar icon: a path, and a circle when given. */
function icon(path, circle = null) {
  const svg = (tag, attributes) => {
    const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
    return node;
  };
  const root = svg('svg', { viewBox: '0 0 24 24' });
  root.append(svg('path', { d: path }));
  if (circle) root.append(svg('circle', circle));
  return root;
}

function installSaveImage(app) {
  const toolbar = app.plot.container.querySelector('.plot-toolbar');
  if (!toolbar) return;
  const button = el('button', { type: 'button', class: 'tool', 'data-testid': 'save-image', title: 'Save image: what is on screen, at full detail (PNG at 2× its size unless chosen otherwise)', 'aria-label': 'Save image' });
  button.append(icon('M4 8h3l2-3h6l2 3h3v11H4z', { cx: '12', cy: '13', r: '3.5' }));
  // The choices sit in a small menu, so the toolbar stays narrow over the points.
  const more = el('button', { type: 'button', class: 'tool tool-narrow', 'data-testid': 'save-image-options', title: 'Image format and size', 'aria-label': 'Image format and size', 'aria-expanded': 'false' });
  more.append(icon('M8 10l4 4 4-4'));
  const choice = el('select', { 'data-testid': 'save-image-format', 'aria-label': 'Image format and size' },
    ...CHOICES.map(([value, label]) => el('option', { value }, label)));
  const width = el('input', { type: 'number', min: '100', max: '16384', step: '100', value: '3000', hidden: true, 'data-testid': 'save-image-width', 'aria-label': 'Image width in pixels' });
  const menu = el('div', { class: 'save-image-menu', hidden: true }, choice, width);
  choice.addEventListener('change', () => {
    width.hidden = choice.value !== 'width';
  });
  more.addEventListener('click', () => {
    menu.hidden = !menu.hidden;
    more.setAttribute('aria-expanded', String(!menu.hidden));
  });
  button.addEventListener('click', () => saveImage(app, choice.value, Number(width.value)));
  toolbar.append(el('span', { class: 'toolbar-sep' }), button, more);
  toolbar.after(menu);
}

/**
 * Puts the view's URL on the clipboard (where the browser allows it: a page on localhost or
 * HTTPS); else says that the address bar holds it.
 * @param {import('../app.js').App} app
 */
async function copyViewLink(app) {
  try {
    await navigator.clipboard.writeText(app.viewUrl());
    app.setMessage("Copied this view's link");
  } catch {
    app.setMessage("The browser refused the clipboard: this view's link is the address bar's", true);
  }
}

function installExportSelection(app) {
  const actions = document.querySelector('.selection-actions');
  if (!actions) return;
  const format = el('select', { 'data-testid': 'export-selection-format', 'aria-label': 'Selection file format' },
    el('option', { value: ',' }, 'CSV'), el('option', { value: '\t' }, 'TSV'));
  const button = el('button', { type: 'button', class: 'button', 'data-testid': 'export-selection', disabled: true, title: "The selected rows' metadata and coordinates as a plain table (Copy link gives this view's URL)" }, 'Export selection');
  const copy = el('button', { type: 'button', class: 'button', 'data-testid': 'copy-view-link', title: "Copy this view's link: opening it restores the view, the selection included (up to 2,000 rows)" }, 'Copy link');
  copy.addEventListener('click', () => copyViewLink(app));
  button.addEventListener('click', async () => {
    const ds = app.dataset;
    const rows = app.state.selection;
    if (!ds || !rows.length) return;
    await ds.ensureColumns(ds.columns); // a large set's columns come when asked for
    const sep = format.value;
    const text = selectionTable(app, rows, sep);
    const ext = sep === ',' ? 'csv' : 'tsv';
    download(`${baseName(app)}-selection.${ext}`, text, ext === 'csv' ? 'text/csv' : 'text/tab-separated-values');
    app.setMessage(`Exported ${formatCount(rows.length)} selected rows`);
  });
  actions.after(el('div', { class: 'button-row export-selection-row' }, button, format, copy));
  app.panels.push({ render: () => { button.disabled = !app.state.selection.length || !app.dataset; } });
}

function installExportSite(app) {
  const downloads = document.querySelector('.downloads');
  if (!downloads || app.api.isStatic) return;
  const button = el('button', { type: 'button', class: 'link-button', 'data-testid': 'export-site', title: 'This view as a static site (a zip): open it on any static host, no server needed' }, 'site.zip');
  button.addEventListener('click', async () => {
    const ds = app.dataset;
    if (!ds || ds.local) {
      app.setMessage('Export site works on LOGDIR data', true);
      return;
    }
    // PCA always, and the projection on screen with the parameters it was computed with.
    const methods = ['pca', app.state.projection].filter((m, i, all) => ['pca', 'tsne', 'umap'].includes(m) && all.indexOf(m) === i);
    const requests = Object.fromEntries(methods.map((m) => [m, app.projecting.requestFor(m)]));
    // The site lists the view's neighbours (as many as it can hold): it opens on the view
    // with the k it holds, not on a k it must move (and say so).
    const k = siteNeighbors(ds.n, app.state.neighbors.k);
    const view = encodeState({ ...app.state, neighbors: { ...app.state.neighbors, k } });
    const params = { run: ds.run, embedding: ds.name, projection: methods.join(','), requests: JSON.stringify(requests), neighbors: k };
    if (view.length < 20000) params.view = view;
    const task = app.progress.start('Building the site…');
    try {
      const response = await fetch(app.api.url('export/site', params));
      if (!response.ok) throw await errorOf(response);
      download(`${baseName(app)}-site.zip`, await response.blob());
      const fewer = k < app.state.neighbors.k ? ` It lists ${k} neighbours a point (${formatCount(ds.n)} points).` : '';
      app.setMessage(`Saved the site: unzip it on any static host (or python -m http.server).${fewer}`);
    } catch (err) {
      app.setMessage(`Export site: ${err.message}`, true);
    } finally {
      task.done();
    }
  });
  downloads.append(button);
}

/** @param {import('../app.js').App} app */
export function installExports(app) {
  installSaveImage(app);
  installExportSelection(app);
  installExportSite(app);
}
