// The controller: owns the one UI state, loads data sets, starts projections, keeps the
// plot's buffers (positions, colours, flags, labels) in step with the state, and lets each
// panel render itself from it. Panels change the state only through `app.update(patch)`.

import { Api } from './api.js';
import { fromTensorBoardState, parseBookmarkFile, toTensorBoardState } from './bookmarks.js';
import { columnColoring, hexToRgb, neighborShade, uniformColoring } from './colors.js';
import { nearestNeighbors, search as localSearch } from './compute.js';
import { Dataset, datasetFromFiles } from './dataset.js';
import { loadSpriteAtlas } from './renderer/sprite_atlas.js';
import { $, debounce, download, formatCount } from './dom.js';
import { fitPositions } from './geometry.js';
import { JobRunner, restoredProjection } from './jobs.js';
import { createBookmarksPanel } from './panels/bookmarks.js';
import { createDataPanel } from './panels/data.js';
import { createInspectorPanel } from './panels/inspector.js';
import { createProjectionsPanel } from './panels/projections.js';
import { defaultPointSize, Plot } from './plot.js';
import { FLAG_FOCUS, FLAG_HIDDEN, FLAG_NEIGHBOR, FLAG_SELECTED, SHADE_SHIFT } from './renderer/points.js';
import { datasetDefaults, decodeState, defaultState, encodeState, is3d, sanitizeState } from './state.js';
import { formatCoordinates, formatMetadataTsv, parseMetadataTsv } from './tsv.js';

const LABEL_LIMIT = 10000;

/** Long operations shown in the plot's progress card, newest first. */
class ProgressTracker {
  constructor(onChange) {
    this.tasks = [];
    this.onChange = onChange;
  }

  start(label) {
    const task = { label, fraction: null };
    this.tasks.push(task);
    this.onChange();
    return {
      update: (fraction, text) => {
        task.fraction = fraction;
        if (text) task.label = text;
        this.onChange();
      },
      done: () => {
        this.tasks = this.tasks.filter((t) => t !== task);
        this.onChange();
      },
    };
  }

  get top() {
    return this.tasks[this.tasks.length - 1] ?? null;
  }
}

class App {
  constructor() {
    this.api = new Api();
    this.state = defaultState();
    this.runs = [];
    this.dataset = null;
    this.localDatasets = [];
    this.projections = { pca: null, tsne: null, umap: null, custom: null };
    this.shown = null;
    this.missing = null;
    this.neighbors = [];
    this.searchResult = { indices: [], error: null };
    this.coloring = null;
    this.hover = -1;
    this.bookmarks = [];
    this.activeBookmark = -1;
    this.message = { text: '', error: false };
    this.ready = false;
    this.loadToken = 0;
    this.neighborToken = 0;
    this.searchToken = 0;
    this.progress = new ProgressTracker(() => this._renderProgress());
    this.runner = new JobRunner(this.api, (p) => this._projectionChanged(p));
    this.plot = new Plot($('.plot-container'), {
      hover: (i) => this._hovered(i),
      click: (i, event) => this._clicked(i, event),
      region: (indices, event) => this._regionSelected(indices, event),
      camera: (camera) => this.update({ camera }, { fromPlot: true }),
      describe: (i) => this.labelOf(i),
    });
    this.plot.setTheme(readTheme());
    this.panels = [createDataPanel(this), createProjectionsPanel(this), createInspectorPanel(this), createBookmarksPanel(this)];
    this._writeUrl = debounce(() => this._saveUrl(), 250);
    this._runCustom = debounce(() => this._showProjection({ animate: true }), 350);
    this._runSearch = debounce(() => this.runSearch({ select: true }), 250);
    this._fetchNeighbors = debounce(() => this._loadNeighbors(), 150);
    this._bindGlobal();
  }

  // ---- start-up and data sets ---------------------------------------------------------

