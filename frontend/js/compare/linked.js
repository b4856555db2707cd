// Two plots of the same points, A and B, that follow each other: hovering, selecting or
// moving the 2-D camera in one does the same in the other, and both colour each point by
// how much its neighbourhood changed. Both layouts are fitted with one shared box, so a
// point that did not move between the (aligned) layouts sits at the same place in both.

import { gradientColor, MISSING_COLOR } from '../colors.js';
import { fitPositions } from '../geometry.js';
import { Plot, defaultPointSize } from '../plot.js';
import { FLAG_FOCUS, FLAG_SELECTED } from '../renderer/points.js';
import { readTheme } from '../theme.js';

/** Positions of both layouts (first two columns) in one box: n x 3 each, z = 0. */
export function fitTogether(a, colsA, b, colsB, n) {
  const both = new Float32Array(2 * n * 2);
  for (let i = 0; i < n; i++) {
    both[i * 2] = a[i * colsA];
    both[i * 2 + 1] = a[i * colsA + 1];
    both[(n + i) * 2] = b[i * colsB];
    both[(n + i) * 2 + 1] = b[i * colsB + 1];
  }
  const { positions } = fitPositions(both, 2 * n, 2, [0, 1]);
  return [positions.slice(0, n * 3), positions.slice(n * 3)];
}

/** Where the change scale starts: the gradient's darkest end is lost on a dark plot. */
export function changeFloor(dark) {
  return dark ? 0.4 : 0;
}

/** CSS of the change legend's bar: the part of the gradient the points use. */
export function changeGradientCss(dark) {
  const floor = changeFloor(dark);
  const stops = Array.from({ length: 9 }, (_, k) => {
    const rgb = gradientColor(floor + ((1 - floor) * k) / 8);
    return `rgb(${rgb.join(',')}) ${(k / 8) * 100}%`;
  });
  return `linear-gradient(to right, ${stops.join(', ')})`;
}

/** RGBA per point: the overlap (1 = same neighbours) on the gradient from calm to changed. */
export function changeColors(perPoint, dark = false) {
  const colors = new Uint8Array(perPoint.length * 4);
  const floor = changeFloor(dark);
  perPoint.forEach((overlap, i) => {
    const rgb = overlap === null ? MISSING_COLOR : gradientColor(floor + (1 - floor) * (1 - overlap));
    colors.set([rgb[0], rgb[1], rgb[2], 255], i * 4);
  });
  return colors;
}

export class LinkedPlots {
  /** `describe(i)` -> tooltip text; `onHover(i)` and `onSelect(indices)` report to the page. */
  constructor(containerA, containerB, { describe, onHover, onSelect }) {
    this.onHover = onHover;
    this.onSelect = onSelect;
    this.selection = [];
    this.n = 0;
    const callbacks = (self) => ({
      hover: (i) => this.hover(i),
      click: (i, event) => this.select(i < 0 ? [] : event?.shiftKey ? [...this.selection, i] : [i]),
      region: (indices) => this.select(indices),
      camera: (camera) => this._other(self()).setCamera(camera),
      describe,
    });
    this.a = new Plot(containerA, callbacks(() => this.a));
    this.b = new Plot(containerB, callbacks(() => this.b));
    const theme = readTheme();
    for (const plot of this.plots()) {
      plot.setTheme(theme);
      plot.setMode(false);
    }
  }

  plots() {
    return [this.a, this.b];
  }

  _other(plot) {
    return plot === this.a ? this.b : this.a;
  }

  /** New layouts for A and B (row-major coordinates); `animate` glides from the current ones. */
  setLayouts(a, colsA, b, colsB, n, { animate = false } = {}) {
    const keep = animate && n === this.n;
    const [pa, pb] = fitTogether(a, colsA, b, colsB, n);
    if (!keep) this.selection = this.selection.filter((i) => i < n);
    this.n = n;
    for (const plot of this.plots()) plot.setPointSize(defaultPointSize(n));
    this.a.setPositions(pa, { animate: keep });
    this.b.setPositions(pb, { animate: keep });
    this._flags();
  }

  setChange(perPoint) {
    this.perPoint = perPoint;
    const colors = changeColors(perPoint, document.documentElement.dataset.theme === 'dark');
    for (const plot of this.plots()) plot.setColors(colors, { plain: false });
  }

  /** After a theme switch: the plots' colours, and the change colours for that theme. */
  themeChanged() {
    const theme = readTheme();
    for (const plot of this.plots()) plot.setTheme(theme);
    if (this.perPoint) this.setChange(this.perPoint);
  }

  hover(index) {
    for (const plot of this.plots()) plot.setHover(index);
    this.onHover(index);
  }

  select(indices) {
    this.selection = [...new Set(indices)].filter((i) => i >= 0 && i < this.n);
    this._flags();
    this.onSelect(this.selection);
  }

  _flags() {
    const flags = new Uint8Array(this.n);
    for (const i of this.selection) flags[i] = FLAG_SELECTED;
    if (this.selection.length === 1) flags[this.selection[0]] |= FLAG_FOCUS;
    for (const plot of this.plots()) plot.setFlags(flags, this.selection.length > 0);
  }
}
