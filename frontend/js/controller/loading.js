// Opening data sets: a server embedding (metadata, sprite and bookmarks fetched beside the
// first projection) or uploaded files, and the state a fresh data set starts from.

import { columnFetcher, COLUMNS_ABOVE, fetchFirstColumns } from '../columns.js';
import { Dataset, datasetFromFiles } from '../dataset.js';
import { clampNote, clampState } from '../limits.js';
import { loadSpriteAtlas } from '../renderer/sprite_atlas.js';
import { tileAxesFor } from '../projection/display.js';
import { defaultPointSize } from '../plot.js';
import { datasetDefaults, defaultStateFor, sanitizeState } from '../state.js';
import { parseMetadataTsv } from '../tsv.js';

export class DatasetLoading {
  embeddingInfo(run, name) {
    return this.runs.find((r) => r.name === run)?.embeddings.find((e) => e.name === name) ?? null;
  }

  /** Loads a server embedding and shows it, with `restore` (a state) or the defaults. */
  async openDataset(run, name, restore = null) {
    const info = this.embeddingInfo(run, name);
    if (!info || !info.shape) {
      this._refuseDataset(run, name, info);
      return;
    }
    const token = ++this.loadToken;
    this.ready = false; // the page is not ready for the new data set while its table is fetched
    const [n, d] = info.shape;
    // The parameter table for this data (its limits and defaults) comes before the state is
    // made from it; without one (a shared static site) the state stays as it is.
    const methods = await this.api.methods(run, name).catch(() => null);
    if (token !== this.loadToken) return;
    this._resetForDataset();
    this._showLoadFailure(null);
    const dataset = new Dataset({ source: 'server', run, name, n, d, info });
    dataset.methods = methods;
    this.dataset = dataset;
    this.state = this._initialState(dataset, restore);
    this.render();
    const metaTask = this.progress.start('Loading metadata…');
    const columnar = n > COLUMNS_ABOVE;
    if (columnar) this._fetchColumnsOnDemand(dataset);
    // A view from tiles takes its colour and labels from their codes: no column comes whole.
    const tiled = columnar && Boolean(tileAxesFor(dataset, this.state.projection, this.state));
    const { labelBy, colorBy, search } = this.state;
    const metadata = info.metadata_columns?.length
      ? (tiled
          ? this._tiledMetadata(dataset, info.metadata_columns, Boolean(restore))
          : columnar
          ? fetchFirstColumns(dataset.fetchColumn, info.metadata_columns, n, [colorBy, labelBy ?? info.label_column, search.column], (f) => metaTask.update(f))
          : this.api
              .metadata(run, name, (got, total) => metaTask.update(total ? got / total : null))
              .then((text) => parseMetadataTsv(text, { header: true, file: 'metadata' }))
        ).catch((err) => {
            this.setMessage(`Metadata: ${err.message}`, true);
            return null;
          })
      : Promise.resolve(null);
    const spriteTask = info.sprite ? this.progress.start('Loading thumbnails…') : null;
    const sprite = info.sprite
      ? loadSpriteAtlas(this.api, run, name, undefined, (got, total) => spriteTask.update(got / total))
          .catch((err) => {
            this.setMessage(`Sprite: ${err.message}`, true);
            return null;
          })
          .finally(() => spriteTask.done())
      : Promise.resolve(null);
    const bookmarks = info.has_bookmarks ? this.api.bookmarks(run, name).catch(() => []) : Promise.resolve([]);
    this.plot.setPointSize(defaultPointSize(n));
    this._showProjection({ animate: false, resetCamera: !this.state.camera });
    dataset.metadata = await metadata;
    metaTask.done();
    if (token !== this.loadToken) return;
    this._applyMetadataDefaults({ restored: Boolean(restore) });
    this._recolor();
    this._updateFlags();
    dataset.sprite = await sprite;
    if (token !== this.loadToken) return;
    if (dataset.sprite) this.plot.setSprite(dataset.sprite);
    this.plot.setShowSprites(Boolean(dataset.sprite) && this.state.sprites);
    this.bookmarks = (await bookmarks).map((b, i) => ({ ...b, label: b.label || `State ${i}` }));
    if (token !== this.loadToken) return;
    this.ready = true;
    this._writeUrl(); // what was applied before the data set was ready (a clamped link) reaches the URL
    this._afterStateApplied();
    const selected = this.bookmarks.findIndex((b) => b.isSelected);
    if (!restore && selected >= 0) this.loadBookmark(selected);
    this.render();
  }

