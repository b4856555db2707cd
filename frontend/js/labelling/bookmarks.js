// Bookmarks made in the page are kept in the server's store (POST/DELETE /api/bookmarks), so
// they survive a reload and show in every page of the same embedding (the LOGDIR's bookmark
// file's come first, read-only). A bookmark saved, renamed or deleted in another page arrives
// on the event stream. Download and upload of TensorBoard's file are as before.

import { splitStep } from '../training/timeline.js';

/** A state past this many bytes of JSON is kept without its per-point coordinates (recomputed when loaded). */
const STATE_BYTES = 900000;

/** The state as the store keeps it: without `saved`, and without coordinates when too large. */
function kept(bookmark) {
  const { saved, ...state } = bookmark;
  if (JSON.stringify(state).length <= STATE_BYTES) return state;
  return { ...state, projections: [] };
}

/**
 * @param {import('../app.js').App} app
 * @param {() => boolean} enabled  whether the server keeps them (annotations on)
 */
export function persistBookmarks(app, enabled) {
  const own = new Set();
  /** @type {Set<Promise<void>>} saves in flight: their events may come before their answers */
  const saving = new Set();
  const here = () => {
    const ds = app.dataset;
    return ds && !ds.local && !app.api.isStatic && enabled() ? ds : null;
  };

  function save(bookmark) {
    const done = saveNow(bookmark).finally(() => saving.delete(done));
    saving.add(done);
    return done;
  }

  async function saveNow(bookmark) {
    const ds = here();
    if (!ds) return;
    try {
      const answer = await app.api.saveBookmark(ds.run, ds.name, kept(bookmark));
      own.add(answer.saved.id);
      bookmark.saved = answer.saved;
    } catch (err) {
      app.setMessage(`Bookmark “${bookmark.label}” is kept in this page only: ${err.message}`, true);
    }
    app.render();
  }

  async function forget(saved) {
    const ds = here();
    if (!ds || !saved) return;
    own.add(saved.id);
    await app.api.deleteBookmark(ds.run, ds.name, saved.id).catch((err) => {
      app.setMessage(`Bookmark not deleted on the server: ${err.message}`, true);
    });
  }

  app.saving.listen((change, bookmark) => {
    if (change === 'added') save(bookmark);
    else if (change === 'removed') forget(bookmark.saved);
    else if (change === 'renamed' && bookmark.saved) {
      const old = bookmark.saved;
      delete bookmark.saved;
      save(bookmark).then(() => forget(old)); // saved again under its new name, then the old one goes
    }
  });

  app.events?.subscribe('bookmark', async (data) => {
    await Promise.all(saving); // this page's own saves are known once answered
    const ds = here();
    if (!ds || data.run !== ds.run || data.tag !== splitStep(ds.name)[0] || own.has(data.id)) return;
    if (data.action === 'removed') {
      app.saving.savedElsewhere({ removed: data.id });
      return;
    }
    const listed = await app.api.bookmarks(ds.run, ds.name).catch(() => []);
    if (app.dataset === ds) app.saving.savedElsewhere({ added: listed });
  });
}
