// The charts panel (cross-filtering): a histogram per numeric column, the most frequent
// values per categorical column, missing counts. Brushing a histogram or clicking a bar
// selects those rows on the map; any selection (map, search, neighbours) redraws every
// chart as selected-over-all. Charts are canvases over binned typed arrays: no per-row DOM.

import { clearedCanvas, download, el, formatCount } from '../dom.js';
import { downloadName } from '../file_names.js';
import { nextTask } from '../yielding.js';
import { categoryBinning, csvLine, numericBinning, rowsInBins, selectedCounts } from './binning.js';

const MAX_COLUMNS = 16;
const TABLE_ROWS = 200;
const HIST_HEIGHT = 64;
const BAR_HEIGHT = 15;

/** @param {import('../app.js').App} app */
export function createChartsPanel(app) {
  const list = el('div', { class: 'charts-list', 'data-testid': 'charts-list' });
  const summary = el('p', { class: 'hint', 'data-testid': 'charts-summary' });
  const tableCount = el('span', { 'data-testid': 'table-count' });
  const csvButton = el('button', { type: 'button', class: 'link-button', 'data-testid': 'table-csv' }, 'selection.csv');
  const table = el('table', { class: 'selection-table', 'data-testid': 'selection-table' });
  const section = el(
    'section',
    { class: 'panel', 'data-testid': 'charts-panel', 'aria-label': 'Charts' },
    el('h2', { class: 'panel-title' }, 'Charts'),
    summary,
    list,
    el('div', { class: 'table-actions' }, tableCount, csvButton),
    el('div', { class: 'table-wrap' }, table),
  );
  let charts = [];
  let chartsFor = null;
  let selectionFor = null;
  let sort = { column: null, descending: false };
  let tableFor = null;
  let bandFor = null; // the selection a histogram's brush made (its band shows while it lasts)
  // A large server set's columns are fetched when asked for: its charts wait until the panel
  // has been on screen, so a table of many columns costs nothing until someone looks.
  let seen = false;
  // Each column's binning, by its values (an array kept while the column is unchanged): a
  // column's arrival rebuilds the panel without binning the others again. A column not binned
  // yet is binned in a task of its own (millions of rows each), then the panel rebuilds.
  const binnings = new WeakMap();
  const queued = new WeakSet();
  new IntersectionObserver((entries, observer) => {
    if (!entries.some((e) => e.isIntersecting)) return;
    seen = true;
    observer.disconnect();
    app.render();
  }).observe(section);

  csvButton.addEventListener('click', () => exportCsv());
  // The charts are drawn in the theme's colours: a theme switch redraws them.
  new MutationObserver(() => {
    for (const chart of charts) draw(chart);
  }).observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });

  function build() {
    const ds = app.dataset;
    chartsFor = ds?.metadata ?? null;
    charts = [];
    list.replaceChildren();
    if (!ds?.metadata) return;
    for (const column of ds.columns.slice(0, MAX_COLUMNS)) {
      const values = ds.values(column);
      if (!values) continue; // fetched now (a large set): the panel rebuilds when it comes
      const binning = binnings.get(values);
      if (!binning) {
        binSoon(ds, column, values);
        continue;
      }
      const numeric = binning.kind === 'numeric';
      const missing = el('span', { class: 'chart-missing' }, binning.missing ? `${formatCount(binning.missing)} missing` : '');
      const title = el('div', { class: 'chart-title' }, el('span', {}, column), missing);
      const node = el('div', { class: 'chart', 'data-testid': 'chart', 'data-column': column, 'data-kind': binning.kind }, title);
      const chart = { column, binning, canvas: null, node, selected: null, brush: null, band: null, summary: null };
      if (binning.kind === 'unique') {
        chart.summary = el('p', { class: 'chart-summary', 'data-testid': 'chart-summary' });
        node.append(chart.summary);
      } else {
        chart.canvas = el('canvas', { class: 'chart-canvas', 'aria-label': `Chart of ${column}` });
        node.append(chart.canvas);
        if (numeric) node.append(axis(binning.edges));
        bindChart(chart);
      }
      charts.push(chart);
      list.append(node);
    }
  }

  /** Bins `column` in a later task, then rebuilds the panel (its charts in column order). */
  function binSoon(ds, column, values) {
    if (queued.has(values)) return;
    queued.add(values);
    nextTask().then(() => {
      queued.delete(values); // the set shown again later is binned then
      if (app.dataset !== ds || !ds.columns.includes(column)) return;
      const numbers = ds.numeric(column);
      const numeric = Boolean(numbers) && !ds.categoricalByDefault(column);
      binnings.set(values, numeric ? numericBinning(numbers) : categoryBinning(values, undefined, numbers));
      chartsFor = null;
      panel.render();
    });
  }

  /** The value scale under a histogram: its lowest, middle and highest edge. */
  function axis(edges) {
    const lo = edges[0];
    const hi = edges[edges.length - 1];
    return el('div', { class: 'chart-axis', 'data-testid': 'chart-axis' },
      el('span', {}, fmt(lo)), el('span', {}, fmt((lo + hi) / 2)), el('span', {}, fmt(hi)));
  }

  function binAt(chart, event) {
    const rect = chart.canvas.getBoundingClientRect();
    const bins = chart.binning.counts.length;
    if (chart.binning.kind === 'numeric') return Math.max(0, Math.min(bins - 1, Math.floor(((event.clientX - rect.left) / rect.width) * bins)));
    const b = Math.floor((event.clientY - rect.top) / BAR_HEIGHT);
    return b >= 0 && b < bins ? b : -1;
  }

  function bindChart(chart) {
    const { canvas } = chart;
    canvas.addEventListener('pointerdown', (event) => {
      const b = binAt(chart, event);
      if (b < 0) return;
      canvas.setPointerCapture(event.pointerId);
      chart.brush = [b, b];
      draw(chart);
    });
    canvas.addEventListener('pointermove', (event) => {
      if (!chart.brush || chart.binning.kind !== 'numeric') return;
      chart.brush[1] = binAt(chart, event);
      draw(chart);
    });
    canvas.addEventListener('pointerup', (event) => {
      if (!chart.brush) return;
      const [a, b] = chart.brush;
      chart.brush = null;
      select(chart, Math.min(a, b), Math.max(a, b), event.shiftKey || event.ctrlKey || event.metaKey);
      // The brushed range stays marked (a band) while its selection is the map's.
      if (chart.binning.kind === 'numeric') {
        chart.band = [Math.min(a, b), Math.max(a, b)];
        bandFor = app.state.selection;
        draw(chart);
      }
    });
  }

  function select(chart, first, last, additive) {
    const rows = rowsInBins(chart.binning, first, last);
    const selection = additive ? [...new Set([...app.state.selection, ...rows])] : rows;
    const what = chart.binning.kind === 'numeric'
      ? `${chart.column} in [${fmt(chart.binning.edges[first])}, ${fmt(chart.binning.edges[last + 1])}]`
      : `${chart.column} = ${chart.binning.labels[first]}`;
    app.update({ selection, focus: selection.length === 1 ? selection[0] : null });
    // The bar counts the selection; the message says what it is, while it is.
    app.setMessage(`Selected where ${what}`, false, { holds: () => app.state.selection === selection });
  }

  function draw(chart) {
    if (chart.summary) {
      drawSummary(chart);
      return;
    }
    const { canvas, binning } = chart;
    const numeric = binning.kind === 'numeric';
    const width = Math.max(120, canvas.clientWidth || 240);
    const height = numeric ? HIST_HEIGHT : binning.counts.length * BAR_HEIGHT;
    canvas.style.height = `${height}px`;
    const ctx = clearedCanvas(canvas, width, height);
    const css = getComputedStyle(document.documentElement);
    const all = css.getPropertyValue('--chart-all').trim() || '#c9d3e0';
    const picked = css.getPropertyValue('--accent').trim() || '#3b6fb6';
    const text = css.getPropertyValue('--text').trim() || '#1f2328';
    const muted = css.getPropertyValue('--muted').trim() || '#5f6670';
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    const max = Math.max(1, ...binning.counts);
    const bins = binning.counts.length;
    const brush = chart.brush ? [Math.min(...chart.brush), Math.max(...chart.brush)] : chart.band;
    const countText = (b) => (chart.selected ? `${formatCount(chart.selected[b])}/${formatCount(binning.counts[b])}` : formatCount(binning.counts[b]));
    const labelWidth = Math.min(110, width * 0.45);
    // Room for the widest count, so no count is cut at the panel's edge.
    let countWidth = 0;
    if (!numeric) for (let b = 0; b < bins; b++) countWidth = Math.max(countWidth, ctx.measureText(countText(b)).width);
    const barWidth = Math.max(1, width - labelWidth - countWidth - 6);
    if (numeric && brush) {
      const x0 = (brush[0] / bins) * width;
      const x1 = ((brush[1] + 1) / bins) * width;
      ctx.fillStyle = picked;
      ctx.globalAlpha = 0.14;
      ctx.fillRect(x0, 0, x1 - x0, height);
      ctx.globalAlpha = 0.9;
      ctx.fillRect(x0, 0, 1, height);
      ctx.fillRect(x1 - 1, 0, 1, height);
      ctx.globalAlpha = 1;
    }
    for (let b = 0; b < bins; b++) {
      const share = binning.counts[b] / max;
      const sel = chart.selected ? chart.selected[b] / max : 0;
      const inBrush = brush && b >= brush[0] && b <= brush[1];
      if (numeric) {
        const x = (b / bins) * width;
        const w = Math.max(1, width / bins - 1);
        ctx.fillStyle = all;
        ctx.fillRect(x, height - share * (height - 2), w, share * (height - 2));
        ctx.fillStyle = picked;
        if (sel > 0) ctx.fillRect(x, height - Math.max(1, sel * (height - 2)), w, Math.max(1, sel * (height - 2)));
      } else {
        const y = b * BAR_HEIGHT;
        ctx.fillStyle = inBrush ? picked : all;
        ctx.fillRect(labelWidth, y + 2, Math.max(1, share * barWidth), BAR_HEIGHT - 4);
        ctx.fillStyle = picked;
        if (sel > 0) ctx.fillRect(labelWidth, y + 2, Math.max(1, sel * barWidth), BAR_HEIGHT - 4);
        ctx.fillStyle = text;
        ctx.fillText(clip(ctx, binning.labels[b], labelWidth - 4), 0, y + BAR_HEIGHT / 2);
        ctx.fillText(countText(b), labelWidth + Math.max(1, share * barWidth) + 3, y + BAR_HEIGHT / 2);
      }
    }
    if (numeric) {
      // The count scale: the tallest bin's count at the top left.
      ctx.fillStyle = muted;
      ctx.textBaseline = 'top';
      ctx.fillText(formatCount(max), 2, 1);
    }
    chart.node.dataset.counts = Array.from(binning.counts).join(',');
    chart.node.dataset.selected = chart.selected ? Array.from(chart.selected).join(',') : '';
    chart.node.dataset.band = chart.band ? chart.band.join(',') : '';
    if (binning.labels) chart.node.dataset.labels = JSON.stringify(binning.labels);
    chart.node.dataset.theme = document.documentElement.dataset.theme ?? '';
  }

  /** A column of (nearly) all different values: how many, and a few of them. */
  function drawSummary(chart) {
    const { binning } = chart;
    const ds = app.dataset;
    const values = ds.values(chart.column);
    const selection = app.state.selection;
    const examples = selection.length ? selection.slice(0, 5).map((i) => values[i]).filter((v) => v !== '') : binning.examples;
    chart.summary.textContent = `${formatCount(binning.distinct)} different values (one per point: no chart)${selection.length ? '; selected' : ''}, e.g. ${examples.join(', ')}`;
    chart.node.dataset.counts = '';
    chart.node.dataset.selected = '';
  }

  function renderTable() {
    const ds = app.dataset;
    const selection = app.state.selection;
    const key = [selection, sort.column, sort.descending, ds, ds?.metadata];
    if (tableFor && key.every((v, i) => v === tableFor[i])) return;
    tableFor = key;
    const columns = ds?.columns ?? [];
    const head = el('tr', {}, ...['#', ...columns].map((c) => {
      const mark = sort.column === c ? (sort.descending ? ' ▼' : ' ▲') : '';
      return el('th', { 'data-column': c, onclick: () => {
        sort = { column: c, descending: sort.column === c && !sort.descending };
        renderTable();
      } }, `${c}${mark}`);
    }));
    const rows = sortedSelection();
    tableCount.textContent = selection.length
      ? `${formatCount(selection.length)} selected${selection.length > TABLE_ROWS ? ` (first ${TABLE_ROWS} shown)` : ''}`
      : 'Select points to list them here';
    csvButton.disabled = !selection.length;
    // A row points at its point (hover: highlighted; click or Enter: focused, its neighbours
    // listed) without changing the selection, so the table stays whole.
    const body = rows.slice(0, TABLE_ROWS).map((i) => el('tr', {
      'data-index': i,
      tabindex: '0',
      class: app.state.focus === i ? 'focused' : null,
      onclick: () => focusRow(i),
      onkeydown: (event) => { if (event.key === 'Enter') focusRow(i); },
      onmouseenter: () => app.highlight.hoverPoint(i),
      onmouseleave: () => app.highlight.hoverPoint(-1),
    }, el('td', {}, String(i)), ...columns.map((c) => el('td', {}, ds.values(c)?.[i] ?? ''))));
    table.replaceChildren(el('thead', {}, head), el('tbody', {}, ...body));
  }

  function focusRow(i) {
    app.update({ focus: i });
    for (const row of table.querySelectorAll('tbody tr')) row.classList.toggle('focused', Number(row.dataset.index) === i);
  }

  function sortedSelection() {
    const ds = app.dataset;
    const rows = [...app.state.selection];
    if (!ds || sort.column === null) return rows;
    const sign = sort.descending ? -1 : 1;
    if (sort.column === '#') return rows.sort((a, b) => sign * (a - b));
    const numbers = ds.numeric(sort.column);
    const values = ds.values(sort.column);
    if (!values) return rows; // still coming from the server
    if (numbers) return rows.sort((a, b) => sign * ((Number.isNaN(numbers[a]) ? Infinity : numbers[a]) - (Number.isNaN(numbers[b]) ? Infinity : numbers[b])) || a - b);
    return rows.sort((a, b) => sign * (values[a] < values[b] ? -1 : values[a] > values[b] ? 1 : a - b));
  }

  async function exportCsv() {
    const ds = app.dataset;
    if (!ds || !app.state.selection.length) return;
    const columns = ds.columns;
    await ds.ensureColumns(columns);
    const lines = [csvLine(['index', ...columns])];
    for (const i of sortedSelection()) lines.push(csvLine([String(i), ...columns.map((c) => ds.values(c)[i])]));
    download(downloadName(ds, 'selection', 'csv'), `${lines.join('\n')}\n`, 'text/csv');
  }

  const panel = {
    element: section,
    render() {
      const ds = app.dataset;
      if ((ds?.metadata ?? null) !== chartsFor && (seen || !ds?.fetchColumn)) {
        build();
        selectionFor = null;
      }
      const selection = app.state.selection;
      if (selection !== selectionFor) {
        selectionFor = selection;
        if (selection !== bandFor) for (const chart of charts) chart.band = null;
        for (const chart of charts) chart.selected = selection.length ? selectedCounts(chart.binning, selection) : null;
        for (const chart of charts) draw(chart);
      }
      summary.textContent = !ds?.metadata
        ? 'No metadata to chart.'
        : selection.length
          ? `${formatCount(selection.length)} of ${formatCount(ds.n)} selected (highlighted). Drag a histogram or click a bar to select; shift adds.`
          : 'Drag a histogram or click a bar to select those points; shift adds.';
      renderTable();
    },
    resized() {
      for (const chart of charts) draw(chart);
    },
  };
  return panel;
}

function fmt(v) {
  return Number(v.toPrecision(4)).toString();
}

function clip(ctx, text, width) {
  if (ctx.measureText(text).width <= width) return text;
  let s = text;
  while (s.length > 1 && ctx.measureText(`${s}…`).width > width) s = s.slice(0, -1);
  return `${s}…`;
}
