// Sprite thumbnails from atlas pages. The server cuts any sprite into pages no larger than
// this GPU's MAX_TEXTURE_SIZE (GET api/sprite/atlas, api/sprite/page); the pages become the
// layers of one TEXTURE_2D_ARRAY, so the point shader finds thumbnail i from gl_VertexID
// alone: layer = i / perPage, then column and row within the layer. Every page but the last
// is full and all have the same columns (the server's layout contract), which is what makes
// that arithmetic exact.

import { errorOf } from '../api.js';

const MIN_MAX_PX = 1024;
const MAX_MAX_PX = 16384;
let cachedMaxPx = null;

/** This browser's largest texture side, within what the server's atlas route accepts. */
export function browserMaxTextureSize() {
  if (cachedMaxPx === null) {
    let max = 8192;
    try {
      const gl = new OffscreenCanvas(1, 1).getContext('webgl2');
      if (gl) {
        max = gl.getParameter(gl.MAX_TEXTURE_SIZE);
        gl.getExtension('WEBGL_lose_context')?.loseContext();
      }
    } catch {
      // no OffscreenCanvas WebGL2: keep the common 8192
    }
    cachedMaxPx = Math.min(MAX_MAX_PX, Math.max(MIN_MAX_PX, max));
  }
  return cachedMaxPx;
}

async function fetchOk(url) {
  const response = await fetch(url);
  if (!response.ok) throw await errorOf(response);
  return response;
}

/**
 * Loads the atlas of an embedding's sprite: { pages: [{ bitmap, url, width, height, cols,
 * first, count }], cellWidth, cellHeight, perPage, page(i) }. `url` is an object URL for CSS
 * thumbnails; `onProgress(done, total)` counts pages.
 */
/**
 * @param {import('../api.js').Api & { spriteFiles?: (run: string, embedding: string) => Promise<{ layout: any, pageUrl: (page: number) => URL | string }> }} api
 * @param {string} run
 * @param {string} embedding
 * @param {number} [maxPx]
 * @param {(done: number, total: number) => void} [onProgress]
 */
export async function loadSpriteAtlas(api, run, embedding, maxPx = browserMaxTextureSize(), onProgress = (_done, _total) => {}) {
  const params = { run, embedding, max_px: maxPx };
  // A shared static site (static_mode.js) lists its own atlas files.
  const { layout, pageUrl } = api.spriteFiles
    ? await api.spriteFiles(run, embedding)
    : { layout: await (await fetchOk(api.url('sprite/atlas', params))).json(), pageUrl: (page) => api.url('sprite/page', { ...params, page }) };
  const pages = [];
  onProgress(0, layout.pages.length);
  for (const page of layout.pages) {
    const blob = await (await fetchOk(pageUrl(page.index))).blob();
    pages.push({
      bitmap: await createImageBitmap(blob),
      url: URL.createObjectURL(blob),
      width: page.size[0],
      height: page.size[1],
      cols: page.grid[0],
      first: page.first,
      count: page.count,
    });
    onProgress(pages.length, layout.pages.length);
  }
  const ink = pages.length ? inkOf(pages[0].bitmap) : null;
  const [cellWidth, cellHeight] = layout.thumb_dim;
  const perPage = pages.length > 1 ? pages[1].first : Math.max(1, pages[0]?.count ?? 1);
  return {
    pages,
    cellWidth,
    cellHeight,
    perPage,
    ink,
    page(i) {
      return pages[Math.min(pages.length - 1, Math.floor(i / perPage))];
    },
  };
}

/**
 * Uploads the pages as the layers of a TEXTURE_2D_ARRAY (sized to the largest page) and
 * returns it with the uniforms the point shader needs: cols, perPage, cell (one cell in
 * texture coordinates). The decoded bitmaps are released once on the GPU.
 */
export function uploadSpriteAtlas(gl, atlas, texture = gl.createTexture()) {
  const width = Math.max(...atlas.pages.map((p) => p.width));
  const height = Math.max(...atlas.pages.map((p) => p.height));
  gl.bindTexture(gl.TEXTURE_2D_ARRAY, texture);
  gl.texImage3D(gl.TEXTURE_2D_ARRAY, 0, gl.RGBA8, width, height, atlas.pages.length, 0, gl.RGBA, gl.UNSIGNED_BYTE, null);
  gl.pixelStorei(gl.UNPACK_PREMULTIPLY_ALPHA_WEBGL, false);
  atlas.pages.forEach((page, layer) => {
    if (!page.bitmap) return;
    gl.texSubImage3D(gl.TEXTURE_2D_ARRAY, 0, 0, 0, layer, page.width, page.height, 1, gl.RGBA, gl.UNSIGNED_BYTE, page.bitmap);
    page.bitmap.close();
    page.bitmap = null;
  });
  gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
  gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
  gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
  gl.texParameteri(gl.TEXTURE_2D_ARRAY, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
  return {
    texture,
    cols: atlas.pages[0]?.cols ?? 1,
    perPage: atlas.perPage,
    cell: [atlas.cellWidth / width, atlas.cellHeight / height],
    picture: pictureShare(atlas.cellWidth, atlas.cellHeight),
    ink: atlas.ink ?? null,
  };
}

/**
 * The part of a square point a `width` x `height` thumbnail covers, its aspect kept: the
 * long side fills the point (TensorBoard stretches a non-square thumbnail to the square).
 */
export function pictureShare(width, height) {
  return width >= height ? [1, height / width] : [width / height, 1];
}

/**
 * Whether a sprite is greyscale ink on paper (digits, sketches), read from a small copy of
 * its first page: { lightPaper } or null for a colour image. Such thumbnails are drawn as
 * their ink alone in the point's colour, so colour-by shows and no paper covers a dark plot.
 */
export function inkOf(bitmap) {
  const side = 96;
  const canvas = new OffscreenCanvas(side, side);
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  if (!ctx) return null;
  ctx.drawImage(bitmap, 0, 0, side, side);
  const data = ctx.getImageData(0, 0, side, side).data;
  let opaque = 0;
  let coloured = 0;
  let light = 0;
  for (let i = 0; i < data.length; i += 4) {
    if (data[i + 3] < 128) continue;
    opaque++;
    const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
    if (Math.max(r, g, b) - Math.min(r, g, b) > 24) coloured++;
    if (r + g + b > 384) light++;
  }
  if (!opaque || coloured > opaque * 0.01) return null;
  return { lightPaper: light > opaque / 2 };
}
