// Bookmarks (add, load, save, load a file) and downloads of coordinates and metadata: a part
// of the App (app.js).

import { fromTensorBoardState, parseBookmarkFile, toTensorBoardState } from '../bookmarks.js';
import { clampNote } from '../limits.js';
import { $, download, el } from '../dom.js';
import { downloadName } from '../file_names.js';
import { formatCoordinates, formatMetadataTsv } from '../tsv.js';

export class Saving {
  /** @param {import('../app.js').App} app */
  constructor(app) {
    this.app = app;
    /** @type {import('../store.js').Bookmark[]} the tray (panels/bookmarks.js) */
    this.bookmarks = [];
    /** @type {number} the tray's bookmark the view is, or -1 once the view changed */
    this.activeBookmark = -1;
    /** @type {number} changes to the tray (added, renamed, deleted) since it was saved to a file
     * or came from the server or a file: the page keeps the tray nowhere else, so leaving the
     * page loses them (panels/bookmarks.js warns) */
    this.unsaved = 0;
    /** @type {Array<(change: 'added' | 'removed' | 'renamed', bookmark: import('../store.js').Bookmark) => void>}
     * told of each change made in the tray (listen: labelling/bookmarks.js keeps them in the server's store) */
    this.listeners = [];
    Object.seal(this);
  }

  /** A data set opens with its own bookmarks (none yet). */
  reset(bookmarks = []) {
    this.bookmarks = bookmarks;
    this.activeBookmark = -1;
    this.unsaved = 0;
  }

  /** Whether leaving the page would lose bookmarks: the tray changed since it was saved, and
   * holds some the server's store does not keep (a shared site, a read-only store). */
  hasUnsaved() {
    return this.unsaved > 0 && this.bookmarks.some((b) => !b.saved);
  }

  /** Calls `listener` with each change made in the tray from now on. */
  listen(listener) {
    this.listeners.push(listener);
  }

  /**
   * Bookmarks saved (`added`) or deleted (the saved id `removed`) elsewhere: in another page
   * or by a client (labelling/bookmarks.js, from the event stream).
   * @param {{ added?: import('../store.js').Bookmark[], removed?: number | null }} change
   */
  savedElsewhere({ added = [], removed = null }) {
    const known = new Set(this.bookmarks.map((b) => b.saved?.id).filter((id) => id !== undefined));
    this.bookmarks.push(...added.filter((b) => b.saved && !known.has(b.saved.id)));
    const at = removed === null ? -1 : this.bookmarks.findIndex((b) => b.saved?.id === removed);
    if (at >= 0) {
      this.bookmarks.splice(at, 1);
      if (this.activeBookmark === at) this.activeBookmark = -1;
      else if (this.activeBookmark > at) this.activeBookmark--;
    }
    this.app.render();
  }

  _told(change, bookmark) {
    for (const listener of this.listeners) listener(change, bookmark);
  }

  /** The view changed: it is no longer the tray's bookmark it was. */
  viewChanged() {
    this.activeBookmark = -1;
  }

  addBookmark() {
    const { app } = this;
    const ds = app.dataset;
    if (!ds) return;
    app.replaceState({ ...app.state, camera: app.plot.camera });
    const tb = toTensorBoardState(app.state, {
      label: `State ${this.bookmarks.length}`,
      n: ds.n,
      d: ds.d,
      coords: app.projecting.currentCoords(),
      iteration: app.projecting.projections.tsne?.iteration ?? 0,
    });
    this.bookmarks.push(tb);
    this.activeBookmark = this.bookmarks.length - 1;
    this.unsaved++;
    this._told('added', tb);
    app.render();
  }

  loadBookmark(index) {
    const { app } = this;
    const tb = this.bookmarks[index];
    if (!tb || !app.dataset) return;
    try {
      const ds = app.dataset;
      const { state, coords, notes } = fromTensorBoardState(tb, { n: ds.n, d: ds.d, table: ds.methods });
      app.applyState(state, { coords, iteration: tb.tSNEIteration });
      this.activeBookmark = index;
      const clamped = notes.length ? `. ${clampNote(notes, 'It')}` : '';
      app.setMessage(`Loaded bookmark “${tb.label}”${clamped}`, false, { holds: () => this.activeBookmark === index && this.bookmarks[index] === tb });
    } catch (err) {
      app.setMessage(`Bookmark: ${err.message}`, true);
    }
    app.render();
  }