  async start() {
    const fromUrl = decodeState(location.hash);
    const task = this.progress.start('Listing runs…');
    try {
      this.runs = await this.api.runs();
    } catch (err) {
      this.setMessage(`Could not list runs: ${err.message}`, true);
      this.runs = [];
    } finally {
      task.done();
    }
    const healthy = this.runs.flatMap((r) => r.embeddings.filter((e) => !e.error && e.shape).map((e) => [r.name, e.name]));
    let target = healthy[0];
    if (fromUrl && healthy.some(([r, e]) => r === fromUrl.run && e === fromUrl.embedding)) target = [fromUrl.run, fromUrl.embedding];
    if (!target) {
      this._showPlotMessage(this.runs.length ? 'No readable embedding in this LOGDIR.' : 'No runs found. Start with `projector serve LOGDIR`, or load your own data in the Data panel.');
      this.render();
      return;
    }
    await this.openDataset(target[0], target[1], fromUrl);
  }

  embeddingInfo(run, name) {
    return this.runs.find((r) => r.name === run)?.embeddings.find((e) => e.name === name) ?? null;
  }

  /** Loads a server embedding and shows it, with `restore` (a state) or the defaults. */
  async openDataset(run, name, restore = null) {
    const token = ++this.loadToken;
    const info = this.embeddingInfo(run, name);
    if (!info || !info.shape) {
      this.setMessage(info?.error || `unknown embedding ${run}/${name}`, true);
      return;
    }
    const [n, d] = info.shape;
    this._resetForDataset();
    const dataset = new Dataset({ source: 'server', run, name, n, d, info });
    this.dataset = dataset;
    this.state = this._initialState(dataset, restore);
    this.render();
    const metaTask = this.progress.start('Loading metadata…');
    const metadata = info.metadata_columns?.length
      ? this.api
          .metadata(run, name, (got, total) => metaTask.update(total ? got / total : null))
          .then((text) => parseMetadataTsv(text, { header: true, file: 'metadata' }))
          .catch((err) => {
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
    this._afterStateApplied();
    const selected = this.bookmarks.findIndex((b) => b.isSelected);
    if (!restore && selected >= 0) this.loadBookmark(selected);
    this.render();
  }

  /** Shows an uploaded data set (tensor + optional metadata files). */
  async openFiles(tensorFile, metadataFile) {
    const task = this.progress.start(`Reading ${tensorFile.name}…`);
    try {
      const dataset = await datasetFromFiles(tensorFile, metadataFile, (got, total) => task.update(got / total));
      this.localDatasets = [dataset];
      this.openLocal(dataset);
    } finally {
      task.done();
    }
  }

  openLocal(dataset) {
    ++this.loadToken;
    this._resetForDataset();
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
    for (const p of Object.values(this.projections)) if (p?.running) this.runner.cancel(p);
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

  _initialState(dataset, restore) {
    const base = restore ? sanitizeState(restore) : defaultState();
    base.run = dataset.run;
    base.embedding = dataset.name;
    if (!restore) {
      const defaults = datasetDefaults(dataset.n, dataset.d);
      base.pca.spherize = defaults.spherize;
      base.tsne.perplexity = defaults.perplexity;
    }
    return base;
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

  // ---- state --------------------------------------------------------------------------

  /** Merges a patch into the state and brings everything that depends on it up to date. */
  update(patch, { fromPlot = false } = {}) {
    const prev = this.state;
    this.state = { ...prev, ...patch };
    const changed = (key) => key in patch && JSON.stringify(prev[key]) !== JSON.stringify(this.state[key]);
    if (!this.dataset) return;
    if (changed('run') || changed('embedding')) {
      const { run, embedding } = this.state;
      const local = this.localDatasets.find((d) => d.run === run && d.name === embedding);
      if (local) this.openLocal(local);
      else this.openDataset(run, embedding);
      return;
    }
    if (changed('colorBy') || changed('categorical')) this._recolor();
    if (changed('sprites')) this.plot.setShowSprites(Boolean(this.dataset.sprite) && this.state.sprites);
    if (changed('projection')) {
      this._showProjection({ animate: true, resetCamera: true });
    } else if (this.state.projection === 'pca' && changed('pca')) {
      const spherize = prev.pca.spherize !== this.state.pca.spherize;
      const dims = prev.pca.is3d !== this.state.pca.is3d;
      this._showProjection({ animate: true, resetCamera: dims && !spherize });
    } else if (this.state.projection === 'custom' && changed('custom')) {
      this._runCustom();
    } else if (['tsne', 'umap'].includes(this.state.projection) && changed(this.state.projection)) {
      if (prev[this.state.projection].is3d !== this.state[this.state.projection].is3d) this.rerun();
    }
    if (changed('isolated')) this._refit();
    if (changed('selection') || changed('focus') || changed('isolated')) {
      if (changed('focus') || !this.state.focus) this.neighbors = [];
      this._updateFlags();
    }
    if ((changed('focus') || changed('neighbors')) && this.state.focus !== null) this._fetchNeighbors();
    if (changed('search')) this._runSearch();
    if (changed('camera') && !fromPlot && this.state.camera) this.plot.setCamera(this.state.camera);
    if (changed('labelBy') || changed('selection') || changed('focus')) this._updateLabels();
    if (!fromPlot) this.activeBookmark = -1;
    this.render();
    this._writeUrl();
  }

  /** Applies a whole state (URL, bookmark) to the open data set. */
  applyState(state, { coords = null, iteration = null } = {}) {
    const next = sanitizeState({ ...state, run: this.state.run, embedding: this.state.embedding });
    const method = next.projection;
    if (coords && (method === 'tsne' || method === 'umap')) {
      const { params, dims } = this.requestFor(method, next);
      const p = restoredProjection(method, params, dims, coords, iteration);
      if (this.projections[method]?.running) this.runner.cancel(this.projections[method]);
      this.projections[method] = p;
    }
    const prevProjection = this.shown;
    this.state = next;
    if (this.dataset.metadata) this._applyMetadataDefaults({ restored: true });
    this.neighbors = [];
    this._recolor();
    this.plot.setShowSprites(Boolean(this.dataset.sprite) && this.state.sprites);
    this._showProjection({ animate: prevProjection !== null, resetCamera: !next.camera });
    this._afterStateApplied();
    this.render();
    this._writeUrl();
  }

  /** Effects of a freshly applied state that the data set must be loaded for. */
  _afterStateApplied() {
    this._updateFlags();
    this._updateLabels();
    if (this.state.camera) this.plot.setCamera(this.state.camera);
    if (this.state.focus !== null) this._loadNeighbors();
    if (this.state.search.query) this.runSearch({ select: false });
  }

  _saveUrl() {
    if (!this.ready || !this.dataset || this.dataset.local) return;
    const hash = encodeState(this.state);
    if (location.hash !== hash) history.replaceState(null, '', hash);
    this.lastHash = hash;
  }

  render() {
    for (const panel of this.panels) panel.render();
    this._renderStatus();
    this._renderProgress();
    $('mode-badge').textContent = is3d(this.state) ? '3D' : '2D';
    const ds = this.dataset;
    $('dataset-title').textContent = ds ? `${ds.local ? 'Uploaded' : ds.run} / ${ds.name}  ·  ${formatCount(ds.n)} × ${ds.d}` : '';
  }

  // ---- projections --------------------------------------------------------------------

  /** The request parameters and dimensions of a method under a state. */
  requestFor(method, state = this.state) {
    switch (method) {
      case 'pca':
        return { params: { spherize: state.pca.spherize }, dims: 3 };
      case 'tsne': {
        // openTSNE needs perplexity <= (N - 1) / 3; TensorBoard's slider goes to 100.
        const n = this.dataset?.n ?? Infinity;
        const perplexity = Math.max(2, Math.min(state.tsne.perplexity, Math.floor((n - 1) / 3)));
        return {
          params: { perplexity, learning_rate: state.tsne.learningRate ?? 'auto', n_iter: state.tsne.nIter },
          dims: state.tsne.is3d ? 3 : 2,
        };
      }
      case 'umap': {
        const n = this.dataset?.n ?? Infinity;
        const nNeighbors = Math.max(2, Math.min(state.umap.nNeighbors, n - 1));
        return { params: { n_neighbors: nNeighbors, min_dist: state.umap.minDist }, dims: state.umap.is3d ? 3 : 2 };
      }
      default: {
        const { column, left, right, up, down, regex } = state.custom;
        return { params: { column, left, right, up, down, regex }, dims: 2 };
      }
    }
  }

  _start(method) {
    const { params, dims } = this.requestFor(method);
    const old = this.projections[method];
    const cancelled = old?.running ? this.runner.cancel(old) : null;
    const ds = this.dataset;
    const p = ds.local
      ? this.runner.runLocally(ds, method, params, dims)
      : this.runner.runOnServer(ds, method, params, dims, cancelled);
    this.projections[method] = p;
    const task = this.progress.start(`${methodName(method)}…`);
    p.task = task;
    p.finished.then(() => task.done());
    return p;
  }

  /** Whether the custom projection has something to compute. */
  customReady() {
    const c = this.state.custom;
    return Boolean(c.column) && [c.left, c.right, c.up, c.down].some((q) => q.trim());
  }

  /** Puts the state's projection on screen, starting its computation when needed. */
  _showProjection({ animate, resetCamera = false }) {
    if (!this.dataset) return;
    const method = this.state.projection;
    let p = this.projections[method];
    const { params, dims } = this.requestFor(method);
    const key = JSON.stringify([method, dims, params]);
    const local = this.dataset.local;
    if (local && (method === 'tsne' || method === 'umap')) {
      this.shown = null;
      this._showPlotMessage(`${methodName(method)} runs on the server. Put these files in a LOGDIR and run \`projector serve LOGDIR\` to use it; PCA and Custom work here.`);
      this.render();
      return;
    }
    if (method === 'custom' && !this.customReady()) {
      this.shown = null;
      this._showPlotMessage('Type a query for at least one side (Left, Right, Up, Down) to place the points.');
      this.render();
      return;
    }
    if (method === 'pca' || method === 'custom') {
      if (!p || p.key !== key) p = this._start(method);
    } else if (!p) {
      p = this._start(method);
    }
    this.shown = p;
    this._showPlotMessage(null);
    this.plot.setMode(is3d(this.state) && (method !== 'pca' || !p.data || p.cols >= 3));
    if (p.data) this._display(p, animate);
    if (resetCamera) this.plot.resetView();
    this.render();
  }

  /** Stops and restarts the current t-SNE/UMAP with the current parameters. */
  rerun() {
    const method = this.state.projection;
    const p = this._start(method);
    this.shown = p;
    this.plot.setMode(is3d(this.state));
    this._showPlotMessage(null);
    this.render();
  }

  stopJob(method) {
    const p = this.projections[method];
    if (p) this.runner.cancel(p);
  }

  /** Pause holds the server job (its frames stop); resume lets it go on. */
  togglePause(method) {
    const p = this.projections[method];
    if (p) this.runner.togglePause(p);
  }

  _projectionChanged(p) {
    if (p !== this.projections[p.method]) return;
    if (p === this.shown) {
      if (p.status === 'failed') this.setMessage(`${methodName(p.method)} failed: ${p.error}`, true);
      if (p.data && p.displayedData !== p.data) {
        const first = !p.displayedOnce;
        this.plot.setMode(is3d(this.state) && (p.method !== 'pca' || p.cols >= 3));
        this._display(p, first);
      }
    }
    if (p.task) p.task.update(p.progress || null, progressText(p));
    this.render();
  }

  /** Columns of the projection's coordinates on the x, y (and z) axes. */
  _axes(p) {
    if (p.method === 'pca') {
      const { x, y, z, is3d: threeD } = this.state.pca;
      const axes = threeD && p.cols >= 3 ? [x, y, z] : [x, y];
      return axes.map((a) => Math.min(a, p.cols - 1));
    }
    return p.dims === 3 && p.cols >= 3 ? [0, 1, 2] : [0, 1];
  }

  _display(p, animate) {
    const isolated = this.state.isolated ? new Set(this.state.isolated) : null;
    const { positions, missing } = fitPositions(p.data, this.dataset.n, p.cols, this._axes(p), isolated);
    this.missing = missing;
    this.plot.setPositions(positions, { animate });
    p.displayedData = p.data;
    p.displayedOnce = true;
    this._updateFlags();
  }

  _refit() {
    if (this.shown?.data) this._display(this.shown, true);
  }

  /** The shown projection's coordinates as { data, dims } (for PCA every component). */
  currentCoords() {
    const p = this.shown;
    if (!p?.data) return null;
    return { data: p.data, dims: p.cols };
  }

  // ---- colours, flags, labels -----------------------------------------------------------

  _recolor() {
    const ds = this.dataset;
    if (!ds) return;
    const column = this.state.colorBy;
    const values = column ? ds.values(column) : null;
    const categorical = this.state.categorical ?? (values ? ds.categoricalByDefault(column) : false);
    this.coloring = values ? columnColoring(values, ds.numeric(column), { categorical }) : uniformColoring(ds.n);
    this.plot.setColors(this.coloring.colors, { plain: this.coloring.kind === 'none' });
  }

  _updateFlags() {
    const ds = this.dataset;
    if (!ds) return;
    const flags = new Uint8Array(ds.n);
    if (this.missing) for (let i = 0; i < ds.n; i++) if (this.missing[i]) flags[i] = FLAG_HIDDEN;
    if (this.state.isolated) {
      const keep = new Uint8Array(ds.n);
      for (const i of this.state.isolated) if (i < ds.n) keep[i] = 1;
      for (let i = 0; i < ds.n; i++) if (!keep[i]) flags[i] |= FLAG_HIDDEN;
    }
    const nb = this.neighbors;
    nb.forEach(({ index }, rank) => {
      if (index < ds.n) flags[index] |= FLAG_NEIGHBOR | (neighborShade(rank, nb.length) << SHADE_SHIFT);
    });
    for (const i of this.state.selection) if (i < ds.n) flags[i] |= FLAG_SELECTED;
    if (this.state.focus !== null && this.state.focus < ds.n) flags[this.state.focus] |= FLAG_FOCUS | FLAG_SELECTED;
    this.plot.setFlags(flags, this.state.selection.length > 0 || nb.length > 0);
    this._updateLabels();
  }

  labelOf(i) {
    return this.dataset ? this.dataset.label(i, this.state.labelBy) : '';
  }

  _updateLabels() {
    const candidates = [];
    const add = (index, priority, strong) => {
      if (candidates.length < LABEL_LIMIT) candidates.push({ index, text: this.labelOf(index), priority, strong });
    };
    if (this.hover >= 0) add(this.hover, 0, true);
    if (this.state.focus !== null) add(this.state.focus, 1, true);
    this.neighbors.forEach((nb, rank) => add(nb.index, 2 + rank / 1e5, false));
    for (const i of this.state.selection) if (i !== this.state.focus) add(i, 3, false);
    this.plot.setLabels(candidates);
  }

  // ---- selection, neighbours, search ------------------------------------------------------

  _hovered(i) {
    this.hover = i;
    this._updateLabels();
    this._renderStatus();
    for (const panel of this.panels) panel.hovered?.(i);
  }

  hoverPoint(i) {
    this.hover = i;
    this.plot.setHover(i);
    this._updateLabels();
    this._renderStatus();
  }

  _clicked(i, event) {
    const additive = event.shiftKey || event.ctrlKey || event.metaKey;
    if (i < 0) {
      if (!additive) this.clearSelection();
      return;
    }
    if (additive) {
      const set = new Set(this.state.selection);
      if (set.has(i)) set.delete(i);
      else set.add(i);
      this.update({ selection: [...set] });
    } else {
      this.selectPoint(i);
    }
  }

  selectPoint(i) {
    this.update({ selection: [i], focus: i });
  }

  _regionSelected(indices, event) {
    const additive = event.ctrlKey || event.metaKey || (event.shiftKey && this.plot.tool !== 'navigate');
    const selection = additive ? [...new Set([...this.state.selection, ...indices])] : indices;
    this.update({ selection, focus: selection.length === 1 ? selection[0] : null });
    this.setMessage(`Selected ${formatCount(selection.length)} points`);
  }

  clearSelection() {
    this.neighbors = [];
    this.update({ selection: [], focus: null });
  }

  isolateSelection() {
    const ids = new Set([...this.state.selection, ...this.neighbors.map((n) => n.index)]);
    if (ids.size) this.update({ isolated: [...ids].sort((a, b) => a - b) });
  }

  async _loadNeighbors() {
    const ds = this.dataset;
    const focus = this.state.focus;
    const token = ++this.neighborToken;
    if (focus === null || !ds) return;
    const { metric } = this.state.neighbors;
    const k = Math.min(this.state.neighbors.k, ds.n - 1); // the API refuses k >= N
    if (k < 1) return;
    try {
      let list;
      if (ds.local) list = nearestNeighbors(ds.vectors, ds.n, ds.d, focus, k, metric);
      else list = (await this.api.neighbors(ds.run, ds.name, focus, k, metric)).neighbors;
      if (token !== this.neighborToken || this.state.focus !== focus) return;
      this.neighbors = list;
    } catch (err) {
      if (token !== this.neighborToken) return;
      this.neighbors = [];
      this.setMessage(`Neighbours: ${err.message}`, true);
    }
    this._updateFlags();
    this.render();
  }

  async runSearch({ select }) {
    const ds = this.dataset;
    const { column, query, regex } = this.state.search;
    const token = ++this.searchToken;
    if (!ds || !query || !column) {
      this.searchResult = { indices: [], error: null };
      this.render();
      return;
    }
    let result;
    try {
      const indices = ds.local
        ? localSearch(ds.values(column), query, regex)
        : (await this.api.search(ds.run, ds.name, column, query, regex)).indices;
      result = { indices, error: null };
    } catch (err) {
      result = { indices: [], error: err.message };
    }
    if (token !== this.searchToken) return;
    this.searchResult = result;
    if (select && !result.error) {
      const focus = result.indices.length === 1 ? result.indices[0] : null;
      this.update({ selection: result.indices, focus });
    } else {
      this.render();
    }
  }

  // ---- bookmarks --------------------------------------------------------------------------

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
      const { state, coords } = fromTensorBoardState(tb, { n: this.dataset.n, d: this.dataset.d });
      this.applyState(state, { coords, iteration: tb.tSNEIteration });
      this.activeBookmark = index;
      this.setMessage(`Loaded bookmark “${tb.label}”`);
    } catch (err) {
      this.setMessage(`Bookmark: ${err.message}`, true);
    }
    this.render();
  }

  saveBookmarks() {
    const list = this.bookmarks.map((b, i) => ({ ...b, isSelected: i === this.activeBookmark }));
    download('bookmarks.json', JSON.stringify(list), 'application/json');
  }

  async loadBookmarkFile(file) {
    const list = parseBookmarkFile(await file.text());
    this.bookmarks = list;
    this.activeBookmark = -1;
    const selected = list.findIndex((b) => b.isSelected);
    this.loadBookmark(selected >= 0 ? selected : 0);
  }

  // ---- downloads ----------------------------------------------------------------------------

  downloadCoordinates(sep) {
    const p = this.shown;
    if (!p?.data) {
      this.setMessage('No projection to download yet', true);
      return;
    }
    const axes = this._axes(p);
    const n = this.dataset.n;
    const coords = new Float32Array(n * axes.length);
    for (let i = 0; i < n; i++) for (let a = 0; a < axes.length; a++) coords[i * axes.length + a] = p.data[i * p.cols + axes[a]];
    const ext = sep === ',' ? 'csv' : 'tsv';
    download(`${this.dataset.name}-${p.method}.${ext}`, formatCoordinates(coords, n, axes.length, sep), `text/${ext === 'csv' ? 'csv' : 'tab-separated-values'}`);
  }

  downloadMetadata() {
    const ds = this.dataset;
    if (!ds?.metadata) {
      this.setMessage('This data set has no metadata', true);
      return;
    }
    download(`${ds.name}-metadata.tsv`, formatMetadataTsv(ds.metadata.names, ds.metadata.columns), 'text/tab-separated-values');
  }

  // ---- status, progress, messages ---------------------------------------------------------

  setMessage(text, error = false) {
    this.message = { text, error };
    this._renderStatus();
  }

  _showPlotMessage(text) {
    const box = $('plot-message');
    box.hidden = !text;
    box.textContent = text || '';
  }

  _renderStatus() {
    const ds = this.dataset;
    const shownCount = this.state.isolated ? this.state.isolated.length : null;
    $('status-points').textContent = ds
      ? `Points: ${formatCount(ds.n)}${shownCount !== null ? ` (showing ${formatCount(shownCount)})` : ''}`
      : 'Points: –';
    $('status-dimension').textContent = ds ? `Dimension: ${formatCount(ds.d)}` : 'Dimension: –';
    $('status-hover').textContent = this.hover >= 0 ? this.labelOf(this.hover) : '';
    const selected = this.state.selection.length;
    const nb = this.neighbors.length;
    $('status-selection').textContent = selected
      ? `Selected ${formatCount(selected)} point${selected === 1 ? '' : 's'}${nb ? ` + ${formatCount(nb)} neighbours` : ''}`
      : '';
    const message = $('status-message');
    message.textContent = this.message.text;
    message.classList.toggle('error', this.message.error);
  }

  _renderProgress() {
    const task = this.progress.top;
    const box = $('progress');
    box.hidden = !task;
    if (!task) return;
    $('progress-label').textContent = task.label;
    const fill = $('progress-fill');
    fill.classList.toggle('indeterminate', task.fraction === null);
    fill.style.width = task.fraction === null ? '' : `${Math.round(task.fraction * 100)}%`;
  }

  // ---- theme, URL, hooks --------------------------------------------------------------------

  toggleTheme() {
    const root = document.documentElement;
    root.dataset.theme = root.dataset.theme === 'dark' ? 'light' : 'dark';
    localStorage.setItem('projector-theme', root.dataset.theme);
    this.plot.setTheme(readTheme());
  }

  _bindGlobal() {
    $('theme-toggle').addEventListener('click', () => this.toggleTheme());
    window.addEventListener('hashchange', () => {
      if (location.hash === this.lastHash) return;
      const state = decodeState(location.hash);
      if (!state || !this.dataset) return;
      if (state.run !== this.state.run || state.embedding !== this.state.embedding) {
        this.openDataset(state.run, state.embedding, state);
      } else {
        this.applyState(state);
      }
    });
  }
}

function methodName(method) {
  return { pca: 'PCA', tsne: 't-SNE', umap: 'UMAP', custom: 'Custom projection' }[method];
}

function progressText(p) {
  const name = methodName(p.method);
  if (p.status === 'queued') return `${name}: queued…`;
  if (p.method === 'tsne' && p.iteration !== null) return `${name}: iteration ${formatCount(p.iteration)}`;
  if (p.progress) return `${name}: ${Math.round(p.progress * 100)}%`;
  return `${name}…`;
}

/** The plot's colours from the CSS theme variables. */
function readTheme() {
  const css = getComputedStyle(document.documentElement);
  const value = (name) => css.getPropertyValue(name).trim();
  const rgb = (name) => hexToRgb(value(name)).map((c) => c / 255);
  const rgba = (name) => {
    const m = /rgba?\(([^)]+)\)/.exec(value(name));
    const parts = m ? m[1].split(',').map((s) => Number(s.trim())) : [200, 200, 200, 0.5];
    return [parts[0] / 255, parts[1] / 255, parts[2] / 255, parts[3] ?? 1];
  };
  return {
    background: rgb('--plot-bg'),
    dim: rgba('--plot-dim'),
    selected: rgb('--plot-selected'),
    hovered: rgb('--plot-hovered'),
    ring: rgb('--plot-ring'),
    labelBackground: value('--label-bg'),
    labelText: value('--label-text'),
    labelStrongBackground: value('--label-strong-bg'),
    labelStrongText: value('--label-strong-text'),
    labelBorder: value('--label-border'),
    region: value('--region'),
    regionFill: value('--region-fill'),
  };
}

const app = new App();
/** Hooks for tests and bench/: timings and a read-only view of the state. */
window.__projector = {
  app,
  get firstFrameMs() {
    return app.plot.firstFrameMs;
  },
  get frameTimes() {
    return app.plot.frameTimes.slice();
  },
  state: () => JSON.parse(JSON.stringify(app.state)),
  /** The state the URL hash holds now. */
  urlState: () => decodeState(location.hash),
  get ready() {
    return app.ready && Boolean(app.shown?.data);
  },
  projection: () => (app.shown ? { method: app.shown.method, status: app.shown.status, iteration: app.shown.iteration, frames: app.shown.frames, cols: app.shown.cols } : null),
  /** Orbits the 3D camera one step per animation frame; resolves with the frame intervals (ms). */
  orbit(frames = 120) {
    const plot = app.plot;
    return new Promise((resolve) => {
      const intervals = [];
      let last = null;
      const step = (now) => {
        if (last !== null) intervals.push(now - last);
        last = now;
        if (intervals.length >= frames) {
          resolve(intervals);
          return;
        }
        plot.camera = { ...plot.camera, theta: plot.camera.theta + 0.02 };
        plot.picking.invalidate();
        plot._draw();
        requestAnimationFrame(step);
      };
      requestAnimationFrame(step);
    });
  },
};
app.start();
