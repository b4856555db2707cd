// The plot's mouse and wheel input: orbit, pan and zoom the camera; hover with a tooltip;
// click; box and lasso regions; and the toolbar's tool buttons. Reports through the plot's
// callbacks.

import { orbit, pan, zoom } from './camera.js';

const CLICK_SLOP = 4;

export class PlotInput {
  constructor(plot) {
    this.plot = plot;
    this.bindEvents();
    this.bindToolbar();
  }

  bindToolbar() {
    const plot = this.plot;
    for (const button of plot.container.querySelectorAll('[data-tool]')) {
      button.addEventListener('click', () => plot.setTool(button.dataset.tool));
    }
    plot.container.querySelector('[data-testid="reset-view"]').addEventListener('click', () => plot.resetView());
  }

  bindEvents() {
    const plot = this.plot;
    const canvas = plot.canvas;
    let drag = null;
    let hoverPending = null;
    canvas.addEventListener('contextmenu', (e) => e.preventDefault());
    canvas.addEventListener('pointerdown', (event) => {
      canvas.setPointerCapture(event.pointerId);
      const at = plot._local(event);
      const regionTool = plot.tool !== 'navigate' || event.shiftKey;
      const kind = plot.tool === 'lasso' ? 'lasso' : 'box';
      const panning = event.button === 2 || event.button === 1 || event.ctrlKey || event.metaKey;
      drag = { start: at, last: at, moved: false, region: regionTool && event.button === 0 ? kind : null, panning };
      if (drag.region) plot.region = { kind: drag.region, points: [at] };
      plot.tooltip.hidden = true;
    });
    canvas.addEventListener('pointermove', (event) => {
      const at = plot._local(event);
      if (drag) {
        const dx = at[0] - drag.last[0];
        const dy = at[1] - drag.last[1];
        if (Math.hypot(at[0] - drag.start[0], at[1] - drag.start[1]) > CLICK_SLOP) drag.moved = true;
        drag.last = at;
        if (drag.region) {
          if (drag.region === 'box') plot.region.points = [drag.start, at];
          else plot.region.points.push(at);
          plot.requestRender();
        } else if (drag.moved) {
          const height = canvas.clientHeight;
          const next =
            plot.threeD && !drag.panning
              ? orbit(plot.camera, dx, dy)
              : pan(plot.camera, plot.threeD, dx, dy, height, plot._aspect());
          plot._moveCamera(next);
        }
        return;
      }
      hoverPending = at;
      requestAnimationFrame(() => {
        if (!hoverPending) return;
        const [x, y] = hoverPending;
        hoverPending = null;
        const hovered = (index) => {
          this.showTooltip(index, x, y);
          if (index !== plot.hover) {
            plot.setHover(index);
            plot.callbacks.hover(index);
          }
        };
        // From the server (a projection shown from tiles): unless the pointer moved on since.
        settle(plot.pickAt(x, y), (index) => hoverPending || hovered(index));
      });
    });
    const finish = (event) => {
      if (!drag) return;
      const d = drag;
      drag = null;
      if (d.region) {
        const region = plot.region;
        plot.region = null;
        plot.requestRender();
        if (d.moved) settle(plot.pointsInRegion(region), (indices) => plot.callbacks.region(indices, event));
        else settle(plot.pickAt(...d.start), (index) => plot.callbacks.click(index, event));
      } else if (!d.moved && event.button === 0) {
        settle(plot.pickAt(...d.start), (index) => plot.callbacks.click(index, event));
      }
    };
    canvas.addEventListener('pointerup', finish);
    canvas.addEventListener('pointercancel', () => {
      drag = null;
      plot.region = null;
      plot.requestRender();
    });
    canvas.addEventListener('pointerleave', () => {
      plot.tooltip.hidden = true;
      if (plot.hover !== -1 && !drag) {
        plot.setHover(-1);
        plot.callbacks.hover(-1);
      }
    });
    canvas.addEventListener(
      'wheel',
      (event) => {
        event.preventDefault();
        const [x, y] = plot._local(event);
        const factor = Math.exp(-event.deltaY * (event.deltaMode === 1 ? 0.05 : 0.0015));
        const ndcX = (x / canvas.clientWidth) * 2 - 1;
        const ndcY = 1 - (y / canvas.clientHeight) * 2;
        plot._moveCamera(zoom(plot.camera, plot.threeD, factor, ndcX, ndcY, plot._aspect()));
      },
      { passive: false },
    );
  }

  showTooltip(index, x, y) {
    const plot = this.plot;
    const tip = plot.tooltip;
    if (index < 0) {
      tip.hidden = true;
      return;
    }
    tip.textContent = plot.callbacks.describe(index);
    tip.hidden = false;
    const maxX = plot.canvas.clientWidth - tip.offsetWidth - 8;
    tip.style.left = `${Math.min(x + 14, maxX)}px`;
    tip.style.top = `${Math.max(4, y - 30)}px`;
  }
}

/**
 * Calls `then` with `answer`, at once when it is a value, when it comes when it is a Promise
 * (the server answers for a projection shown from tiles); a failed answer changes nothing.
 */
function settle(answer, then) {
  if (answer instanceof Promise) answer.then(then, (err) => console.warn(`The server did not answer: ${err.message}`));
  else then(answer);
}
