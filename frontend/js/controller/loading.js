// Opening data sets, a part of the App (app.js): a server embedding (metadata, sprite and
// bookmarks fetched beside the first projection) or uploaded files, and the state a fresh
// data set starts from. The server's run list is listed once, then kept by its events
// (events.js, live_runs.js): nothing polls /api/runs.

import { columnFetcher, COLUMNS_ABOVE } from '../columns.js';
import { Dataset, datasetFromFiles } from '../dataset.js';
import { clampNote, clampState } from '../limits.js';
import { loadSpriteAtlas } from '../renderer/sprite_atlas.js';
import { defaultPointSize } from '../plot.js';
import { deliveryFor, opensIn2d } from '../points/point_source.js';
import { datasetDefaults, defaultStateFor, is3d, sanitizeState } from '../state.js';
import { withEvent } from '../live_runs.js';
import { loadingLine, runLabel } from '../run_list.js';
import { parseMetadataTsv } from '../tsv.js';

/** How long listing waits for the event stream to open before it lists anyway (ms). */
const STREAM_WAIT_MS = 3000;

export class DatasetLoading {
  /** @param {import('../app.js').App} app */
  constructor(app) {
    this.app = app;
    /** @type {import('../store.js').Run[]} the server's runs (listed at start, again after an upload) */
    this.runs = [];
    /** @type {Dataset | null} the data set on screen */
    this.dataset = null;
    /** @type {Dataset[]} sets read in this browser, by file or drop */
    this.localDatasets = [];
    /** @type {boolean} the data set's first view is up (tests and the widget wait for it) */
    this.ready = false;
    /** @type {number} the latest data set load: an older one that finishes late is dropped */
    this.loadToken = 0;
    /** @type {Array<[string, any]> | null} run list events heard while it is (re)listed: replayed over the listing */
    this.early = [];
    /** @type {boolean} the run list follows the server's events */
    this.following = false;
    /** @type {Set<(runs: import('../store.js').Run[]) => void>} hear each change of the run list */
    this.watchers = new Set();
    /** @type {boolean} the page found nothing to show: the first embedding listed that can be shown opens */
    this.openFirstListed = false;
    Object.seal(this);
  }

  /**
   * The server's runs, waiting while the embedding to open is still read (run_list.js); from
   * then on the list follows the server's events.
   * @param {import('../store.js').State | null} fromUrl  the link's state
   */
  async listRuns(fromUrl) {
    const task = this.app.progress.start('Listing runs…');
    try {
      await this._follow();
      await this.relist();
    } catch (err) {
      this.app.setMessage(`Could not list runs: ${err.message}`, true);
      this.runs = [];
      this.early = null;
    } finally {
      task.done();
    }
    await this._untilOpenable(fromUrl);
    return this.runs;
  }

  /** The server's runs listed (again: a `reset` event), the events heard meanwhile replayed. */
  async relist() {
    this.early ??= [];
    let runs = await this.app.api.runs();
    for (const [kind, data] of this.early) runs = withEvent(runs, kind, data);
    this.early = null;
    this._changed(runs);
  }

  /** The run list follows the server's events from the moment its stream is the server's. */
  async _follow() {
    const feed = this.app.events;
    if (!feed || this.following) return;
    this.following = true;
    feed.subscribe('run', (data) => this._heard('run', data));
    feed.subscribe('embedding', (data) => this._heard('embedding', data));
    feed.subscribe('reset', () => this.relist().catch((err) => this.app.setMessage(`Could not list runs: ${err.message}`, true)));
    // A stream a proxy holds back does not keep the page from listing (a change in that gap is missed).
    await Promise.race([feed.ready(), new Promise((resolve) => setTimeout(resolve, STREAM_WAIT_MS))]);
  }

  _heard(kind, data) {
    if (this.early) {
      this.early.push([kind, data]);
      return;
    }
    const runs = withEvent(this.runs, kind, data);
    if (runs !== this.runs) this._changed(runs);
  }

  /** A new run list: its watchers hear it, the pickers show it, and a page with nothing to
   * show opens the first embedding that can be shown. */
  _changed(runs) {
    this.runs = runs;
    for (const watcher of [...this.watchers]) watcher(runs);
    if (this.openFirstListed) {
      const usable = (e) => e.status === 'ready' && e.shape;
      const run = runs.find((r) => r.embeddings.some(usable));
      if (run) {
        this.openFirstListed = false;
        this.openDataset(run.name, run.embeddings.find(usable).name);
      }
    }
    this.app.render();
  }

  /** Nothing to show yet: the first embedding the server lists that can be shown opens. */
  openWhenListed() {
    this.openFirstListed = this.following;
  }

