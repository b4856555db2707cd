// DOM helpers. Every string that comes from data is set with textContent (or as an
// attribute value), never parsed as HTML.

/** The element with a data-testid (or a CSS selector when it starts with a dot/#). */
export function $(id, root = document) {
  const selector = /^[.#[]/.test(id) ? id : `[data-testid="${id}"]`;
  const found = root.querySelector(selector);
  if (!found) throw new Error(`missing element ${selector}`);
  return found;
}

/** A new element: el('li', { class: 'row', title: t, dataset: {...} }, 'text', child). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key === 'style') Object.assign(node.style, value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Replaces a select's options ([{ value, label }]) only when they changed; keeps `value`. */
export function setOptions(select, options, value) {
  const key = JSON.stringify(options);
  if (select.dataset.options !== key) {
    select.replaceChildren(...options.map((o) => el('option', { value: o.value }, o.label)));
    select.dataset.options = key;
  }
  const wanted = value === null || value === undefined ? '' : String(value);
  if (select.value !== wanted) select.value = wanted;
  // A long choice is cut in the closed list: its whole text shows on hover.
  select.title = select.selectedOptions[0]?.textContent ?? '';
}

/** Saves text or bytes as a file through a temporary link. */
export function download(filename, content, type = 'text/plain') {
  const blob = content instanceof Blob ? content : new Blob([content], { type });
  const url = URL.createObjectURL(blob);
  const link = el('a', { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Calls fn once, `ms` after the last of a burst of calls. */
export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

/** "1,234,567" */
export function formatCount(n) {
  return Number(n).toLocaleString('en-US');
}

/**
 * A 2-D canvas sized to `width` x `height` CSS pixels at the screen's pixel ratio (resized
 * only when that changed), its context scaled to CSS pixels and cleared: what every overlay
 * and chart draws on.
 * @param {HTMLCanvasElement} canvas
 * @param {number} width
 * @param {number} height
 * @returns {CanvasRenderingContext2D}
 */
export function clearedCanvas(canvas, width, height) {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(width * dpr));
  const h = Math.max(1, Math.round(height * dpr));
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
  }
  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return ctx;
}
