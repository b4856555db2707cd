// The page's layout on small screens: every titled panel folds to its title (a button with
// aria-expanded), each side column hides behind a toolbar-like switch in the top bar, and
// below NARROW_PX the right column starts hidden so the plot keeps most of the width.
// Choices are remembered for the session (sessionStorage) where storage is allowed.

import { el } from '../dom.js';

const NARROW_PX = 900;
const STORE = 'projector-layout';

function load() {
  try {
    return JSON.parse(sessionStorage.getItem(STORE) || '{}');
  } catch {
    return {};
  }
}

function save(state) {
  try {
    sessionStorage.setItem(STORE, JSON.stringify(state));
  } catch {
    // storage refused (another site's iframe): the layout is not remembered
  }
}

/** A window with a divider at `x`: the column the button shows or hides. */
function columnIcon(x) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  const frame = document.createElementNS(ns, 'rect');
  for (const [k, v] of Object.entries({ x: 3.5, y: 5, width: 17, height: 14, rx: 1.5 })) frame.setAttribute(k, String(v));
  const divider = document.createElementNS(ns, 'path');
  divider.setAttribute('d', `M${x} 5v14`);
  svg.append(frame, divider);
  return svg;
}

/** Folds a panel to its title row; the title's button says whether it is open. */
function makeFoldable(panel, folded, remember) {
  const title = panel.querySelector(':scope > .panel-title, :scope > .panel-title-row > .panel-title');
  if (!title || title.querySelector('.fold-button')) return;
  const name = panel.getAttribute('aria-label') || title.textContent.trim();
  const button = el('button', { type: 'button', class: 'fold-button', 'aria-expanded': 'true', 'data-testid': 'fold-panel', title: `Fold or unfold ${name}` }, title.textContent);
  title.replaceChildren(button);
  const set = (fold) => {
    panel.classList.toggle('folded', fold);
    button.setAttribute('aria-expanded', String(!fold));
  };
  button.addEventListener('click', () => {
    const fold = !panel.classList.contains('folded');
    set(fold);
    remember(name, fold);
  });
  if (folded[name]) set(true);
}

export function installLayout() {
  const layout = document.querySelector('.layout');
  const actions = document.querySelector('.topbar-actions');
  if (!layout || !actions) return;
  const state = load();
  state.folded ??= {};
  const remember = (name, fold) => {
    state.folded[name] = fold;
    save(state);
  };
  const foldAll = () => {
    for (const panel of layout.querySelectorAll('.panel')) makeFoldable(panel, state.folded, remember);
  };
  foldAll();
  // Panels added later (structure, charts) fold too.
  new MutationObserver(foldAll).observe(layout, { childList: true, subtree: true });

  const sides = { left: 'Data and projections', right: 'Inspector, charts and bookmarks' };
  const switches = {};
  const show = (side, visible) => {
    layout.classList.toggle(`hide-${side}`, !visible);
    switches[side].setAttribute('aria-pressed', String(visible));
  };
  for (const side of ['left', 'right']) {
    const button = el('button', {
      type: 'button', class: `icon-button column-switch column-switch-${side}`, 'data-testid': `toggle-${side}-column`,
      'aria-pressed': 'true', title: `Show or hide the ${side} column (${sides[side]})`, 'aria-label': `${side === 'left' ? 'Left' : 'Right'} column`,
    });
    button.append(columnIcon(side === 'left' ? 9 : 15));
    button.addEventListener('click', () => {
      const visible = layout.classList.contains(`hide-${side}`);
      show(side, visible);
      state[side] = visible;
      save(state);
    });
    switches[side] = button;
  }
  actions.prepend(switches.left, switches.right);
  show('left', state.left ?? true);
  show('right', state.right ?? window.innerWidth >= NARROW_PX);
}