  /** Resolves once the embedding to open is read, its progress shown meanwhile. */
  _untilOpenable(fromUrl) {
    const openable = loadingLine(this.app.progress, fromUrl);
    if (openable(this.runs) || !this.following) return Promise.resolve();
    return new Promise((resolve) => {
      const watcher = (runs) => {
        if (!openable(runs)) return;
        this.watchers.delete(watcher);
        resolve();
      };
      this.watchers.add(watcher);
    });
  }

  /** A run's name as the page shows it ("." with its folder's name: run_list.js runLabel). */
  runLabel(name) {
    return runLabel(this.runs, name);
  }

  embeddingInfo(run, name) {
    return this.runs.find((r) => r.name === run)?.embeddings.find((e) => e.name === name) ?? null;
  }

  /** Loads a server embedding and shows it, with `restore` (a state) or the defaults. */
  async openDataset(run, name, restore = null) {
    const { app } = this;
    const { api, plot, progress, highlight, projecting, saving } = app;
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
    const methods = await api.methods(run, name).catch(() => null);
    if (token !== this.loadToken) return;
    this._resetForDataset();
    app.status.showLoadFailure(null);
    const dataset = new Dataset({ source: 'server', run, name, n, d, info });
    dataset.methods = methods;
    this.dataset = dataset;
    app.replaceState(this._initialState(dataset, restore));
    app.render();
    const metaTask = progress.start('Loading metadata…');
    const columnar = n > COLUMNS_ABOVE;
    if (columnar) this._fetchColumnsOnDemand(dataset);
    const { labelBy, colorBy, search, projection } = app.state;
    // The way the first view's points come says which columns come first (tiles: none whole).
    const delivery = deliveryFor(dataset, projection, is3d(app.state));
    const names = info.metadata_columns ?? [];
    const metadata = names.length
      ? (columnar
          ? delivery.firstColumns(highlight, dataset, names, [colorBy, labelBy ?? info.label_column, search.column], Boolean(restore), (f) => metaTask.update(f))
          : api
              .metadata(run, name, (got, total) => metaTask.update(total ? got / total : null))
              .then((text) => parseMetadataTsv(text, { header: true, file: 'metadata' }))
        ).catch((err) => {
            app.setMessage(`Metadata: ${err.message}`, true);
            return null;
          })
      : Promise.resolve(null);
    const spriteTask = info.sprite ? progress.start('Loading thumbnails…') : null;
    const sprite = info.sprite
      ? loadSpriteAtlas(api, run, name, undefined, (got, total) => spriteTask.update(got / total))
          .catch((err) => {
            app.setMessage(`Sprite: ${err.message}`, true);
            return null;
          })
          .finally(() => spriteTask.done())
      : Promise.resolve(null);
    // The LOGDIR file's bookmarks, then those saved in the server's store (labelling/bookmarks.js).
    const bookmarks = api.bookmarks(run, name).catch(() => []);
    plot.setPointSize(defaultPointSize(n));
    projecting.showProjection({ animate: false, resetCamera: !app.state.camera });
    dataset.metadata = await metadata;
    metaTask.done();
    if (token !== this.loadToken) return;
    this.applyMetadataDefaults({ restored: Boolean(restore) });
    highlight.recolor();
    highlight.updateFlags();
    dataset.sprite = await sprite;
    if (token !== this.loadToken) return;
    if (dataset.sprite) plot.setSprite(dataset.sprite);
    plot.setShowSprites(Boolean(dataset.sprite) && app.state.sprites);
    saving.reset((await bookmarks).map((b, i) => ({ ...b, label: b.label || `State ${i}` })));
    if (token !== this.loadToken) return;
    this.ready = true;
    app.writeUrlSoon(); // what was applied before the data set was ready (a clamped link) reaches the URL
    app.afterStateApplied();
    const selected = saving.bookmarks.findIndex((b) => b.isSelected);
    if (!restore && selected >= 0) saving.loadBookmark(selected);
    app.render();
  }

  /**
   * The open run's training step `name` (a `TAG:STEP` embedding of the same points) in place of
   * the one shown: the data set stays (Dataset.becomeStep), and with it the view (selection,
   * search, colours, labels, camera). Its projection is the caller's (Projecting.showStep).
   * False when it is not such a step.
   */
  openStep(name) {
    const { app } = this;
    const ds = this.dataset;
    const info = ds && !ds.local ? this.embeddingInfo(ds.run, name) : null;
    if (!info?.shape || info.shape[0] !== ds.n || info.status !== 'ready') return false;
    ds.becomeStep(name, info);
    app.replaceState({ ...app.state, embedding: name });
    app.writeUrlSoon();
    return true;
  }

