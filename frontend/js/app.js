// The controller: owns the one UI state (the store: what the URL and bookmarks serialise),
// and keeps the plot and the panels in step with it. Panels change the state only through
// `app.update(patch)`. The App is a small object holding named parts, each with its own
// fields (declared in its constructor, sealed) and methods the others call: `datasets`
// (controller/loading.js: opening data sets), `projecting` (controller/projecting.js: which
// projection is shown), `highlight` (controller/highlighting.js: colours, marks, labels,
// selection, neighbours, search), `saving` (controller/saving.js: bookmarks, downloads) and
// `status` (controller/status.js: status bar, plot messages, progress), `events` (events.js:
// the server's stream of changes, by kind). No part writes
// another's fields, nor the state: the App writes it (update, replaceState). Features added
// later hook in through the App's members: state, update(patch, opts), dataset, shown, plot,
// api, events (the server's one event stream, events.js: subscribe by kind), panels,
// render(), setMessage(text, isError), progress.start(label), and the parts.

import { Api } from './api.js';
import { Highlighting } from './controller/highlighting.js';
import { DatasetLoading } from './controller/loading.js';
import { ProgressTracker } from './controller/progress.js';
import { Connection } from './controller/connection.js';
import { Projecting } from './controller/projecting.js';
import { Saving } from './controller/saving.js';
import { installStaticMode, isStaticSite, StaticApi } from './static_mode.js';
import { StatusDisplay } from './controller/status.js';
import { $, debounce, formatCount } from './dom.js';
import { EventFeed } from './events.js';
import { installEmbed } from './embed.js';
import { installExports } from './export/install.js';
import { clampNote, clampState } from './limits.js';
import { installMeaning } from './meaning/install.js';
import { installLabelling } from './labelling/install.js';
import { createBookmarksPanel } from './panels/bookmarks.js';
import { createDataPanel } from './panels/data.js';
import { createInspectorPanel } from './panels/inspector.js';
import { installLabelsAndSequences } from './panels/labels_sequences.js';
import { createProjectionsPanel } from './panels/projections.js';
import { Plot } from './plot.js';
import { Projection } from './projection/projection.js';
import { decodeState, defaultState, defaultStateFor, encodeState, is3d, sanitizeState, unreadableLink } from './state.js';
import { readTheme } from './theme.js';
import { installStructure } from './structure/install.js';
import { installKeyboard } from './panels/keyboard.js';
import { installLayout } from './panels/layout.js';
import { installTraining } from './training/install.js';

export class App {
  constructor() {
    /** @type {Api} a StaticApi for a shared site (projector export) */
    this.api = isStaticSite() ? new StaticApi() : new Api();
    /** @type {EventFeed | null} the server's event stream, the page's one (none for a shared site) */
    this.events = this.api.isStatic ? null : new EventFeed(this.api.url('events').href);
    /** @type {import('./store.js').State} the serialised state: written here only */
    this.state = defaultState();
    /** @type {string | null} the URL hash this page wrote last (its own hashchange is ignored) */
    this.lastHash = null;
    this.status = new StatusDisplay(this);
    this.connection = new Connection(this);
    this.progress = new ProgressTracker(() => this.status.renderProgress());
    this.datasets = new DatasetLoading(this);
    this.projecting = new Projecting(this);
    this.highlight = new Highlighting(this);
    this.saving = new Saving(this);
    this.plot = new Plot($('.plot-container'), {
      hover: (i) => this.highlight.hovered(i),
      click: (i, event) => this.highlight.clicked(i, event),
      region: (indices, event) => this.highlight.regionSelected(indices, event),
      camera: (camera) => this.update({ camera }, { fromPlot: true }),
      describe: (i) => this.highlight.labelOf(i),
    });
    this.plot.setTheme(readTheme());
    /** @type {Array<{ render: () => void, hovered?: (i: number) => void }>} */
    this.panels = [createDataPanel(this), createProjectionsPanel(this), createInspectorPanel(this), createBookmarksPanel(this)];
    this.writeUrlSoon = debounce(() => this._saveUrl(), 250);
    // Back after an outage: a page that could not open its data opens it now.
    this.connection.onBack.push(() => {
      if (!this.dataset) this.start();
    });
    this._runCustom = debounce(() => this.projecting.showProjection({ animate: true }), 350);
    Object.seal(this);
    this._bindGlobal();
  }

  /** The data set on screen (the datasets part's). */
  get dataset() {
    return this.datasets.dataset;
  }

  /** The projection the plot shows (the projecting part's). */
  get shown() {
    return this.projecting.shown;
  }

  /** A status message for as long as it is true (controller/status.js). */
  setMessage(text, error = false, options = {}) {
    this.status.setMessage(text, error, options);
  }