  /**
   * An embedding that cannot be read is refused before anything is replaced: the selectors,
   * title and plot stay on what is loaded, and the plot says what failed and why.
   */
  _refuseDataset(run, name, info) {
    const why = info?.error || this.runs.find((r) => r.name === run)?.error || 'no readable embedding';
    const what = name ? `${run} / ${name}` : run;
    const ds = this.dataset;
    if (ds) this.state = { ...this.state, run: ds.run, embedding: ds.name };
    const still = ds ? ` Still showing ${ds.local ? 'the uploaded files' : `${ds.run} / ${ds.name}`}.` : '';
    this._showLoadFailure(`Could not open ${what}: ${why}.${still}`);
    this.setMessage(`Could not open ${what}`, true, { holds: () => this.state.run === (ds?.run ?? run) });
    this.render();
    this._writeUrl(); // a link to the refused run is put back to what is shown
  }

  /**
   * Columns beyond the first picture's come when a panel asks (Dataset.values); each one
   * redraws what reads it.
   */
  _fetchColumnsOnDemand(dataset) {
    dataset.fetchColumn = columnFetcher(this.api, dataset.run, dataset.name, dataset.n);
    dataset.onColumn = (column) => {
      if (this.dataset !== dataset) return;
      if (column === this.state.colorBy) this._recolor();
      if (column === this.state.labelBy) this._updateLabels();
      this.render();
    };
    dataset.onColumnError = (column, err) => {
      if (this.dataset === dataset) this.setMessage(`Metadata column ${column}: ${err.message}`, true);
    };
    dataset.wholeColumns = () => !this.coloredTiled;
    dataset.onColumnRefused = (column) => this._columnRefused(dataset, column);
  }

  /** Shows an uploaded data set (tensor + optional metadata files). */
  async openFiles(tensorFile, metadataFile) {
    const task = this.progress.start(`Reading ${tensorFile.name}…`);
    try {
      const dataset = await datasetFromFiles(tensorFile, metadataFile, (got, total) => task.update(got / total));
      dataset.methods = await this.api.methods().catch(() => null); // no data limits: computed here
      this.localDatasets = [dataset];
      this.openLocal(dataset);
    } finally {
      task.done();
    }
  }

  openLocal(dataset) {
    ++this.loadToken;
    this._resetForDataset();
    this._showLoadFailure(null);
    this.dataset = dataset;
    this.state = this._initialState(dataset, null);
    this._applyMetadataDefaults();
    this.plot.setPointSize(defaultPointSize(dataset.n));
    this.plot.setSprite(null);
    this.plot.setShowSprites(false);
    this.ready = true;
    this._showProjection({ animate: false, resetCamera: true });
    this._recolor();
    this._updateFlags();
    this.render();
  }

  _resetForDataset() {
    for (const p of Object.values(this.projections)) if (p?.running) p.cancel();
    this.projections = { pca: null, tsne: null, umap: null, custom: null };
    this.shown = null;
    this.missing = null;
    this.neighbors = [];
    this.searchResult = { indices: [], error: null };
    this.hover = -1;
    this.bookmarks = [];
    this.activeBookmark = -1;
    this.ready = false;
    this.plot.setHover(-1);
    this.plot.setPositions(new Float32Array(0));
    this._showPlotMessage(null);
  }

  /**
   * The state a data set opens with: `restore` (a URL's) or the defaults, both from the
   * parameter table (the data's defaults, perplexity for its N) and clamped into its ranges;
   * a restored value out of range is said in the status bar.
   */
  _initialState(dataset, restore) {
    const defaults = defaultStateFor(dataset.methods);
    const base = restore ? sanitizeState(restore, defaults) : defaults;
    base.run = dataset.run;
    base.embedding = dataset.name;
    if (!restore) base.pca.is3d = datasetDefaults(dataset.d, Boolean(dataset.info?.tiles)).pca3d;
    const { state, notes } = clampState(base, dataset.methods);
    if (restore && notes.length) this.setMessage(clampNote(notes, 'The link'));
    return state;
  }

  /**
   * Fills the column choices from the metadata: defaults for a fresh view; for a restored
   * one only replacements of columns this data set lacks ("none" and "index" stay).
   */
  _applyMetadataDefaults({ restored = false } = {}) {
    const ds = this.dataset;
    const patch = {};
    const { labelBy, colorBy } = this.state;
    if (labelBy !== null ? !ds.columns.includes(labelBy) : !restored) patch.labelBy = ds.defaultLabelColumn();
    if (colorBy !== null ? !ds.columns.includes(colorBy) : !restored) patch.colorBy = restored ? null : ds.defaultColorColumn();
    const first = patch.labelBy ?? this.state.labelBy ?? ds.columns[0] ?? null;
    if (!ds.columns.includes(this.state.search.column)) patch.search = { ...this.state.search, column: first };
    if (!ds.columns.includes(this.state.custom.column)) patch.custom = { ...this.state.custom, column: first };
    this.state = { ...this.state, ...patch };
  }
}