  /**
   * An embedding that cannot be read is refused before anything is replaced: the selectors,
   * title and plot stay on what is loaded, and the plot says what failed and why.
   */
  _refuseDataset(run, name, info) {
    const { app } = this;
    const why = info?.error || this.runs.find((r) => r.name === run)?.error || 'no readable embedding';
    const what = name ? `${this.runLabel(run)} / ${name}` : this.runLabel(run);
    const ds = this.dataset;
    if (ds) app.replaceState({ ...app.state, run: ds.run, embedding: ds.name });
    const still = ds ? ` Still showing ${ds.local ? 'the uploaded files' : `${this.runLabel(ds.run)} / ${ds.name}`}.` : '';
    app.status.showLoadFailure(`Could not open ${what}: ${why}.${still}`);
    app.setMessage(`Could not open ${what}`, true, { holds: () => app.state.run === (ds?.run ?? run) });
    app.render();
    app.writeUrlSoon(); // a link to the refused run is put back to what is shown
  }

  /**
   * Columns beyond the first picture's come when a panel asks (Dataset.values); each one
   * redraws what reads it.
   */
  _fetchColumnsOnDemand(dataset) {
    const { app } = this;
    dataset.fetchColumn = columnFetcher(app.api, dataset.run, dataset.name, dataset.n);
    dataset.onColumn = (column) => {
      if (this.dataset !== dataset) return;
      if (column === app.state.colorBy) app.highlight.recolor();
      if (column === app.state.labelBy) app.highlight.updateLabels();
      app.render();
    };
    dataset.onColumnError = (column, err) => {
      if (this.dataset === dataset) app.setMessage(`Metadata column ${column}: ${err.message}`, true);
    };
    dataset.wholeColumns = () => app.highlight.way().wholeColumns;
    dataset.onColumnRefused = (column) => {
      // A panel asked for a whole column while the points come as tiles: said once per column.
      if (this.dataset !== dataset || dataset.refused.has(column)) return;
      dataset.refused.add(column);
      app.setMessage(`Shown from tiles: "${column}" stays on the server (no chart, inspector row or export of it here)`);
    };
  }

  /** Shows an uploaded data set (tensor + optional metadata files). */
  async openFiles(tensorFile, metadataFile) {
    const task = this.app.progress.start(`Reading ${tensorFile.name}…`);
    try {
      const dataset = await datasetFromFiles(tensorFile, metadataFile, (got, total) => task.update(got / total));
      dataset.methods = await this.app.api.methods().catch(() => null); // no data limits: computed here
      this.localDatasets = [dataset];
      this.openLocal(dataset);
    } finally {
      task.done();
    }
  }

  openLocal(dataset) {
    const { app } = this;
    ++this.loadToken;
    this._resetForDataset();
    app.status.showLoadFailure(null);
    this.dataset = dataset;
    app.replaceState(this._initialState(dataset, null));
    this.applyMetadataDefaults();
    app.plot.setPointSize(defaultPointSize(dataset.n));
    app.plot.setSprite(null);
    app.plot.setShowSprites(false);
    this.ready = true;
    app.projecting.showProjection({ animate: false, resetCamera: true });
    app.highlight.recolor();
    app.highlight.updateFlags();
    app.render();
  }

  _resetForDataset() {
    const { app } = this;
    app.projecting.reset();
    app.highlight.reset();
    app.saving.reset();
    this.ready = false;
    app.plot.setHover(-1);
    app.plot.clearPoints();
    app.status.showPlotMessage(null);
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
    if (!restore) base.pca.is3d = datasetDefaults(dataset.d, opensIn2d(dataset)).pca3d;
    const { state, notes } = clampState(base, dataset.methods);
    if (restore && notes.length) this.app.setMessage(clampNote(notes, 'The link'));
    return state;
  }

  /**
   * Fills the column choices from the metadata: defaults for a fresh view; for a restored
   * one only replacements of columns this data set lacks ("none" and "index" stay).
   */
  applyMetadataDefaults({ restored = false } = {}) {
    const { app } = this;
    const ds = this.dataset;
    const patch = {};
    const { labelBy, colorBy } = app.state;
    if (labelBy !== null ? !ds.columns.includes(labelBy) : !restored) patch.labelBy = ds.defaultLabelColumn();
    if (colorBy !== null ? !ds.columns.includes(colorBy) : !restored) patch.colorBy = restored ? null : ds.defaultColorColumn();
    const first = patch.labelBy ?? app.state.labelBy ?? ds.columns[0] ?? null;
    if (!ds.columns.includes(app.state.search.column)) patch.search = { ...app.state.search, column: first };
    if (!ds.columns.includes(app.state.custom.column)) patch.custom = { ...app.state.custom, column: first };
    app.replaceState({ ...app.state, ...patch });
  }
}