  /** The shown projection's points are in the plot (projection.js View): marks follow them. */
  pointsShown() {
    this.highlight.pointsShown();
  }

  // ---- start-up and data sets ---------------------------------------------------------

  async start() {
    this.connection.follow();
    const fromUrl = decodeState(location.hash);
    const runs = await this.datasets.listRuns(fromUrl);
    // Points the server can show (status "ready": a broken metadata or sprite file leaves them
    // usable, said in the Data panel), those without a broken file first.
    const usable = runs.flatMap((r) => r.embeddings.filter((e) => e.status === 'ready' && e.shape).map((e) => ({ run: r.name, e })));
    const healthy = [...usable.filter((u) => !u.e.error), ...usable.filter((u) => u.e.error)].map((u) => [u.run, u.e.name]);
    let target = healthy[0];
    const linkedHere = fromUrl && healthy.some(([r, e]) => r === fromUrl.run && e === fromUrl.embedding);
    if (linkedHere) target = [fromUrl.run, fromUrl.embedding];
    if (!target) {
      this.status.showPlotMessage(runs.length ? 'No readable embedding in this LOGDIR yet.' : 'No runs found yet. Start with `projector serve LOGDIR`, or load your own data in the Data panel.');
      this.datasets.openWhenListed(); // one written later opens
      this.render();
      return;
    }
    // A link to data this server lacks: its selection and view name rows of other data, so
    // they are not applied to the data shown instead, and the user is told.
    const elsewhere = fromUrl?.run != null && !linkedHere;
    await this.datasets.openDataset(target[0], target[1], elsewhere ? null : fromUrl);
    if (elsewhere) {
      const why = this.datasets.embeddingInfo(fromUrl.run, fromUrl.embedding)?.error || 'not on this server';
      this.setMessage(`The link's ${fromUrl.run} / ${fromUrl.embedding}: ${why}. Showing ${this.datasets.runLabel(target[0])} / ${target[1]}`, true);
    } else if (unreadableLink(location.hash)) {
      this._unreadableLink();
    }
  }

  /** A view link that cannot be read (cut short, mistyped): said, instead of whatever the
   * view shown instead says of itself (a bookmark it loaded). */
  _unreadableLink() {
    const ds = this.dataset;
    const shown = ds ? `${ds.local ? 'the uploaded files' : `${this.datasets.runLabel(ds.run)} / ${ds.name}`}` : 'nothing';
    this.setMessage(`The link's view cannot be read (it may be cut short). Showing ${shown}`, true);
  }

  // ---- state --------------------------------------------------------------------------

  /** Merges a patch into the state and brings everything that depends on it up to date. */
  update(patch, { fromPlot = false } = {}) {
    const { datasets, projecting, highlight, plot } = this;
    const prev = this.state;
    this.state = { ...prev, ...patch };
    const changed = (key) => key in patch && JSON.stringify(prev[key]) !== JSON.stringify(this.state[key]);
    if (!this.dataset) return;
    if (changed('run') || changed('embedding')) {
      const { run, embedding } = this.state;
      const local = datasets.localDatasets.find((d) => d.run === run && d.name === embedding);
      if (local) datasets.openLocal(local);
      else datasets.openDataset(run, embedding);
      return;
    }
    if (Object.keys(patch).some((key) => changed(key) && highlight.colorsFollow(key))) highlight.recolor();
    if (changed('sprites')) plot.setShowSprites(Boolean(this.dataset.sprite) && this.state.sprites);
    if (changed('projection')) {
      projecting.showProjection({ animate: true, resetCamera: true });
    } else if (this.state.projection === 'pca' && changed('pca')) {
      const spherize = prev.pca.spherize !== this.state.pca.spherize;
      const dims = prev.pca.is3d !== this.state.pca.is3d;
      projecting.showProjection({ animate: true, resetCamera: dims && !spherize });
    } else if (this.state.projection === 'custom' && changed('custom')) {
      this._runCustom();
    } else if (['tsne', 'umap'].includes(this.state.projection) && changed(this.state.projection)) {
      if (prev[this.state.projection].is3d !== this.state[this.state.projection].is3d) projecting.rerun();
    }
    if (changed('isolated')) projecting.refit();
    if (changed('selection') || changed('focus') || changed('isolated')) {
      if (changed('focus') || !this.state.focus) highlight.dropNeighbors();
      highlight.updateFlags();
    }
    if ((changed('focus') || changed('neighbors')) && this.state.focus !== null) highlight.neighborsSoon();
    if (changed('search')) highlight.searchSoon();
    if (changed('camera') && !fromPlot && this.state.camera) plot.setCamera(this.state.camera);
    if (changed('labelBy') || changed('selection') || changed('focus') || changed('sprites')) highlight.updateLabels();
    if (!fromPlot) this.saving.viewChanged();
    this.render();
    this.writeUrlSoon();
  }

