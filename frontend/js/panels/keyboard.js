// The keyboard: Escape clears the search and the selection (from anywhere, a field
// included); outside fields, arrow keys pan the plot and + / - zoom it, as the mouse does.
// Result rows are focusable where they are drawn (inspector, charts table): Enter picks one.
// Skip links (the first Tab stops) go to the search box, the plot and the neighbours.

import { pan, zoom } from '../camera.js';

const PAN_PX = 48;
const ZOOM_STEP = 1.25;
const PAN_KEYS = { ArrowLeft: [PAN_PX, 0], ArrowRight: [-PAN_PX, 0], ArrowUp: [0, PAN_PX], ArrowDown: [0, -PAN_PX] };
const ZOOM_KEYS = { '+': ZOOM_STEP, '=': ZOOM_STEP, '-': 1 / ZOOM_STEP, _: 1 / ZOOM_STEP };

/** Whether keys typed at `target` belong to it (text, numbers, lists, sliders, tabs). */
function ownsKeys(target) {
  return target instanceof Element && (target.matches('input, select, textarea, [contenteditable], [role="tab"]') || target.closest('[role="tablist"]') !== null);
}

/** Skip links focus their target (data-skip, a test id) without touching the URL's hash,
 * which holds the view's state. */
function installSkipLinks() {
  for (const link of document.querySelectorAll('a[data-skip]')) {
    link.addEventListener('click', (event) => {
      event.preventDefault();
      const target = /** @type {HTMLElement | null} */ (document.querySelector(`[data-testid="${link.getAttribute('data-skip')}"]`));
      if (!target) return;
      if (!target.matches('input, select, textarea, button, a, [tabindex]')) target.tabIndex = -1;
      target.focus();
    });
  }
}

/** @param {import('../app.js').App} app */
export function installKeyboard(app) {
  installSkipLinks();
  document.addEventListener('keydown', (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === 'Escape') {
      const { search, selection, focus } = app.state;
      if (!search.query && !selection.length && focus === null) return;
      if (search.query) app.update({ search: { ...search, query: '' } });
      app.highlight.clearSelection();
      app.setMessage('Selection and search cleared');
      return;
    }
    if (ownsKeys(event.target) || !app.dataset) return;
    const plot = app.plot;
    let next = null;
    if (PAN_KEYS[event.key]) {
      const [dx, dy] = PAN_KEYS[event.key];
      next = pan(plot.camera, plot.threeD, dx, dy, Math.max(1, plot.canvas.clientHeight), plot._aspect());
    } else if (ZOOM_KEYS[event.key]) {
      next = zoom(plot.camera, plot.threeD, ZOOM_KEYS[event.key], 0, 0, plot._aspect());
    }
    if (!next) return;
    event.preventDefault(); // no page scroll
    plot._moveCamera(next);
  });
}
