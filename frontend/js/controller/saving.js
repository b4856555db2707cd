// Bookmarks (add, load, save, load a file) and downloads of coordinates and metadata.

import { fromTensorBoardState, parseBookmarkFile, toTensorBoardState } from '../bookmarks.js';
import { clampNote } from '../limits.js';
import { $, download, el } from '../dom.js';
import { downloadName } from '../file_names.js';
import { formatCoordinates, formatMetadataTsv } from '../tsv.js';

export class Saving {
  addBookmark() {
    const ds = this.dataset;
    if (!ds) return;
    this.state = { ...this.state, camera: this.plot.camera };
    const tb = toTensorBoardState(this.state, {
      label: `State ${this.bookmarks.length}`,
      n: ds.n,
      d: ds.d,
      coords: this.currentCoords(),
      iteration: this.projections.tsne?.iteration ?? 0,
    });
    this.bookmarks.push(tb);
    this.activeBookmark = this.bookmarks.length - 1;
    this.render();
  }

  loadBookmark(index) {
    const tb = this.bookmarks[index];
    if (!tb || !this.dataset) return;
    try {
      const ds = this.dataset;
      const { state, coords, notes } = fromTensorBoardState(tb, { n: ds.n, d: ds.d, table: ds.methods });
      this.applyState(state, { coords, iteration: tb.tSNEIteration });
      this.activeBookmark = index;
      const clamped = notes.length ? `. ${clampNote(notes, 'It')}` : '';
      this.setMessage(`Loaded bookmark “${tb.label}”${clamped}`, false, { holds: () => this.activeBookmark === index && this.bookmarks[index] === tb });
    } catch (err) {
      this.setMessage(`Bookmark: ${err.message}`, true);
    }
    this.render();
  }

  saveBookmarks() {
    const list = this.bookmarks.map((b, i) => ({ ...b, isSelected: i === this.activeBookmark }));
    download('bookmarks.json', JSON.stringify(list), 'application/json');
  }

  /** Replaces the tray with a file's bookmarks, only once every one of them fits this data set. */
  async loadBookmarkFile(file) {
    const list = parseBookmarkFile(await file.text(), file.name);
    if (!this.dataset) throw new Error('Open a data set before loading bookmarks');
    list.forEach((tb, i) => {
      try {
        fromTensorBoardState(tb, { n: this.dataset.n, d: this.dataset.d });
      } catch (err) {
        throw new Error(`${file.name}, bookmark “${tb.label}” (item ${i + 1}): ${err.message}`);
      }
    });
    this.bookmarks = list;
    this.activeBookmark = -1;
    const selected = list.findIndex((b) => b.isSelected);
    this.loadBookmark(selected >= 0 ? selected : 0);
  }

  /**
   * The Compare link opens on the shown embedding and carries this view's URL hash, which
   * the Compare page's "Back to the projector" link hands back.
   */
  _linkCompare(hash) {
    const params = new URLSearchParams({ run: this.state.run, embedding: this.state.embedding });
    $('compare-link').href = `compare?${params}${hash}`;
  }

  // ---- downloads ----------------------------------------------------------------------------

  downloadCoordinates(sep) {
    const p = this.shown;
    const ext = sep === ',' ? 'csv' : 'tsv';
    const name = p ? downloadName(this.dataset, p.method, ext) : null;
    if (!p?.data && p?.jobId && p.status === 'done') {
      // A tiled view holds no whole-set coordinates: the server writes the same file from
      // the job's result, streamed to disk by the browser (GET /api/jobs/ID/result?format=).
      const url = this.api.url(`jobs/${p.jobId}/result`, { format: ext, axes: p.axes(this.state).join(',') });
      const link = el('a', { href: url.href, download: name });
      document.body.append(link);
      link.click();
      link.remove();
      return;
    }
    if (!p?.data) {
      this.setMessage('No projection to download yet', true);
      return;
    }
    const axes = p.axes(this.state);
    const n = this.dataset.n;
    const coords = new Float32Array(n * axes.length);
    for (let i = 0; i < n; i++) for (let a = 0; a < axes.length; a++) coords[i * axes.length + a] = p.data[i * p.cols + axes[a]];
    download(name, formatCoordinates(coords, n, axes.length, sep), `text/${ext === 'csv' ? 'csv' : 'tab-separated-values'}`);
  }

  async downloadMetadata() {
    const ds = this.dataset;
    if (!ds?.metadata) {
      this.setMessage('This data set has no metadata', true);
      return;
    }
    await ds.ensureColumns(ds.columns); // a large set's columns come when asked for
    download(downloadName(ds, 'metadata', 'tsv'), formatMetadataTsv(ds.metadata.names, ds.metadata.columns), 'text/tab-separated-values');
  }
}
