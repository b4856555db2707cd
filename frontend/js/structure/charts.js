// The charts panel (cross-filtering): a histogram per numeric column, the most frequent
// values per categorical column, missing counts. Brushing a histogram or clicking a bar
// selects those rows on the map; any selection (map, search, neighbours) redraws every
// chart as selected-over-all. Charts are canvases over binned typed arrays: no per-row DOM.

import { download, el, formatCount } from '../dom.js';
import { categoryBinning, csvLine, numericBinning, rowsInBins, selectedCounts } from './binning.js';

const MAX_COLUMNS = 16;
const TABLE_ROWS = 200;
const HIST_HEIGHT = 64;
const BAR_HEIGHT = 15;

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
  // A large server set's columns are fetched when asked for: its charts wait until the panel
  // has been on screen, so a table of many columns costs nothing until someone looks.
  let seen = false;
  new IntersectionObserver((entries, observer) => {
    if (!entries.some((e) => e.isIntersecting)) return;
    seen = true;
    observer.disconnect();
    app.render();
  }).observe(section);

  csvButton.addEventListener('click', () => exportCsv());

  function build() {
    const ds = app.dataset;
    chartsFor = ds?.metadata ?? null;
    charts = [];
    list.replaceChildren();
    if (!ds?.metadata) return;
    for (const column of ds.columns.slice(0, MAX_COLUMNS)) {
      if (!ds.values(column)) continue; // fetched now (a large set): the panel rebuilds when it comes
      const numbers = ds.numeric(column);
      const numeric = Boolean(numbers) && !ds.categoricalByDefault(column);
      const binning = numeric ? numericBinning(numbers) : categoryBinning(ds.values(column));
      const canvas = el('canvas', { class: 'chart-canvas', 'aria-label': `Chart of ${column}` });
      const title = el('div', { class: 'chart-title' }, el('span', {}, column), el('span', { class: 'chart-missing' }, binning.missing ? `${formatCount(binning.missing)} missing` : ''));
      const node = el('div', { class: 'chart', 'data-testid': 'chart', 'data-column': column, 'data-kind': binning.kind }, title, canvas);
      const chart = { column, binning, canvas, node, selected: null, brush: null };
      bindChart(chart);
      charts.push(chart);
      list.append(node);
    }
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
    const { canvas, binning } = chart;
    const numeric = binning.kind === 'numeric';
    const width = Math.max(120, canvas.clientWidth || 240);
    const height = numeric ? HIST_HEIGHT : binning.counts.length * BAR_HEIGHT;
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
      canvas.width = Math.round(width * dpr);
      canvas.height = Math.round(height * dpr);
      canvas.style.height = `${height}px`;
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const css = getComputedStyle(document.documentElement);
    const all = css.getPropertyValue('--chart-all').trim() || '#c9d3e0';
    const picked = css.getPropertyValue('--accent').trim() || '#3b6fb6';
    const text = css.getPropertyValue('--text').trim() || '#1f2328';
    const max = Math.max(1, ...binning.counts);
    const bins = binning.counts.length;
    const brush = chart.brush ? [Math.min(...chart.brush), Math.max(...chart.brush)] : null;
    for (let b = 0; b < bins; b++) {
      const share = binning.counts[b] / max;
      const sel = chart.selected ? chart.selected[b] / max : 0;
      const inBrush = brush && b >= brush[0] && b <= brush[1];
      if (numeric) {
        const x = (b / bins) * width;
        const w = Math.max(1, width / bins - 1);
        ctx.fillStyle = inBrush ? picked : all;
        ctx.globalAlpha = inBrush ? 0.35 : 1;
        ctx.fillRect(x, height - share * (height - 2), w, share * (height - 2));
        ctx.globalAlpha = 1;
        ctx.fillStyle = picked;
        if (sel > 0) ctx.fillRect(x, height - Math.max(1, sel * (height - 2)), w, Math.max(1, sel * (height - 2)));
      } else {
        const labelWidth = Math.min(110, width * 0.45);
        const barWidth = width - labelWidth - 48;
        const y = b * BAR_HEIGHT;
        ctx.fillStyle = inBrush ? picked : all;
        ctx.fillRect(labelWidth, y + 2, Math.max(1, share * barWidth), BAR_HEIGHT - 4);
        ctx.fillStyle = picked;
        if (sel > 0) ctx.fillRect(labelWidth, y + 2, Math.max(1, sel * barWidth), BAR_HEIGHT - 4);
        ctx.fillStyle = text;
        ctx.font = '11px system-ui, sans-serif';
        ctx.textBaseline = 'middle';
        ctx.fillText(clip(ctx, binning.labels[b], labelWidth - 4), 0, y + BAR_HEIGHT / 2);
        const count = chart.selected ? `${formatCount(chart.selected[b])}/${formatCount(binning.counts[b])}` : formatCount(binning.counts[b]);
        ctx.fillText(count, labelWidth + Math.max(1, share * barWidth) + 3, y + BAR_HEIGHT / 2);
      }
    }
    chart.node.dataset.counts = Array.from(binning.counts).join(',');
    chart.node.dataset.selected = chart.selected ? Array.from(chart.selected).join(',') : '';
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
    const body = rows.slice(0, TABLE_ROWS).map((i) => el('tr', { 'data-index': i, onclick: () => app.update({ selection: [i], focus: i }) },
      el('td', {}, String(i)), ...columns.map((c) => el('td', {}, ds.values(c)?.[i] ?? ''))));
    table.replaceChildren(el('thead', {}, head), el('tbody', {}, ...body));
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
    download(`${ds.name}-selection.csv`, `${lines.join('\n')}\n`, 'text/csv');
  }

  return {
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
        for (const chart of charts) chart.selected = selection.length ? selectedCounts(chart.binning, selection) : null;
        for (const chart of charts) draw(chart);
      }
      summary.textContent = !ds?.metadata
        ? 'No metadata to chart.'
        : selection.length
          ? `${formatCount(selection.length)} of ${formatCount(ds.n)} selected (dark). Drag a histogram or click a bar to select; shift adds.`
          : 'Drag a histogram or click a bar to select those points; shift adds.';
      renderTable();
    },
    resized() {
      for (const chart of charts) draw(chart);
    },
  };
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
