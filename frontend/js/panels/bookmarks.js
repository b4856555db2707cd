// Bookmarks panel: the tray of saved states (load by click, rename, delete), add, save all
// to a file, load a file (TensorBoard's format).

import { $, el } from '../dom.js';

export function createBookmarksPanel(app) {
  const list = $('bookmarks-list');
  const error = $('bookmark-error');
  let renderedFor = null;

  $('bookmark-add').addEventListener('click', () => app.addBookmark());
  $('bookmark-save').addEventListener('click', () => app.saveBookmarks());
  $('bookmark-load').addEventListener('change', async (event) => {
    const file = event.target.files[0];
    event.target.value = '';
    if (!file) return;
    error.hidden = true;
    try {
      await app.loadBookmarkFile(file);
    } catch (err) {
      error.textContent = err.message;
      error.hidden = false;
    }
  });

  function row(bookmark, index) {
    const active = index === app.activeBookmark;
    return el(
      'li',
      { class: active ? 'active' : null, dataset: { testid: 'bookmark-item' } },
      el('input', {
        type: 'radio',
        name: 'bookmark',
        checked: active,
        'aria-label': `Load ${bookmark.label}`,
        onchange: () => app.loadBookmark(index),
      }),
      el('input', {
        class: 'bookmark-name',
        value: bookmark.label,
        'aria-label': 'Bookmark name',
        onchange: (e) => {
          bookmark.label = e.target.value;
        },
        onkeydown: (e) => {
          if (e.key === 'Enter') e.target.blur();
        },
      }),
      el(
        'button',
        {
          type: 'button',
          class: 'icon-button',
          title: 'Delete',
          'aria-label': `Delete ${bookmark.label}`,
          onclick: () => {
            app.bookmarks.splice(index, 1);
            if (app.activeBookmark === index) app.activeBookmark = -1;
            else if (app.activeBookmark > index) app.activeBookmark--;
            app.render();
          },
        },
        deleteIcon(),
      ),
    );
  }

  function render() {
    const key = JSON.stringify([app.bookmarks.map((b) => b.label), app.activeBookmark, app.bookmarks.length]);
    if (key === renderedFor) return;
    renderedFor = key;
    list.replaceChildren(...app.bookmarks.map(row));
    $('bookmarks-empty').hidden = app.bookmarks.length > 0;
    $('bookmark-save').disabled = app.bookmarks.length === 0;
  }

  return { render };
}

function deleteIcon() {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', 'M6 6l12 12M18 6L6 18');
  svg.append(path);
  return svg;
}
