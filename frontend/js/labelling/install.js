// Labelling: the Inspector's "Label the selection" and a note on the focused point, kept in
// the server's annotation store (GET/POST /api/annotations, docs/LABELLING.md). Whatever made
// the selection (a click, a box or lasso, a search, a cluster, a chart's brush), one click (or
// Enter) labels it; Ctrl+Z / Ctrl+Shift+Z undo and redo this page's author's last edit. The
// page says an edit is saved only once the server committed it, then colours it at once; an
// edit anyone else makes (another tab or user, a notebook, an assistant) arrives on the event
// stream and shows without a reload. A column made for another row count is listed with the
// reason and its export. Where nothing is kept (an upload, a shared site, a read-only server)
// the old session tags remain: shown here, downloadable, gone with the page.

import { $, el, formatCount } from '../dom.js';
import { splitStep } from '../training/timeline.js';
import { tagProblem } from '../metadata_edit.js';
import { persistBookmarks } from './bookmarks.js';
import { refreshColumn } from './columns.js';

/** The column a note is written in (`notes` when the data has a `note` of its own). */
const NOTE_COLUMN = 'note';

/**
 * @typedef {object} Labelling  what the page knows of the store for the data set shown
 * @property {any} dataset  the data set it was read for
 * @property {boolean} enabled  the server keeps annotations
 * @property {string | null} reason  why not
 * @property {Array<{ name: string, kind: string, shown: boolean, reason: string | null }>} columns
 * @property {Set<number>} own  edits this page committed (their events change nothing here)
 */

