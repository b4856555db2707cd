// Inspector panel: search (substring or regex) with match count and list, selection actions
// (isolate, show all, clear), the selected point's metadata card, and its nearest
// neighbours with distance bars and sprite thumbnails.

import { neighborLimit } from '../kernels.js';
import { $, el, formatCount, setOptions } from '../dom.js';
import { clampToLimit, limitFor } from '../limits.js';

const RESULT_LIMIT = 100;
// Rows shown before "more": a long list would stand between the search box and the
// neighbours in the tab order (issue 33, item 18).
const RESULTS_FIRST = 8;

/** A sprite thumbnail of point i as a CSS background crop of its atlas page. */
export function thumbnail(sprite, i, size) {
  const page = sprite.page(i);
  const col = (i - page.first) % page.cols;
  const row = Math.floor((i - page.first) / page.cols);
  const scale = size / Math.max(sprite.cellWidth, sprite.cellHeight);
  // Greyscale ink on light paper (sprite_atlas.js inkOf) is inverted in the dark theme (CSS).
  const node = el('div', { class: sprite.ink?.lightPaper ? 'thumb ink-on-paper' : 'thumb', 'aria-hidden': 'true' });
  node.style.backgroundImage = `url("${page.url}")`;
  node.style.backgroundSize = `${page.width * scale}px ${page.height * scale}px`;
  node.style.backgroundPosition = `${-col * sprite.cellWidth * scale}px ${-row * sprite.cellHeight * scale}px`;
  node.style.width = `${sprite.cellWidth * scale}px`;
  node.style.height = `${sprite.cellHeight * scale}px`;
  return node;
}

