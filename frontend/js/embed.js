// Widget mode: a page opened with ?embed (the notebook widget's iframe) shares its view with
// Python through the server: it posts the user's selection, colour column and projection to
// /api/session/state, and long-polls the same route for what Python sets (widget.selection =
// [...], widget.color_by, widget.projection). Only App's public members are used (and its
// `ready` flag where it has one).

const PROJECTIONS = ['pca', 'tsne', 'umap', 'custom'];
const POLL_SECONDS = 10;

/** @param {import('./app.js').App} app */
export function installEmbed(app) {
  if (!new URLSearchParams(location.search).has('embed')) return;
  let version = -1;
  let synced = false; // nothing is reported before Python's first word, which would be lost
  let pending = null;
  let last = null;
  let applying = false;

  const loaded = () => Boolean(app.dataset) && app.datasets.ready !== false;
  const view = () => {
    const s = app.state;
    return { run: s.run, embedding: s.embedding, selection: s.selection, color_by: s.colorBy, projection: s.projection };
  };

  function apply(remote) {
    const ds = app.dataset;
    const patch = {};
    if (Array.isArray(remote.selection)) {
      const selection = remote.selection.filter((i) => Number.isInteger(i) && i >= 0 && i < ds.n);
      if (JSON.stringify(selection) !== JSON.stringify(app.state.selection)) {
        patch.selection = selection;
        patch.focus = selection.length === 1 ? selection[0] : null;
      }
    }
    const color = remote.color_by;
    if (color !== app.state.colorBy && (color === null || ds.columns.includes(color))) {
      patch.colorBy = color;
      patch.categorical = null;
    }
    if (PROJECTIONS.includes(remote.projection) && remote.projection !== app.state.projection) patch.projection = remote.projection;
    if (Object.keys(patch).length) app.update(patch);
  }

  /** Posts only the fields the user changed, so a field Python set meanwhile is not undone. */
  function report() {
    if (!synced || !loaded() || applying) return;
    if (pending) {
      const remote = pending;
      pending = null;
      applying = true;
      try {
        apply(remote);
      } finally {
        applying = false;
      }
      // What Python holds now: whatever the page could not take (an unknown column) goes back.
      const selection = JSON.stringify(remote.selection) === JSON.stringify(app.state.selection) ? app.state.selection : remote.selection;
      last = { ...remote, selection };
    }
    const now = view();
    const changed = Object.fromEntries(Object.entries(now).filter(([k, v]) => !last || last[k] !== v));
    last = now;
    if (!Object.keys(changed).length) return;
    const init = { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(changed) };
    fetch(app.api.url('session/state'), init).catch(() => {});
  }

  // Reported on every render of the app, as a panel is rendered.
  app.panels.push({ render: report });

  (async () => {
    for (;;) {
      try {
        const response = await fetch(app.api.url('session/state', { since: version, timeout: synced ? POLL_SECONDS : 0 }));
        const remote = await response.json();
        if (remote.version > version) {
          version = remote.version;
          if (remote.origin === 'python') pending = remote;
        }
        synced = true;
        report();
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  })();
}