/** @param {import('../app.js').App} app */
export function installLabelling(app) {
  const columnInput = /** @type {HTMLInputElement} */ ($('edit-column'));
  const valueInput = /** @type {HTMLInputElement} */ ($('edit-value'));
  const names = $('#edit-column-names');
  const labelButton = /** @type {HTMLButtonElement} */ ($('tag-selection'));
  const undoButton = /** @type {HTMLButtonElement} */ ($('label-undo'));
  const redoButton = /** @type {HTMLButtonElement} */ ($('label-redo'));
  const status = $('edit-status');
  const hidden = $('label-hidden');
  const noteBox = $('note-editor');
  const noteText = /** @type {HTMLTextAreaElement} */ ($('point-note'));
  /** @type {Labelling} */
  let store = { dataset: null, enabled: false, reason: null, columns: [], own: new Set() };
  let busy = false;
  /** @type {Promise<void> | null} this page's edit in flight: its event may come before its answer */
  let inFlight = null;
  let noteFor = null;

  /** What the status line says; `edit`: the store's edit now shown here (tests wait on it). */
  const say = (text, { error = false, edit = null } = {}) => {
    status.textContent = text;
    status.classList.toggle('error-text', error);
    if (edit !== null) status.dataset.edit = String(edit);
  };

  async function readStore(ds) {
    store = { dataset: ds, enabled: false, reason: null, columns: [], own: store.own };
    if (ds.local || app.api.isStatic) {
      store.reason = ds.local ? 'uploaded data is not kept' : 'a shared site keeps nothing';
    } else {
      const answer = await app.api.annotationColumns(ds.run, ds.name).catch((err) => ({ enabled: false, reason: err.message, columns: [] }));
      if (app.dataset !== ds) return;
      Object.assign(store, { enabled: answer.enabled, reason: answer.reason, columns: answer.columns });
    }
    app.render();
  }

  const noteColumn = () => {
    const ds = app.dataset;
    const own = store.columns.some((c) => c.name === NOTE_COLUMN);
    return ds?.columns.includes(NOTE_COLUMN) && !own ? 'notes' : NOTE_COLUMN;
  };

  /** The request's target: the tiles' region when one made the selection, else its rows. */
  function target() {
    const scope = app.highlight.scope();
    const jobId = app.shown?.jobId;
    if (scope?.kind === 'region' && jobId && scope.polygon) {
      return { selection: { job: jobId, polygon: scope.polygon, axes: scope.axes }, count: scope.count };
    }
    return { rows: app.state.selection, count: app.highlight.selectedCount() };
  }

  /**
   * One edit, saved by the server, then shown: `rows` or a region set to `value` in `column`.
   * @param {string} column @param {string} value @param {{ rows?: number[], selection?: any, count: number }} what
   */
  async function label(column, value, what, kind = null) {
    const ds = app.dataset;
    if (!ds || busy) return;
    const problem = tagProblem(column, kind === 'note' ? '' : value);
    if (problem) return say(problem, { error: true });
    if (!store.enabled) return tagHere(ds, column, value, what.rows ?? []);
    busy = true;
    app.render();
    const count = formatCount(what.count);
    say(`Saving ${count} point${what.count === 1 ? '' : 's'}…`);
    try {
      const body = { run: ds.run, embedding: ds.name, column, value: value === '' ? null : value, ...(kind ? { kind } : {}) };
      const answer = await app.api.annotate(what.selection ? { ...body, selection: what.selection } : { ...body, rows: what.rows });
      store.own.add(answer.edit.id);
      await refreshColumn(app, column, {
        rows: what.selection ? null : what.rows,
        region: what.selection ? { polygon: what.selection.polygon, axes: what.selection.axes } : null,
        code: answer.code, value: answer.edit.value ?? '', values: answer.values,
      });
      const done = answer.edit.value ? `“${answer.edit.value}” in ${column}` : `${column} cleared`;
      say(`Saved: ${formatCount(answer.edit.rows)} point${answer.edit.rows === 1 ? '' : 's'}, ${done} (edit ${answer.edit.id})`, { edit: answer.edit.id });
      if (app.dataset === ds) await readStore(ds);
    } catch (err) {
      say(`Not saved: ${err.message}`, { error: true });
    } finally {
      busy = false;
      app.render();
    }
  }

  /** Where the store keeps nothing: the session tag of old (this page only). */
  function tagHere(ds, column, value, rows) {
    ds.tag(column, value, rows);
    const { colorBy, labelBy, search } = app.state;
    if (colorBy === column) app.highlight.recolor();
    if (labelBy === column) app.highlight.updateLabels();
    if (search.column === column && search.query) app.highlight.runSearch({ select: false });
    say(`Tagged ${formatCount(rows.length)} point${rows.length === 1 ? '' : 's'}: ${column} = "${value}" (this page only: ${store.reason})`);
    app.render();
  }

  async function undo(redo = false) {
    const ds = app.dataset;
    if (!ds || busy || !store.enabled) return;
    busy = true;
    try {
      const answer = await app.api.undoAnnotation(ds.run, ds.name, redo);
      store.own.add(answer.edit.id);
      await refreshColumn(app, answer.edit.column, null);
      say(`${redo ? 'Redone' : 'Undone'}: edit ${answer.edit.target} of ${answer.edit.column} (${formatCount(answer.changed)} points changed)`, { edit: answer.edit.id });
    } catch (err) {
      say(err.status === 422 ? `Nothing of yours to ${redo ? 'redo' : 'undo'} here` : `Not ${redo ? 'redone' : 'undone'}: ${err.message}`, { error: err.status !== 422 });
    } finally {
      busy = false;
      app.render();
    }
  }

  /** An edit the store committed elsewhere: shown here (this page's own are shown already). */
  async function changed(data) {
    if (inFlight) await inFlight;
    const ds = app.dataset;
    if (!ds || ds.local || data.run !== ds.run || data.tag !== splitStep(ds.name)[0] || store.own.has(data.edit)) return;
    await refreshColumn(app, data.column, null);
    if (app.dataset !== ds) return;
    const rows = data.rows === null || data.rows === undefined ? '' : `${formatCount(data.rows)} points, `;
    say(`${data.author} ${data.change === 'set' ? 'labelled' : data.change === 'import' ? 'imported' : `${data.change === 'undo' ? 'undid' : 'redid'} an edit of`} ${rows}${data.column} (edit ${data.edit})`, { edit: data.edit });
    await readStore(ds);
  }

  /** Runs one of this page's edits, known to events that arrive meanwhile. */
  const own = (work) => {
    inFlight = work().finally(() => { inFlight = null; });
    return inFlight;
  };

  labelButton.addEventListener('click', () => own(() => label(columnInput.value.trim(), valueInput.value, target())));
  valueInput.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !labelButton.disabled) labelButton.click();
  });
  undoButton.addEventListener('click', () => own(() => undo(false)));
  redoButton.addEventListener('click', () => own(() => undo(true)));
  $('save-note').addEventListener('click', () => {
    const focus = app.state.focus;
    if (focus !== null) own(() => label(noteColumn(), noteText.value, { rows: [focus], count: 1 }, 'note'));
  });
  document.addEventListener('keydown', (event) => {
    if (!(event.ctrlKey || event.metaKey) || event.altKey) return;
    const key = event.key.toLowerCase();
    if (key !== 'z' && key !== 'y') return;
    const target = /** @type {Element} */ (event.target);
    if (target instanceof Element && target.matches('input, textarea, select, [contenteditable]')) return; // their own undo
    event.preventDefault();
    own(() => undo(key === 'y' || event.shiftKey));
  });
  app.events?.subscribe('annotation', (data) => changed(data));
  app.events?.subscribe('reset', () => {
    const ds = app.dataset;
    if (!ds || !store.enabled) return;
    for (const c of store.columns) if (c.shown) refreshColumn(app, c.name, null);
    readStore(ds);
  });
  persistBookmarks(app, () => store.enabled);

  function renderHidden(ds) {
    const kept = store.columns.filter((c) => !c.shown);
    hidden.hidden = kept.length === 0;
    hidden.replaceChildren(...kept.map((c) => {
      const url = app.api.url('annotations/export', { run: ds.run, embedding: ds.name, format: 'tsv', columns: c.name });
      return el('li', { dataset: { column: c.name } }, `${c.reason} `, el('a', { href: url.href, download: `${c.name}.tsv` }, 'Export it'));
    }));
  }

  function renderExport(ds) {
    const links = $('label-export');
    links.hidden = !store.enabled || store.columns.length === 0;
    if (links.hidden) return; // a shared site or uploaded data: no server keeps them
    for (const format of ['tsv', 'csv', 'parquet']) {
      const link = /** @type {HTMLAnchorElement} */ ($(`label-export-${format}`));
      link.href = app.api.url('annotations/export', { run: ds.run, embedding: ds.name, format }).href;
    }
  }

  function renderNote(ds) {
    const focus = app.state.focus;
    noteBox.hidden = focus === null || !store.enabled;
    if (noteBox.hidden) return;
    $('note-label').textContent = `Note on #${focus}`;
    const key = `${ds.name}|${focus}|${ds.edits}`;
    if (key === noteFor || document.activeElement === noteText) return;
    noteFor = key;
    noteText.value = ds.loaded(noteColumn())?.[focus] ?? '';
  }

  app.panels.push({
    render() {
      const ds = app.dataset;
      if (ds && store.dataset !== ds) {
        store = { dataset: ds, enabled: false, reason: null, columns: [], own: store.own };
        readStore(ds);
      }
      const columns = store.enabled ? store.columns.filter((c) => c.shown).map((c) => c.name) : ds?.columns ?? [];
      if ([...names.children].map((o) => /** @type {HTMLOptionElement} */ (o).value).join('\n') !== columns.join('\n')) {
        names.replaceChildren(...columns.map((c) => el('option', { value: c })));
      }
      labelButton.disabled = !ds || busy || app.highlight.selectedCount() === 0;
      labelButton.textContent = app.highlight.selectedCount() ? `Label ${formatCount(app.highlight.selectedCount())} selected` : 'Label selection';
      undoButton.disabled = redoButton.disabled = !store.enabled || busy;
      $('label-where').textContent = !ds ? '' : store.enabled ? 'saved on the server' : 'this page only';
      $('label-where').title = store.reason ?? '';
      if (!ds) return;
      renderHidden(ds);
      renderExport(ds);
      renderNote(ds);
    },
  });
}