  /**
   * Sets the state whole, without update()'s effects: a data set opening (its effects come
   * as it loads), a bookmark taking the camera.
   * @param {import('./store.js').State} state
   */
  replaceState(state) {
    this.state = state;
  }

  /** Applies a whole state (URL, bookmark) to the open data set, clamped into the parameter
   * table's ranges (what was moved is said in the status bar). */
  applyState(state, { coords = null, iteration = null } = {}) {
    const { projecting, highlight, plot } = this;
    const table = this.dataset.methods;
    const read = sanitizeState({ ...state, run: this.state.run, embedding: this.state.embedding }, defaultStateFor(table));
    const { state: next, notes } = clampState(read, table);
    if (notes.length) this.setMessage(clampNote(notes, 'The link'));
    const method = next.projection;
    if (coords && (method === 'tsne' || method === 'umap')) {
      const { params, dims } = projecting.requestFor(method, next);
      const p = Projection.restored(method, params, dims, coords, iteration);
      projecting.restore(p);
    }
    const prevProjection = this.shown;
    this.state = next;
    if (this.dataset.metadata) this.datasets.applyMetadataDefaults({ restored: true });
    highlight.dropNeighbors();
    highlight.recolor();
    plot.setShowSprites(Boolean(this.dataset.sprite) && this.state.sprites);
    projecting.showProjection({ animate: prevProjection !== null, resetCamera: !next.camera });
    this.afterStateApplied();
    this.render();
    this.writeUrlSoon();
  }

  /** Effects of a freshly applied state that the data set must be loaded for. */
  afterStateApplied() {
    const { highlight } = this;
    highlight.updateFlags();
    highlight.updateLabels();
    if (this.state.camera) this.plot.setCamera(this.state.camera);
    if (this.state.focus !== null) highlight.loadNeighbors();
    if (this.state.search.query) highlight.runSearch({ select: false });
  }

  /** This view's address from the state as it is now (the address bar follows 250 ms later). */
  viewUrl() {
    return `${location.origin}${location.pathname}${location.search}${encodeState(this.state)}`;
  }

  _saveUrl() {
    if (!this.datasets.ready || !this.dataset || this.dataset.local) return;
    const hash = encodeState(this.state);
    if (location.hash !== hash) history.replaceState(null, '', hash);
    this.lastHash = hash;
    this.saving.linkCompare(hash);
  }

  render() {
    for (const panel of this.panels) panel.render();
    this.status.renderStatus();
    this.status.renderProgress();
    $('mode-badge').textContent = is3d(this.state) ? '3D' : '2D';
    const ds = this.dataset;
    $('dataset-title').textContent = ds ? `${ds.local ? 'Uploaded' : this.datasets.runLabel(ds.run)} / ${ds.name}  ·  ${formatCount(ds.n)} × ${ds.d}` : '';
  }

  // ---- URL -----------------------------------------------------------------------------

  _bindGlobal() {
    $('theme-toggle').addEventListener('click', () => this.status.toggleTheme());
    window.addEventListener('hashchange', () => {
      if (location.hash === this.lastHash) return;
      const state = decodeState(location.hash);
      if (!this.dataset) return;
      if (!state) {
        if (unreadableLink(location.hash)) this._unreadableLink();
        return;
      }
      if (state.run !== this.state.run || state.embedding !== this.state.embedding) {
        this.datasets.openDataset(state.run, state.embedding, state);
      } else {
        this.applyState(state);
      }
    });
  }
}

const app = new App();
if (app.api.isStatic) installStaticMode(app);
else installStructure(app); // its analyses run on the server
installTraining(app);
installEmbed(app);
installLabelling(app);
installExports(app);
installMeaning(app);
installLabelsAndSequences(app);
installKeyboard(app);
installLayout();
/** Hooks for tests and bench/: timings and a read-only view of the state. */
/** @type {any} */ (window).__projector = {
  app,
  get firstFrameMs() {
    return app.plot.frames.firstFrameMs;
  },
  get frameTimes() {
    return app.plot.frames.times.slice();
  },
  state: () => JSON.parse(JSON.stringify(app.state)),
  /** The state the URL hash holds now. */
  urlState: () => decodeState(location.hash),
  get ready() {
    // Large sets go into the plot in slices after their data arrives (draw_order.js), or
    // come as tiles (tiles/tile_points.js): ready once the shown projection's points are
    // the plot's, the latest it has.
    const p = app.shown;
    return app.datasets.ready && Boolean(p?.source) && app.plot.source === p.source && p.displayedData === p.data;
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
