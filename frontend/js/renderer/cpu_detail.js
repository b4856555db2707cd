// The still full-detail frame of a large 2D plot, rasterised on the CPU. Software WebGL
// (SwiftShader, what a machine without a GPU has) spends about a microsecond on each point
// primitive however simple its shaders, so ten million points took tens of seconds; a disc
// of a few pixels costs JavaScript a few tens of nanoseconds. The discs are drawn as the
// point shader draws them (size, colour, the selection's dimming and colours, the antialiased
// edge, source-over blending in draw order), highlighted points after the others as their
// nearer depth puts them in 2D; the finished image goes to the canvas in one texture blit.
// 3D, thumbnails and transitions keep the GPU path (points/array_points.js).

import { presentFramebuffer } from './detail.js';
import { FLAG_FOCUS, FLAG_HIDDEN, FLAG_NEIGHBOR, FLAG_SELECTED } from './points.js';

/** Points rasterised in the first animation frame of a still view (about 40 ms of JavaScript
 * on an idle core, twice that on a busy one: a first visit shares the cores with the server);
 * later frames aim at a time (points/array_points.js). */
export const CPU_SLICE = 150000;

export class CpuDetail {
  constructor(gl) {
    this.gl = gl;
    this.texture = gl.createTexture();
    this.framebuffer = gl.createFramebuffer();
    this.pixels = null;
    this.width = 0;
    this.height = 0;
  }

  /** Whether the still frame of this view can be drawn here (2D discs, no transition). */
  suits(plot, view) {
    return !view.threeD && !(view.sprites && view.spriteAtlas) && view.t >= 1 && !plot.points.hidden &&
      plot.points.colors?.length === plot.n * 4 && plot.flags.length === plot.n;
  }

  /** Starts a frame of the canvas's size, filled with the background. */
  begin(plot, view) {
    const width = plot.canvas.width;
    const height = plot.canvas.height;
    if (width !== this.width || height !== this.height) {
      this.pixels = new Uint8ClampedArray(width * height * 4);
      this.width = width;
      this.height = height;
    }
    const [r, g, b] = view.background;
    const words = new Uint32Array(this.pixels.buffer);
    words.fill(new Uint32Array(new Uint8ClampedArray([r * 255, g * 255, b * 255, 255]).buffer)[0]);
    this.highlighted = [];
  }

  /**
   * Draws ranks [start, end) of the draw order, or of `ranks` (a list of draw-order ranks:
   * the points on screen); highlighted points wait for finish().
   */
  draw(plot, view, ranks, start, end) {
    const { order, flags } = plot;
    for (let k = start; k < end; k++) {
      const r = ranks ? ranks[k] : k;
      const i = order ? order[r] : r;
      const f = flags[i];
      if (f & FLAG_HIDDEN) continue;
      if (f & (FLAG_SELECTED | FLAG_NEIGHBOR | FLAG_FOCUS)) this.highlighted.push(i);
      else this._disc(plot, view, i, f);
    }
  }

  /** Draws the highlighted points over the rest and uploads the frame. */
  finish(plot, view) {
    for (const i of this.highlighted) this._disc(plot, view, i, plot.flags[i]);
    this.highlighted = [];
    const gl = this.gl;
    gl.bindTexture(gl.TEXTURE_2D, this.texture);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA8, this.width, this.height, 0, gl.RGBA, gl.UNSIGNED_BYTE, this.pixels);
    gl.bindFramebuffer(gl.FRAMEBUFFER, this.framebuffer);
    gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, this.texture, 0);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
  }

  /** Copies the finished frame onto the canvas. */
  present() {
    presentFramebuffer(this.gl, this.framebuffer, this.width, this.height);
  }

  /** One point as the point shader draws it in 2D (sampleSize 1). */
  _disc(plot, view, i, f) {
    const p = plot.positions;
    const m = view.matrix;
    const { width, height, pixels } = this;
    // Window coordinates (pixels from the bottom left), as GL rasterises.
    const cx = (m[0] * p[i * 3] + m[4] * p[i * 3 + 1] + m[12] + 1) * 0.5 * width;
    const cy = (m[1] * p[i * 3] + m[5] * p[i * 3 + 1] + m[13] + 1) * 0.5 * height;
    const sel = (f & FLAG_SELECTED) !== 0;
    const nb = (f & FLAG_NEIGHBOR) !== 0;
    let size = view.size * view.scale;
    if (sel || nb) size *= 1.4;
    if (f & FLAG_FOCUS) size *= 1.5;
    size = Math.min(160, Math.max(1.5, size));
    const half = size / 2;
    const x0 = Math.max(0, Math.ceil(cx - half - 0.5));
    const x1 = Math.min(width - 1, Math.floor(cx + half - 0.5));
    const y0 = Math.max(0, Math.ceil(cy - half - 0.5));
    const y1 = Math.min(height - 1, Math.floor(cy + half - 0.5));
    if (x0 > x1 || y0 > y1) return;
    const colors = plot.points.colors;
    let red = colors[i * 4];
    let green = colors[i * 4 + 1];
    let blue = colors[i * 4 + 2];
    let alpha = colors[i * 4 + 3] / 255;
    if (view.hasSelection && !(sel || nb)) {
      [red, green, blue] = [view.dim[0] * 255, view.dim[1] * 255, view.dim[2] * 255];
      alpha = view.dim[3];
    } else if (view.plain && (sel || nb)) {
      const s = view.selectedColor;
      const w = sel ? 0 : 0.25 + (0.6 * (f >> 4)) / 15;
      red = s[0] * 255 * (1 - w) + red * w;
      green = s[1] * 255 * (1 - w) + green * w;
      blue = s[2] * 255 * (1 - w) + blue * w;
      alpha = 1;
    }
    const ring = (sel || f & FLAG_FOCUS) && size > 5 ? 1 - 3 / size : 2;
    const edge = size * 0.5;
    for (let y = y0; y <= y1; y++) {
      const dy = ((y + 0.5 - cy) / size) * 2;
      let at = (y * width + x0) * 4;
      for (let x = x0; x <= x1; x++, at += 4) {
        const dx = ((x + 0.5 - cx) / size) * 2;
        const r = Math.sqrt(dx * dx + dy * dy);
        if (r > 1) continue;
        const a = alpha * Math.min(1, (1 - r) * edge);
        const k = r > ring ? 0.55 : 1;
        pixels[at] = red * k * a + pixels[at] * (1 - a);
        pixels[at + 1] = green * k * a + pixels[at + 1] * (1 - a);
        pixels[at + 2] = blue * k * a + pixels[at + 2] * (1 - a);
      }
    }
  }

  dispose() {
    this.gl.deleteTexture(this.texture);
    this.gl.deleteFramebuffer(this.framebuffer);
    this.pixels = null;
  }
}