/** @param {import('../app.js').App} app */
export function createInspectorPanel(app) {
  const column = $('search-column');
  const input = $('search-input');
  const regex = $('search-regex');
  const results = $('search-results');
  const list = $('neighbors-list');
  const card = $('point-card');
  const kInput = $('neighbors-k');
  const metric = $('neighbors-metric');
  let resultsFor = null;
  let resultsOpen = false; // "more" pressed for the current results
  const more = el('button', { type: 'button', class: 'link-button results-more', 'data-testid': 'search-results-more', hidden: true });
  results.after(more);
  more.addEventListener('click', () => {
    resultsOpen = true;
    showResults();
    /** @type {HTMLElement | null} */ (results.children[RESULTS_FIRST])?.focus();
  });
  let neighborsFor = null;
  let cardFor = null;

  const setSearch = (patch) => app.update({ search: { ...app.state.search, ...patch } });
  column.addEventListener('change', () => setSearch({ column: column.value || null }));
  input.addEventListener('input', () => setSearch({ query: input.value }));
  regex.addEventListener('change', () => setSearch({ regex: regex.checked }));
  $('isolate-selection').addEventListener('click', () => app.highlight.isolateSelection());
  $('show-all').addEventListener('click', () => app.update({ isolated: null }));
  $('clear-selection').addEventListener('click', () => app.highlight.clearSelection());
  // The field shows the k that is used (the data's limit applied); anything else is said.
  const kNote = el('p', { class: 'hint', 'data-testid': 'neighbors-k-note', hidden: true });
  kInput.closest('.field-row')?.after(kNote);
  // The data's limit (what the neighbour query clamps to), and the field's own for typing.
  const dataLimit = () => {
    const ds = app.dataset;
    return (ds?.local ? neighborLimit(ds.n) : limitFor(ds, 'neighbors', 'k')) ?? { minimum: 1 };
  };
  const kLimit = () => ({ minimum: 1, maximum: Math.min(Number(kInput.max) || 1000, dataLimit().maximum ?? Infinity) });
  const usedK = () => clampToLimit(app.state.neighbors.k, dataLimit());
  const sayK = (text, error) => {
    kNote.hidden = !text;
    kNote.textContent = text;
    kNote.className = error ? 'error-text' : 'hint';
    kInput.setAttribute('aria-invalid', String(Boolean(error)));
  };
  kInput.addEventListener('change', () => {
    const wanted = Number(kInput.value);
    const { maximum } = kLimit();
    if (!kInput.value.trim() || !Number.isInteger(wanted) || wanted < 1) {
      sayK(`Neighbours: a whole number from 1 to ${formatCount(maximum)}; “${kInput.value}” is not one. Still ${formatCount(usedK())}.`, true);
      kInput.value = usedK();
      return;
    }
    const k = clampToLimit(wanted, kLimit());
    sayK(k !== wanted ? `${formatCount(k)} neighbours: at most ${formatCount(maximum)} here.` : '', false);
    app.update({ neighbors: { ...app.state.neighbors, k } });
    kInput.value = k;
  });
  metric.addEventListener('change', () => app.update({ neighbors: { ...app.state.neighbors, metric: metric.value } }));

  // Rows are reached with Tab too: focus hovers the point, Enter (or Space) picks it.
  const rowEvents = (i) => ({
    tabindex: '0',
    onclick: () => app.highlight.selectPoint(i),
    onmouseenter: () => app.highlight.hoverPoint(i),
    onmouseleave: () => app.highlight.hoverPoint(-1),
    onfocus: () => app.highlight.hoverPoint(i),
    onblur: () => app.highlight.hoverPoint(-1),
    onkeydown: (event) => {
      if (event.key !== 'Enter' && event.key !== ' ') return;
      event.preventDefault();
      app.highlight.selectPoint(i);
    },
  });

  function renderSearch() {
    const { search } = app.state;
    const columns = app.dataset ? app.dataset.columns : [];
    setOptions(column, columns.map((c) => ({ value: c, label: c })), search.column ?? '');
    // Without metadata there is nothing to match: say so instead of a field that finds nothing.
    const searchable = columns.length > 0;
    for (const control of [column, input, regex]) control.disabled = !searchable;
    input.placeholder = searchable ? 'Search' : 'No metadata to search';
    if (input.value !== search.query) input.value = search.query;
    regex.checked = search.regex;
    const { indices, error } = app.highlight.searchResult;
    const errorBox = $('search-error');
    errorBox.hidden = !error;
    errorBox.textContent = error ? `Invalid search: ${error}` : '';
    $('match-count').textContent = search.query && !error ? `${formatCount(indices.length)} match${indices.length === 1 ? '' : 'es'}` : '';
    if (resultsFor === app.highlight.searchResult) return;
    resultsFor = app.highlight.searchResult;
    resultsOpen = false;
    showResults();
  }

  /** The first rows of the results, the rest (to RESULT_LIMIT) behind "more". */
  function showResults() {
    const { indices } = app.highlight.searchResult;
    const shown = Math.min(indices.length, resultsOpen ? RESULT_LIMIT : RESULTS_FIRST);
    results.replaceChildren(
      ...indices.slice(0, shown).map((i) =>
        el('li', { ...rowEvents(i), dataset: { index: i } }, el('span', { class: 'row-label' }, app.highlight.labelOf(i)), el('span', { class: 'row-index' }, `#${i}`)),
      ),
    );
    const rest = Math.min(indices.length, RESULT_LIMIT) - shown;
    more.hidden = rest <= 0;
    more.textContent = `${formatCount(rest)} more`;
  }

  function renderCard() {
    const focus = app.state.focus;
    const ds = app.dataset;
    const key = `${focus}|${app.state.labelBy}|${ds?.name}|${ds?.metadata?.columns.filter(Boolean).length}|${ds?.edits}`;
    if (key === cardFor) return;
    cardFor = key;
    card.hidden = focus === null || !ds;
    if (card.hidden) return;
    // Without a label column the label is the row number already: it is not said twice.
    const label = app.highlight.labelOf(focus);
    const index = label === `#${focus}` ? null : el('span', { class: 'row-index' }, `#${focus}`);
    const title = el('div', { class: 'card-title' }, ds.sprite ? thumbnail(ds.sprite, focus, 40) : null, el('span', {}, label), index);
    const rows = ds.columns.length ? [] : [el('dd', { class: 'hint' }, 'No metadata')];
    for (const name of ds.columns) rows.push(el('dt', {}, name), el('dd', {}, ds.values(name)?.[focus] || '–'));
    card.replaceChildren(title, ...rows);
  }

  function renderNeighbors() {
    const nb = app.highlight.neighbors;
    const ds = app.dataset;
    const { metric: m } = app.state.neighbors;
    if (document.activeElement !== kInput) kInput.value = usedK();
    metric.value = m;
    $('neighbors-hint').hidden = nb.length > 0;
    const key = `${app.state.labelBy}|${Boolean(ds?.sprite)}`;
    if (neighborsFor?.list === nb && neighborsFor.key === key) return;
    neighborsFor = { list: nb, key };
    const max = nb.reduce((a, b) => Math.max(a, b.distance), 0) || 1;
    list.replaceChildren(
      ...nb.map(({ index, distance }) =>
        el(
          'li',
          { ...rowEvents(index), class: ds?.sprite ? null : 'no-thumb', dataset: { index } },
          ds?.sprite ? thumbnail(ds.sprite, index, 28) : null,
          el('span', { class: 'row-label', title: app.highlight.labelOf(index) }, app.highlight.labelOf(index)),
          el('div', { class: 'distance-bar' }, el('div', { style: { width: `${(distance / max) * 100}%` } })),
          el('span', { class: 'row-distance' }, distance.toFixed(3)),
        ),
      ),
    );
  }

  function render() {
    renderSearch();
    renderCard();
    renderNeighbors();
    const hasSelection = app.state.selection.length > 0;
    $('isolate-selection').disabled = !hasSelection;
    $('isolate-selection').textContent = hasSelection
      ? `Isolate ${formatCount(new Set([...app.state.selection, ...app.highlight.neighbors.map((n) => n.index)]).size)}`
      : 'Isolate';
    $('show-all').disabled = !app.state.isolated;
    $('clear-selection').disabled = !hasSelection;
  }

  function hovered(i) {
    for (const row of list.querySelectorAll('li.hovered')) row.classList.remove('hovered');
    if (i >= 0) list.querySelector(`li[data-index="${i}"]`)?.classList.add('hovered');
  }

  return { render, hovered };
}
