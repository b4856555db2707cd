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
    if (view.pass !== 'base') return;
    const ranges = view.ranges ?? view.tiles?.map((tile) => [tile, 0, tile.count]) ?? [];
    for (const [tile, start, count] of ranges) tile.layer.drawRange({ ...view, start, count, elements: null }, null);
  }

  onResize() {}

  dispose() {
    this.tiled?.close();
  }
}
