// How the plot draws a projection shown from tiles (methods of Plot; tiled_projection.js
// decides which tiles and holds them): while the view moves, the coarse tiles that fit the
// frame budget, drawn a little larger; once it is still, every tile the view needs, built
// off screen a few tiles per animation frame and shown in one copy (as plot_frames.js does
// the whole set), so no frame holds the main thread for long.

import { sampleSize } from './renderer/lod.js';

export class PlotTiles {
  /** Shows `tiled` (a TiledProjection) in place of the plot's positions; null: none. */
  setTiles(tiled) {
    if (this.tiles === tiled) return;
    this.tiles?.close();
    this.tiles = tiled;
    this.tileLayer.tiled = tiled;
    if (tiled) {
      tiled.attach(this.gl, () => this._changed({ moving: false }));
      this.n = 0;
      this.positions = new Float32Array(0);
      this.fromPositions = null;
      this.order = null;
      this.rank = null;
      for (const layer of this.layers) layer.onPositionsChanged(this.positions, this.positions, null);
      tiled.setColors(this.points.colors);
      tiled.setFlags(this.flags);
    }
    this._changed();
  }

  /** A frame of the tiles (see the file's comment); returns how many points it drew. */
  _drawTiled(view, moving, start) {
    const gl = this.gl;
    const tiles = this.tiles.view(view.matrix);
    if (tiles.length) this.preview.clear(); // the first picture stays until a tile replaces it
    const meeting = Math.max(1, this.tiles.pointsMeeting(view.matrix));
    if (moving) {
      const prefix = [];
      let count = 0;
      for (const tile of tiles) {
        if (prefix.length && count + tile.count > this.budget) break;
        prefix.push(tile);
        count += tile.count;
      }
      this._tilesOnCanvas(view, prefix, count, meeting);
      if (count >= this.budget * 0.5) this._adaptBudget(start, count);
      this.detailed = { offset: 0, complete: false };
      setTimeout(() => this._schedule(), 180);
      return count;
    }
    const total = tiles.reduce((sum, t) => sum + t.count, 0);
    const d = this.detailed;
    if (d.tiles !== tiles.map((t) => t.key).join()) {
      Object.assign(d, { offset: 0, complete: false, tiles: tiles.map((t) => t.key).join() });
    }
    if (total <= this.budget * 2) {
      d.complete = true;
      return this._tilesOnCanvas(view, tiles, total, meeting);
    }
    if (!d.complete) {
      // A slice: the next tiles up to twice a moving frame's points, off screen.
      this.detail.bind(this.canvas.width, this.canvas.height);
      if (d.offset === 0) this._clear();
      const slice = [];
      let count = 0;
      while (d.offset < tiles.length && (!slice.length || count + tiles[d.offset].count <= this.budget * 2)) {
        slice.push(tiles[d.offset]);
        count += tiles[d.offset].count;
        d.offset++;
      }
      this._renderLayers({ ...view, tiles: slice, sampleSize: sampleSize(total / meeting) }, 'base');
      gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      d.complete = d.offset >= tiles.length;
      if (!d.complete) {
        this._schedule();
        if (!this.presentPending) return this.drawn;
        const prefix = tiles.slice(0, 1);
        return this._tilesOnCanvas(view, prefix, prefix[0].count, meeting);
      }
      this.presentPending = true;
    }
    if (!this.presentPending) return this.drawn;
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    this._clear();
    this.detail.present();
    this._renderLayers({ ...view, sampled: true }, 'top');
    this.drawn = total;
    return total;
  }

  _tilesOnCanvas(view, tiles, count, meeting) {
    const gl = this.gl;
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    this._clear();
    this._renderLayers({ ...view, tiles, sampleSize: sampleSize(count / meeting) }, 'base');
    this._renderLayers({ ...view, sampled: count < meeting }, 'top');
    this.drawn = count;
    return count;
  }

  /** The row under CSS pixel (x, y), or -1; a Promise when the server answers. */
  _pickTiled(x, y, radius) {
    return this.tiles.pick(this.matrix(), this.canvas.clientWidth, this.canvas.clientHeight, x, y, radius);
  }

  /** Rows inside a region (CSS pixels); a Promise when the server answers. */
  _regionTiled(region) {
    return this.tiles.region(this.matrix(), this.canvas.clientWidth, this.canvas.clientHeight, region);
  }
}
