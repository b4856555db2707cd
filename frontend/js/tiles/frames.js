// How the plot draws a projection shown from tiles (methods of Plot; tiled_projection.js
// decides which tiles and holds them): while the view moves, the coarse tiles that fit the
// frame budget, drawn a little larger; once it is still, every tile the view needs, built
// off screen a few tiles per animation frame and shown in one copy (as plot_frames.js does
// the whole set), so no frame holds the main thread for long.

import { sampleSize } from '../renderer/lod.js';
import { uniformTileColoring } from './coloring.js';

/**
 * Points of one slice of a still frame: from, to (it adapts to how fast the GPU draws). The
 * most is what software GL draws well inside a frame's long-task bound: without a GPU the
 * compositor reads the canvas back (ReadPixels) at each commit and waits for every command
 * sent before it, so a slice of 262,144 points held the main thread 200-300 ms at 10M.
 */
const SLICE_POINTS = [8192, 65536];
/** A still frame of at most this many points (and the frame budget) is drawn on the canvas
 * at once; a bigger one is built off screen in slices. */
const STILL_AT_ONCE = 65536;

export class PlotTiles {
  /** Shows `tiled` (a TiledProjection) in place of the plot's positions; null: none. */
  setTiles(tiled) {
    if (this.tiles === tiled) return;
    this.tiles?.close();
    this.tiles = tiled;
    this.tileLayer.tiled = tiled;
    if (tiled) {
      tiled.attach(this.gl, () => this._tilesArrived());
      this.n = 0;
      this.positions = new Float32Array(0);
      this.fromPositions = null;
      this.order = null;
      this.rank = null;
      for (const layer of this.layers) layer.onPositionsChanged(this.positions, this.positions, null);
      tiled.setColoring(this.tileColoring ?? uniformTileColoring().tile);
      tiled.setMarks(this.tileMarks);
    }
    this._changed({ moving: false }); // the camera stays: straight to the still frame
  }

  /** How the tiles are coloured (tile_coloring.js TileColors), now and for tiles to come. */
  setTileColoring(coloring, { plain }) {
    this.plain = plain;
    this.tileColoring = coloring;
    this.tiles?.setColoring(coloring);
    this._changed({ moving: false });
  }

  /** The page's flags over tiles as rules (tile_paint.js TileMarks); no whole-set array. */
  setTileMarks(marks, hasSelection) {
    this.tileMarks = marks;
    this.hasSelection = hasSelection;
    this.tiles?.setMarks(marks);
    this._changed({ moving: false });
  }

  /**
   * A tile came or left: the still frame starts over off screen while the canvas keeps what
   * it shows (redrawing it would make the page wait for the GPU), unless it shows nothing.
   */
  _tilesArrived() {
    this.detailed = { offset: 0, complete: false };
    if (!this.drawn) this.presentPending = true;
    this._schedule();
  }

  /** A frame of the tiles (see the file's comment); returns how many points it drew. */
  _drawTiled(view, moving, start) {
    const gl = this.gl;
    const tiles = this.tiles.view(view.matrix);
    if (tiles.length) this.preview.clear(); // the first picture stays until a tile replaces it
    const meeting = Math.max(1, this.tiles.pointsMeeting(view.matrix));
    if (moving) {
      // Coarse tiles while they fit the frame budget, then the head of the next: a tile's
      // points are in level-of-detail order, so a head of the root is an even sample too
      // (a busy software GL draws fewer points a frame than one tile holds).
      const ranges = [];
      let count = 0;
      for (const tile of tiles) {
        const take = Math.min(tile.count, this.budget - count);
        if (take <= 0) break;
        ranges.push([tile, 0, take]);
        count += take;
      }
      this._tilesOnCanvas(view, null, count, meeting, ranges);
      if (count >= this.budget * 0.5) this._adaptBudget(start, count);
      this.detailed = { offset: 0, complete: false };
      setTimeout(() => this._schedule(), 180);
      return count;
    }
    const total = tiles.reduce((sum, t) => sum + t.count, 0);
    const d = this.detailed;
    const key = tiles.map((t) => t.key).join();
    if (d.tiles !== key) Object.assign(d, { offset: 0, start: 0, complete: false, tiles: key });
    if (total <= Math.min(this.budget, STILL_AT_ONCE)) {
      d.complete = true;
      return this._tilesOnCanvas(view, tiles, total, meeting);
    }
    // The GPU finishes a slice before the next is sent: software GL queues work behind the
    // page, and the compositor's read of the canvas would wait for all of it at once.
    if (this.tileFence) {
      if (gl.getSyncParameter(this.tileFence, gl.SYNC_STATUS) !== gl.SIGNALED) {
        this.tileWaits++;
        this._schedule();
        return this.drawn;
      }
      gl.deleteSync(this.tileFence);
      this.tileFence = null;
      // Slices grow while the GPU keeps up within a frame, shrink when it falls behind.
      if (this.tileWaits === 0) this.tileStep = Math.min(SLICE_POINTS[1], this.tileStep * 2);
      else if (this.tileWaits > 2) this.tileStep = Math.max(SLICE_POINTS[0], this.tileStep / 2);
    }
    if (!d.complete) {
      this.tileStep ??= SLICE_POINTS[0];
      // No slice past what a moving frame draws in its time: a slice grown on a quiet GPU
      // would hold the next drag's frames behind it.
      const step = Math.max(SLICE_POINTS[0], Math.min(this.tileStep, this.budget));
      this.detail.bind(this.canvas.width, this.canvas.height);
      if (d.offset === 0 && d.start === 0) this._clear();
      const ranges = [];
      let count = 0;
      while (d.offset < tiles.length && count < step) {
        const tile = tiles[d.offset];
        const take = Math.min(tile.count - d.start, step - count);
        ranges.push([tile, d.start, take]);
        count += take;
        d.start += take;
        if (d.start >= tile.count) {
          d.offset++;
          d.start = 0;
        }
      }
      this._renderLayers({ ...view, tiles: null, ranges, sampleSize: sampleSize(total / meeting) }, 'base');
      gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      this.tileFence = gl.fenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0);
      gl.flush();
      this.tileWaits = 0;
      d.complete = d.offset >= tiles.length;
      this._schedule();
      if (!this.presentPending || d.complete) return this.drawn;
      return this._tilesOnCanvas(view, tiles.slice(0, 1), tiles[0].count, meeting);
    }
    if (!this.presentPending && d.presented) return this.drawn;
    d.presented = true;
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    this._clear();
    this.detail.present();
    this._renderLayers({ ...view, sampled: true }, 'top');
    this.drawn = total;
    return total;
  }

  _tilesOnCanvas(view, tiles, count, meeting, ranges = null) {
    const gl = this.gl;
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    this._clear();
    this._renderLayers({ ...view, tiles, ranges, sampleSize: sampleSize(count / meeting) }, 'base');
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
