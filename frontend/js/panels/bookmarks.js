// Bookmarks panel: the tray of saved states (load by a click on the name, rename, delete), add, save all
// to a file, load a file (TensorBoard's format).

import { $, el } from '../dom.js';

/** @param {import('../app.js').App} app */
export function createBookmarksPanel(app) {
  const list = $('bookmarks-list');
  const error = $('bookmark-error');
  let renderedFor = null;

  $('bookmark-add').addEventListener('click', () => app.saving.addBookmark());
  $('bookmark-save').addEventListener('click', () => app.saving.saveBookmarks());
  $('bookmark-load').addEventListener('change', async (event) => {
    const file = event.target.files[0];
    event.target.value = '';
    if (!file) return;
    error.hidden = true;
    try {
      await app.saving.loadBookmarkFile(file);
    } catch (err) {
      error.textContent = err.message;
      error.hidden = false;
    }
  });

  /** Renaming happens in place: Enter or leaving the field keeps the name, Escape drops it. */
  function rename(bookmark, name) {
    const input = el('input', { class: 'bookmark-name-input', value: bookmark.label, 'aria-label': 'Bookmark name' });
    let done = false;
    const finish = (keep) => {
      if (done) return;
      done = true;
      if (keep && input.value.trim()) app.saving.renameBookmark(bookmark, input.value.trim());
      renderedFor = null;
      render();
    };
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') finish(true);
      if (e.key === 'Escape') finish(false);
    });
    input.addEventListener('blur', () => finish(true));
    name.replaceWith(input);
    input.focus();
    input.select();
  }

  function row(bookmark, index) {
    const active = index === app.saving.activeBookmark;
    // The name loads the bookmark (as the radio does); renaming has its own button.
    const name = el('button', {
      type: 'button',
      class: 'bookmark-name',
      title: `Load ${bookmark.label} (double-click to rename)`,
      'aria-current': active ? 'true' : null,
      dataset: { testid: 'bookmark-name' },
      onclick: () => app.saving.loadBookmark(index),
      ondblclick: () => rename(bookmark, name),
    }, bookmark.label);
    return el(
      'li',
      { class: active ? 'active' : null, dataset: { testid: 'bookmark-item' } },
      el('input', {
        type: 'radio',
        name: 'bookmark',
        checked: active,
        'aria-label': `Load ${bookmark.label}`,
        onchange: () => app.saving.loadBookmark(index),
      }),
      name,
      el('button', {
        type: 'button',
        class: 'icon-button',
        title: 'Rename',
        'aria-label': `Rename ${bookmark.label}`,
        dataset: { testid: 'bookmark-rename' },
        onclick: () => rename(bookmark, name),
      }, icon('M4 20h4L19 9l-4-4L4 16v4zM14 6l4 4')),
      el(
        'button',
        {
          type: 'button',
          class: 'icon-button',
          title: 'Delete',
          'aria-label': `Delete ${bookmark.label}`,
          onclick: () => app.saving.removeBookmark(index),
        },
        icon('M6 6l12 12M18 6L6 18'),
      ),
    );
  }

  function render() {
    const key = JSON.stringify([app.saving.bookmarks.map((b) => b.label), app.saving.activeBookmark, app.saving.bookmarks.length]);
    if (key === renderedFor) return;
    renderedFor = key;
    list.replaceChildren(...app.saving.bookmarks.map(row));
    $('bookmarks-empty').hidden = app.saving.bookmarks.length > 0;
    $('bookmark-save').disabled = app.saving.bookmarks.length === 0;
  }

  return { render };
}

function icon(d) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', d);
  svg.append(path);
  return svg;
}
