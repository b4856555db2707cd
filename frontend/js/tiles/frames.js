// How the plot draws a projection shown from tiles (TilePoints.drawFrame; tile_points.js
// decides which tiles and holds them): while the view moves, the coarse tiles that fit the
// frame budget, drawn a little larger; once it is still, every tile the view needs, built
// off screen a few tiles per animation frame and shown in one copy (as plot_frames.js does
// the whole set), so no frame holds the main thread for long.

import { sampleSize } from '../renderer/lod.js';

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

/**
 * A frame of the tiles (see the file's comment); returns how many points it drew.
 * @param {import('./tile_points.js').TilePoints} points
 * @param {import('../plot.js').Plot} plot
 * @param {any} view
 * @param {boolean} moving
 * @param {number} start
 */
export function drawTiles(points, plot, view, moving, start) {
  const gl = plot.gl;
  const slicing = points.slicing;
  const tiles = points.view(view.matrix);
  if (tiles.length) plot.preview.clear(); // the first picture stays until a tile replaces it
  const meeting = Math.max(1, points.pointsMeeting(view.matrix));
  if (moving) {
    // Coarse tiles while they fit the frame budget, then the head of the next: a tile's
    // points are in level-of-detail order, so a head of the root is an even sample too
    // (a busy software GL draws fewer points a frame than one tile holds).
    const ranges = [];
    let count = 0;
    for (const tile of tiles) {
      const take = Math.min(tile.count, plot.frames.budget - count);
      if (take <= 0) break;
      ranges.push([tile, 0, take]);
      count += take;
    }
    tilesOnCanvas(plot, view, null, count, meeting, ranges);
    if (count >= plot.frames.budget * 0.5) plot.frames.adaptBudget(start, count);
    plot.detailed = { offset: 0, complete: false };
    plot.frames.scheduleStill();
    return count;
  }
  const total = tiles.reduce((sum, t) => sum + t.count, 0);
  const d = plot.detailed;
  const key = tiles.map((t) => t.key).join();
  if (d.tiles !== key) Object.assign(d, { offset: 0, start: 0, complete: false, tiles: key });
  if (total <= Math.min(plot.frames.budget, STILL_AT_ONCE)) {
    d.complete = true;
    return tilesOnCanvas(plot, view, tiles, total, meeting);
  }
  // The GPU finishes a slice before the next is sent: software GL queues work behind the
  // page, and the compositor's read of the canvas would wait for all of it at once.
  if (slicing.fence) {
    if (gl.getSyncParameter(slicing.fence, gl.SYNC_STATUS) !== gl.SIGNALED) {
      slicing.waits++;
      plot.frames.schedule();
      return plot.drawn;
    }
    gl.deleteSync(slicing.fence);
    slicing.fence = null;
    // Slices grow while the GPU keeps up within a frame, shrink when it falls behind.
    if (slicing.waits === 0) slicing.step = Math.min(SLICE_POINTS[1], slicing.step * 2);
    else if (slicing.waits > 2) slicing.step = Math.max(SLICE_POINTS[0], slicing.step / 2);
  }
  if (!d.complete) {
    if (!slicing.step) slicing.step = SLICE_POINTS[0];
    // No slice past what a moving frame draws in its time: a slice grown on a quiet GPU
    // would hold the next drag's frames behind it.
    const step = Math.max(SLICE_POINTS[0], Math.min(slicing.step, plot.frames.budget));
    plot.detail.bind(plot.canvas.width, plot.canvas.height);
    if (d.offset === 0 && d.start === 0) plot.frames.clear();
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
    plot.frames.renderLayers({ ...view, tiles: null, ranges, sampleSize: sampleSize(total / meeting) }, 'base');
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    slicing.fence = gl.fenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0);
    gl.flush();
    slicing.waits = 0;
    d.complete = d.offset >= tiles.length;
    plot.frames.schedule();
    if (!plot.presentPending || d.complete) return plot.drawn;
    return tilesOnCanvas(plot, view, tiles.slice(0, 1), tiles[0].count, meeting);
  }
  if (!plot.presentPending && d.presented) return plot.drawn;
  d.presented = true;
  gl.viewport(0, 0, plot.canvas.width, plot.canvas.height);
  plot.frames.clear();
  plot.detail.present();
  plot.frames.renderLayers({ ...view, sampled: true }, 'top');
  plot.drawn = total;
  return total;
}

function tilesOnCanvas(plot, view, tiles, count, meeting, ranges = null) {
  const gl = plot.gl;
  gl.bindFramebuffer(gl.FRAMEBUFFER, null);
  gl.viewport(0, 0, plot.canvas.width, plot.canvas.height);
  plot.frames.clear();
  plot.frames.renderLayers({ ...view, tiles, ranges, sampleSize: sampleSize(count / meeting) }, 'base');
  plot.frames.renderLayers({ ...view, sampled: count < meeting }, 'top');
  plot.drawn = count;
  return count;
}
