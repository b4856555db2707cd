// The tile layer: the points of a projection shown from its level-of-detail tiles
// (tiled_projection.js), each tile drawn from its own small buffers with the point layer's
// program, coarse levels first. A frame draws the tiles `view.tiles` names, or the ranges
// [tile, start, count] of `view.ranges` (the plot picks them: a prefix while the view
// moves, all of them, in slices, once it is still).

export class TileLayer {
  constructor() {
    this.tiled = null;
  }

  // ---- layer contract ------------------------------------------------------------------

  setScene(plot) {
    this.plot = plot;
  }

  /** The plot's own positions (the whole set) replace the tiles (see Plot.setPositions). */
  onPositionsChanged() {}

  render(view) {
    if (view.pass === 'top') {
      // The hovered point over any frame (a finished still frame holds the earlier hover).
      const at = this._find(view.hover);
      if (at) at[0].layer.drawRange({ ...view, start: at[1], count: 1, elements: null }, null);
      return;
    }
    if (view.pass !== 'base') return;
    const ranges = view.ranges ?? view.tiles?.map((tile) => [tile, 0, tile.count]) ?? [];
    for (const [tile, start, count] of ranges) tile.layer.drawRange({ ...view, start, count, elements: null }, null);
  }

  /** [tile, rank] of a resident row, or null (kept for the last row asked). */
  _find(row) {
    if (!this.tiled || row < 0) return null;
    if (this.found?.row === row && this.found.tiled === this.tiled && this.tiled.resident.get(this.found.at[0].key) === this.found.at[0]) return this.found.at;
    let at = null;
    for (const tile of this.tiled.resident.values()) {
      const rank = tile.rows.indexOf(row);
      if (rank >= 0) {
        at = [tile, rank];
        break;
      }
    }
    if (at) this.found = { row, tiled: this.tiled, at };
    return at;
  }

  onResize() {}

  dispose() {
    this.tiled?.close();
  }
}