  /**
   * @param {import('../store.js').Bookmark} bookmark
   * @param {string} label
   */
  renameBookmark(bookmark, label) {
    if (label === bookmark.label) return;
    bookmark.label = label;
    this.unsaved++;
    this._told('renamed', bookmark);
    this.app.render();
  }

  removeBookmark(index) {
    const [removed] = this.bookmarks.splice(index, 1);
    this.unsaved++;
    if (removed) this._told('removed', removed);
    if (this.activeBookmark === index) this.activeBookmark = -1;
    else if (this.activeBookmark > index) this.activeBookmark--;
    this.app.render();
  }

  saveBookmarks() {
    const list = this.bookmarks.map((b, i) => ({ ...b, isSelected: i === this.activeBookmark }));
    download('bookmarks.json', JSON.stringify(list), 'application/json');
    this.unsaved = 0;
    this.app.render();
  }

  /** Replaces the tray with a file's bookmarks, only once every one of them fits this data set. */
  async loadBookmarkFile(file) {
    const list = parseBookmarkFile(await file.text(), file.name);
    const ds = this.app.dataset;
    if (!ds) throw new Error('Open a data set before loading bookmarks');
    list.forEach((tb, i) => {
      try {
        fromTensorBoardState(tb, { n: ds.n, d: ds.d });
      } catch (err) {
        throw new Error(`${file.name}, bookmark “${tb.label}” (item ${i + 1}): ${err.message}`);
      }
    });
    this.bookmarks = list;
    this.activeBookmark = -1;
    this.unsaved = 0;
    const selected = list.findIndex((b) => b.isSelected);
    this.loadBookmark(selected >= 0 ? selected : 0);
  }

  /**
   * The Compare link opens on the shown embedding and carries this view's URL hash, which
   * the Compare page's "Back to the projector" link hands back.
   */
  linkCompare(hash) {
    const params = new URLSearchParams({ run: this.app.state.run, embedding: this.app.state.embedding });
    $('compare-link').href = `compare?${params}${hash}`;
  }

  // ---- downloads ----------------------------------------------------------------------------

  downloadCoordinates(sep) {
    const { app } = this;
    const p = app.shown;
    const ext = sep === ',' ? 'csv' : 'tsv';
    const name = p ? downloadName(app.dataset, p.method, ext) : null;
    if (!p?.data && p?.jobId && p.status === 'done') {
      // No whole-set coordinates in the tab (they came as tiles): the server writes the same
      // file from the job's result, streamed to disk by the browser (GET /api/jobs/ID/result?format=).
      const url = app.api.url(`jobs/${p.jobId}/result`, { format: ext, axes: p.axes(app.state).join(',') });
      const link = el('a', { href: url.href, download: name });
      document.body.append(link);
      link.click();
      link.remove();
      return;
    }
    if (!p?.data) {
      app.setMessage('No projection to download yet', true);
      return;
    }
    const axes = p.axes(app.state);
    const n = app.dataset.n;
    const coords = new Float32Array(n * axes.length);
    for (let i = 0; i < n; i++) for (let a = 0; a < axes.length; a++) coords[i * axes.length + a] = p.data[i * p.cols + axes[a]];
    download(name, formatCoordinates(coords, n, axes.length, sep), `text/${ext === 'csv' ? 'csv' : 'tab-separated-values'}`);
  }

  async downloadMetadata() {
    const ds = this.app.dataset;
    if (!ds?.metadata) {
      this.app.setMessage('This data set has no metadata', true);
      return;
    }
    await ds.ensureColumns(ds.columns); // a large set's columns come when asked for
    download(downloadName(ds, 'metadata', 'tsv'), formatMetadataTsv(ds.metadata.names, ds.metadata.columns), 'text/tab-separated-values');
  }
}
