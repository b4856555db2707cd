// Hooks the structure features into the app with one call: the overlay, a layer of the plot,
// the Structure panel (left column), the Charts panel (right column), the inspector's quality
// line, and their style sheet. Uses only the app's public members.

import { createChartsPanel } from './charts.js';
import { StructureOverlay } from './overlay.js';
import { createStructurePanel } from './panel.js';

/** @param {import('../app.js').App} app */
export function installStructure(app) {
  const sheet = document.createElement('link');
  sheet.rel = 'stylesheet';
  sheet.href = new URL('../../css/structure.css', import.meta.url).href;
  document.head.append(sheet);
  const overlay = new StructureOverlay();
  app.plot.addLayer(overlay);
  const structure = createStructurePanel(app, overlay);
  const charts = createChartsPanel(app);
  const left = document.querySelector('.column-left');
  const right = document.querySelector('.column-right');
  left?.append(structure.element);
  const inspector = right?.querySelector('[data-testid="inspector-panel"]');
  if (inspector) {
    inspector.after(charts.element);
    inspector.querySelector('[data-testid="point-card"]')?.after(structure.pointQuality);
  } else {
    right?.append(charts.element);
  }
  app.panels.push(structure, charts);
  new ResizeObserver(() => charts.resized()).observe(charts.element);
  /** For tests and bench/: the overlay (density timing, drawn cluster labels). */
  /** @type {any} */ (window).__structure = { overlay, charts, structure };
  return { overlay, structure, charts };
}
