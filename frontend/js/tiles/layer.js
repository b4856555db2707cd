// The tile layer: the points of a projection shown from its level-of-detail tiles
// (tile_points.js), each tile drawn from its own small buffers with the point layer's
// program, coarse levels first. A frame draws the tiles `view.tiles` names, or the ranges
// [tile, start, count] of `view.ranges` (frames.js picks them: a prefix while the view
// moves, all of them, in slices, once it is still). A plot layer while its tiles are shown.

export class TileLayer {
  /** @param {import('./tile_points.js').TilePoints} points */
  constructor(points) {
    this.points = points;
    /** @type {{ row: number, at: [import('./tile_points.js').Tile, number] } | null} the last row found */
    this.found = null;
  }

  // ---- layer contract ------------------------------------------------------------------

  setScene() {}

  /** The plot's own positions are none while tiles are shown. */
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

  /**
   * [tile, rank] of a resident row, or null (kept for the last row asked).
   * @param {number} row
   * @returns {[import('./tile_points.js').Tile, number] | null}
   */
  _find(row) {
    if (row < 0) return null;
    const resident = this.points.resident;
    if (this.found?.row === row && resident.get(this.found.at[0].key) === this.found.at[0]) return this.found.at;
    for (const tile of resident.values()) {
      const rank = tile.rows.indexOf(row);
      if (rank >= 0) {
        this.found = { row, at: [tile, rank] };
        return this.found.at;
      }
    }
    return null;
  }

  onResize() {}

  /** The tiles free their own buffers (TilePoints.detach). */
  dispose() {}
}
