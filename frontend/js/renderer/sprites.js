// The sprite layer: each point as its thumbnail from the sprite atlas, drawn by the point
// layer's program with the atlas bound (the points layer stands aside while thumbnails show).

import { uploadSpriteAtlas } from './sprite_atlas.js';

/** Selected thumbnails ringed and labelled at most: above it the dimmed rest already says
 * which are selected, and hundreds of rings and chips would hide the images (issue 33). */
export const MARKED_THUMBNAILS = 48;

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
    if (view.pass === 'base' && view.sprites && this.atlas && !this.points.hidden) this.points.drawRange(view, this.atlas);
  }

  onResize() {}

  dispose() {
    this.clearSprite();
  }

  // ---- atlas -----------------------------------------------------------------------------

  /** `atlas` from loadSpriteAtlas: its pages become the layers of one texture array. */
  setSprite(atlas) {
    this.atlas = uploadSpriteAtlas(this.gl, atlas, this.atlas?.texture);
  }

  clearSprite() {
    if (this.atlas) this.gl.deleteTexture(this.atlas.texture);
    this.atlas = null;
  }
}
