// The controller: owns the one UI state (the store: what the URL and bookmarks serialise),
// and keeps the plot and the panels in step with it. Panels change the state only through
// `app.update(patch)`. The work is split by idea into controller/ (loading data sets,
// projections, highlighting, bookmarks and downloads, status); features added later hook in
// through the public members: state, update(patch, opts), dataset, plot, api, panels,
// render(), setMessage(text, isError), progress.start(label).

import { Api } from './api.js';
import { Highlighting } from './controller/highlighting.js';
import { DatasetLoading } from './controller/loading.js';
import { mixin } from './mixin.js';
import { ProgressTracker } from './controller/progress.js';
import { Projecting } from './controller/projecting.js';
import { Saving } from './controller/saving.js';
import { TileHighlighting } from './tiles/delivery.js';
import { installStaticMode, isStaticSite, StaticApi } from './static_mode.js';
import { StatusDisplay } from './controller/status.js';
import { $, debounce, formatCount } from './dom.js';
import { installEmbed } from './embed.js';
import { installExports } from './export/install.js';
import { clampNote, clampState } from './limits.js';
import { listRunsWhenReady } from './run_list.js';
import { installMetadataEdit } from './metadata_edit.js';
import { createBookmarksPanel } from './panels/bookmarks.js';
import { createDataPanel } from './panels/data.js';
import { createInspectorPanel } from './panels/inspector.js';
import { installLabelsAndSequences } from './panels/labels_sequences.js';
import { createProjectionsPanel } from './panels/projections.js';
import { Plot } from './plot.js';
import { Projection } from './projection/projection.js';
import { decodeState, defaultState, defaultStateFor, encodeState, is3d, sanitizeState } from './state.js';
import { runtimeDefaults } from './store.js';
import { readTheme } from './theme.js';
import { installStructure } from './structure/install.js';
import { installKeyboard } from './panels/keyboard.js';
import { installLayout } from './panels/layout.js';

/**
 * Its fields: `state` (state.js, serialised), the runtime (store.js `Runtime`, declared
 * there), and collaborators made once here (api, plot, panels, progress, debounced
 * actions). The mixed-in classes (mixin.js) read and write only these.
 * @implements {import('./store.js').Runtime}
 */
class App {
  constructor() {
    this.api = isStaticSite() ? new StaticApi() : new Api(); // static: a shared site (projector export)
    this.state = defaultState();
    Object.assign(this, runtimeDefaults()); // its runtime fields, declared in store.js
    this.progress = new ProgressTracker(() => this._renderProgress());
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
      this.runs = await listRunsWhenReady(this, fromUrl);
    } catch (err) {
      this.setMessage(`Could not list runs: ${err.message}`, true);
      this.runs = [];
    } finally {
      task.done();
    }
    // Points the server can show (status "ready": a broken metadata or sprite file leaves them
    // usable, said in the Data panel), those without a broken file first.
    const usable = this.runs.flatMap((r) => r.embeddings.filter((e) => e.status === 'ready' && e.shape).map((e) => ({ run: r.name, e })));
    const healthy = [...usable.filter((u) => !u.e.error), ...usable.filter((u) => u.e.error)].map((u) => [u.run, u.e.name]);
    let target = healthy[0];
    const linkedHere = fromUrl && healthy.some(([r, e]) => r === fromUrl.run && e === fromUrl.embedding);
    if (linkedHere) target = [fromUrl.run, fromUrl.embedding];
    if (!target) {
      this._showPlotMessage(this.runs.length ? 'No readable embedding in this LOGDIR.' : 'No runs found. Start with `projector serve LOGDIR`, or load your own data in the Data panel.');
      this.render();
      return;
    }
    // A link to data this server lacks: its selection and view name rows of other data, so
    // they are not applied to the data shown instead, and the user is told.
    const elsewhere = fromUrl?.run != null && !linkedHere;
    await this.openDataset(target[0], target[1], elsewhere ? null : fromUrl);
    if (elsewhere) {
      const why = this.embeddingInfo(fromUrl.run, fromUrl.embedding)?.error || 'not on this server';
      this.setMessage(`The link's ${fromUrl.run} / ${fromUrl.embedding}: ${why}. Showing ${target[0]} / ${target[1]}`, true);
    }
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
    if (changed('colorBy') || changed('categorical') || changed('colorByQuality') || (this.coloredTiled && changed('labelBy'))) this._recolor();
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

  /** Applies a whole state (URL, bookmark) to the open data set, clamped into the parameter
   * table's ranges (what was moved is said in the status bar). */
  applyState(state, { coords = null, iteration = null } = {}) {
    const table = this.dataset.methods;
    const read = sanitizeState({ ...state, run: this.state.run, embedding: this.state.embedding }, defaultStateFor(table));
    const { state: next, notes } = clampState(read, table);
    if (notes.length) this.setMessage(clampNote(notes, 'The link'));
    const method = next.projection;
    if (coords && (method === 'tsne' || method === 'umap')) {
      const { params, dims } = this.requestFor(method, next);
      const p = Projection.restored(method, params, dims, coords, iteration);
      if (this.projections[method]?.running) this.projections[method].cancel();
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

  /** This view's address from the state as it is now (the address bar follows 250 ms later). */
  viewUrl() {
    return `${location.origin}${location.pathname}${location.search}${encodeState(this.state)}`;
  }

  _saveUrl() {
    if (!this.ready || !this.dataset || this.dataset.local) return;
    const hash = encodeState(this.state);
    if (location.hash !== hash) history.replaceState(null, '', hash);
    this.lastHash = hash;
    this._linkCompare(hash);
  }

  render() {
    for (const panel of this.panels) panel.render();
    this._renderStatus();
    this._renderProgress();
    $('mode-badge').textContent = is3d(this.state) ? '3D' : '2D';
    const ds = this.dataset;
    $('dataset-title').textContent = ds ? `${ds.local ? 'Uploaded' : ds.run} / ${ds.name}  ·  ${formatCount(ds.n)} × ${ds.d}` : '';
  }

  // ---- URL -----------------------------------------------------------------------------

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

mixin(App, DatasetLoading, Projecting, Highlighting, Saving, StatusDisplay);
mixin(App, TileHighlighting);

const app = new App();
if (app.api.isStatic) installStaticMode(app);
else installStructure(app); // its analyses run on the server
installEmbed(app);
installMetadataEdit(app);
installExports(app);
installLabelsAndSequences(app);
installKeyboard(app);
installLayout();
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
    // Large sets go into the plot in slices after their data arrives (draw_order.js), or
    // are shown from tiles (tiled_projection.js).
    if (app.shown?.tiled) return app.ready && app.plot.tiles === app.shown.tiled;
    return app.ready && Boolean(app.shown?.data) && app.shown.displayedData === app.shown.data;
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
        plot.setCamera({ ...plot.camera, theta: plot.camera.theta + 0.02 });
        requestAnimationFrame(step);
      };
      requestAnimationFrame(step);
    });
  },
};
app.start();
