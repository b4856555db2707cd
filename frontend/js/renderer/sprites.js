// The sprite layer: each point as its thumbnail from the sprite atlas, drawn by the point
// layer's program with the atlas bound (the points layer stands aside while thumbnails show).

export class SpriteLayer {
  /** `points`: the PointLayer whose buffers and program draw the thumbnails. */
  constructor(points) {
    this.points = points;
    this.atlas = null;
  }

  // ---- layer contract ------------------------------------------------------------------

  setScene(plot) {
    this.gl = plot.gl;
  }

  onPositionsChanged() {}

  render(view) {
    if (view.sprites && this.atlas) this.points.drawRange(view, this.atlas);
  }

  onResize() {}

  dispose() {
    this.clearSprite();
  }

  // ---- atlas -----------------------------------------------------------------------------

  /**
   * The sprite image as the atlas: cells of `cellWidth` x `cellHeight` pixels, row-major from
   * the top-left. Images over the GPU's texture limit are scaled down; the cell layout, in
   * texture coordinates, stays the same.
   */
  setSprite(image, cellWidth, cellHeight) {
    const gl = this.gl;
    const max = gl.getParameter(gl.MAX_TEXTURE_SIZE);
    let source = image;
    const scale = Math.min(1, max / image.width, max / image.height);
    if (scale < 1) {
      const canvas = new OffscreenCanvas(Math.floor(image.width * scale), Math.floor(image.height * scale));
      canvas.getContext('2d').drawImage(image, 0, 0, canvas.width, canvas.height);
      source = canvas;
    }
    const texture = this.atlas?.texture ?? gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D, texture);
    gl.pixelStorei(gl.UNPACK_PREMULTIPLY_ALPHA_WEBGL, false);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, source);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
    this.atlas = {
      texture,
      cols: Math.max(1, Math.floor(image.width / cellWidth)),
      cell: [cellWidth / image.width, cellHeight / image.height],
    };
  }

  clearSprite() {
    if (this.atlas) this.gl.deleteTexture(this.atlas.texture);
    this.atlas = null;
  }
}
