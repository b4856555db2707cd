// GPU picking: the points are drawn once into an offscreen buffer with their id as colour;
// a mouse move then reads a few pixels back instead of scanning the points. The buffer is
// redrawn only when the view or the points changed since the last read.

export class PickingBuffer {
  constructor(gl) {
    this.gl = gl;
    this.framebuffer = gl.createFramebuffer();
    this.texture = gl.createTexture();
    this.depth = gl.createRenderbuffer();
    this.width = 0;
    this.height = 0;
    this.stale = true;
  }

  _resize(width, height) {
    const gl = this.gl;
    if (width === this.width && height === this.height) return;
    this.width = width;
    this.height = height;
    gl.bindTexture(gl.TEXTURE_2D, this.texture);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA8, width, height, 0, gl.RGBA, gl.UNSIGNED_BYTE, null);
    gl.bindRenderbuffer(gl.RENDERBUFFER, this.depth);
    gl.renderbufferStorage(gl.RENDERBUFFER, gl.DEPTH_COMPONENT24, width, height);
    gl.bindFramebuffer(gl.FRAMEBUFFER, this.framebuffer);
    gl.framebufferTexture2D(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.TEXTURE_2D, this.texture, 0);
    gl.framebufferRenderbuffer(gl.FRAMEBUFFER, gl.DEPTH_ATTACHMENT, gl.RENDERBUFFER, this.depth);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
  }

  /** Marks the buffer out of date (camera moved, points moved or were hidden). */
  invalidate() {
    this.stale = true;
  }

  /**
   * The id of the point nearest to device pixel (x, y) within `radius` pixels, or -1.
   * `drawIds()` draws the points in picking mode when the buffer is stale.
   */
  pick(x, y, radius, width, height, drawIds) {
    const gl = this.gl;
    this._resize(width, height);
    gl.bindFramebuffer(gl.FRAMEBUFFER, this.framebuffer);
    if (this.stale) {
      gl.viewport(0, 0, width, height);
      gl.clearColor(0, 0, 0, 0);
      gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
      gl.disable(gl.BLEND);
      drawIds();
      this.stale = false;
    }
    const x0 = Math.max(0, Math.round(x) - radius);
    const y0 = Math.max(0, height - Math.round(y) - 1 - radius);
    const w = Math.min(width - x0, 2 * radius + 1);
    const h = Math.min(height - y0, 2 * radius + 1);
    if (w <= 0 || h <= 0) {
      gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      return -1;
    }
    const pixels = new Uint8Array(w * h * 4);
    gl.readPixels(x0, y0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    const cx = Math.round(x) - x0;
    const cy = height - Math.round(y) - 1 - y0;
    let best = -1;
    let bestDistance = Infinity;
    for (let j = 0; j < h; j++) {
      for (let i = 0; i < w; i++) {
        const k = (j * w + i) * 4;
        const id = pixels[k] | (pixels[k + 1] << 8) | (pixels[k + 2] << 16);
        if (id === 0) continue;
        const distance = (i - cx) ** 2 + (j - cy) ** 2;
        if (distance < bestDistance) {
          bestDistance = distance;
          best = id - 1;
        }
      }
    }
    return best;
  }
}
