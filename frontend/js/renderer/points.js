// The point layer: the points as shaded discs in one draw call (gl.POINTS), or, with the
// sprite layer's atlas bound, as thumbnails (the same program). Buffers hold the points in
// draw order, the level-of-detail order where every prefix is an even sample, so a frame can
// draw the first `count` points and stand for the whole set; `a_index` carries each point's
// own index (hover, sprite cell). Positions animate between two buffers (from, to) on the
// GPU; colour and flags live in their own buffers so that a selection or a recolouring never
// re-uploads positions.

import { permutedAhead } from '../draw_order.js';
import { createProgram } from './gl.js';

export const FLAG_SELECTED = 1;
export const FLAG_NEIGHBOR = 2;
export const FLAG_HIDDEN = 4;
export const FLAG_FOCUS = 8;
/** Neighbour rank shade (0 nearest .. 15 farthest) lives in the high nibble of the flags. */
export const SHADE_SHIFT = 4;

const VERTEX = `#version 300 es
precision highp float;
precision highp int;
layout(location = 0) in vec3 a_from;
layout(location = 1) in vec3 a_to;
layout(location = 2) in vec4 a_color;
layout(location = 3) in uint a_flags;
layout(location = 4) in uint a_index;
uniform mat4 u_matrix;
uniform float u_t;
uniform float u_size;
uniform float u_scale;
uniform bool u_3d;
uniform int u_hover;
uniform bool u_hasSelection;
uniform bool u_ringSelected;  // thumbnails: ring the selected ones (a few selected only)
uniform bool u_plain;
uniform bool u_sprites;
uniform float u_sampleSize;
uniform vec4 u_dim;
uniform vec3 u_selected;
uniform vec3 u_hovered;
uniform float u_spriteCols;
uniform float u_spritePerPage;
uniform vec2 u_cell;
out vec4 v_color;
out vec3 v_uv;
out float v_size;
flat out int v_ring;
flat out int v_dimmed;

void main() {
  uint f = a_flags;
  if ((f & 4u) != 0u) {
    gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
    gl_PointSize = 0.0;
    return;
  }
  vec3 p = mix(a_from, a_to, u_t);
  vec4 pos = u_matrix * vec4(p, 1.0);
  bool sel = (f & 1u) != 0u;
  bool nb = (f & 2u) != 0u;
  bool focus = (f & 8u) != 0u;
  bool hov = int(a_index) == u_hover;
  float shade = float(f >> 4u) / 15.0;

  float size = u_size * (u_3d ? u_scale / pos.w : u_scale);
  if (sel || nb) size *= 1.4;
  if (focus) size *= 1.5;
  if (hov) size *= 1.8;
  // A sample drawn for the whole set: each point stands for several, so it is drawn larger.
  if (!(sel || nb || hov)) size *= u_sampleSize;
  size = clamp(size, 1.5, 160.0);

  vec4 color = a_color;
  v_dimmed = 0;
  if (u_hasSelection && !(sel || nb || hov)) {
    color = u_dim;
    v_dimmed = 1;
  } else if (u_plain && !u_sprites) {
    if (sel) color = vec4(u_selected, 1.0);
    else if (nb) color = vec4(mix(u_selected, a_color.rgb, 0.25 + 0.6 * shade), 1.0);
  }
  if (hov && u_plain && !u_sprites) color = vec4(u_hovered, 1.0);

  if (!u_3d) {
    // One draw call, yet highlighted points stay on top in 2D: their depth is nearer.
    float layer = hov ? -0.9 : focus ? -0.7 : sel ? -0.5 : nb ? -0.4 : (u_hasSelection ? 0.5 : 0.0);
    pos.z = layer * pos.w;
  }
  float cell = float(a_index);
  float page = floor(cell / u_spritePerPage);  // the atlas page (texture layer) of this thumbnail
  cell -= page * u_spritePerPage;
  float row = floor(cell / u_spriteCols);
  v_uv = vec3(vec2(cell - row * u_spriteCols, row) * u_cell, page);
  v_color = color;
  v_size = size;
  v_ring = hov ? 2 : (focus || (sel && (u_ringSelected || !u_sprites))) ? 1 : 0;
  gl_Position = pos;
  gl_PointSize = size;
}`;

const FRAGMENT = `#version 300 es
precision highp float;
in vec4 v_color;
in vec3 v_uv;
in float v_size;
flat in int v_ring;
flat in int v_dimmed;
uniform vec3 u_background;
uniform bool u_sprites;
uniform bool u_3d;
uniform highp sampler2DArray u_atlas;
uniform vec2 u_cell;
uniform vec2 u_picture;  // the thumbnail's share of the point: [1, h / w] or [w / h, 1]
uniform vec3 u_ringColor;
uniform bool u_plain;
uniform int u_ink;  // greyscale thumbnails: 1 dark ink on light paper, 2 light on dark, 0 colour
uniform vec3 u_inkColor;
out vec4 outColor;

void main() {
  vec2 pc = gl_PointCoord;
  if (u_sprites) {
    // A non-square thumbnail keeps its aspect: it fills the square point along its long
    // side, centred, and the rest of the point stays empty (letterboxed).
    vec2 inner = (pc - 0.5) / u_picture + 0.5;
    float edge = max(abs(inner.x - 0.5), abs(inner.y - 0.5)) * 2.0;
    if (edge > 1.0) discard;
    vec4 t = texture(u_atlas, vec3(v_uv.xy + inner * u_cell, v_uv.z));
    if (v_ring > 0 && edge > 1.0 - 3.0 / v_size) {
      outColor = vec4(v_ring == 2 ? u_ringColor : vec3(0.98, 0.4, 0.4), 1.0);
      return;
    }
    if (u_ink > 0) {
      // Ink without its paper, in the point's colour (the theme's text without colour-by).
      float lum = dot(t.rgb, vec3(0.299, 0.587, 0.114));
      float ink = (u_ink == 1 ? 1.0 - lum : lum) * t.a;
      if (ink < 0.12) discard;
      vec3 c = u_plain ? u_inkColor : v_color.rgb;
      outColor = vec4(v_dimmed == 1 ? mix(c, u_background, 0.75) : c, min(1.0, ink * 1.5));
      return;
    }
    if (t.a < 0.05) discard;
    // Thumbnails outside the selection fade into the background.
    vec3 rgb = v_dimmed == 1 ? mix(t.rgb, u_background, 0.75) : t.rgb;
    // A colour image keeps its colours: the point's colour frames it.
    if (!u_plain && v_dimmed == 0 && edge > 1.0 - 4.0 / v_size) rgb = v_color.rgb;
    outColor = vec4(rgb, t.a);
    return;
  }
  float r = length(pc - 0.5) * 2.0;
  if (r > 1.0) discard;
  vec3 c = v_color.rgb;
  if (u_3d) c *= 1.0 - 0.28 * r * r;
  if (v_ring > 0 && v_size > 5.0 && r > 1.0 - 3.0 / v_size) c = v_ring == 2 ? u_ringColor : c * 0.55;
  float alpha = v_color.a * clamp((1.0 - r) * v_size * 0.5, 0.0, 1.0);
  outColor = vec4(c, alpha);
}`;

const ATTRIBUTES = ['a_from', 'a_to', 'a_color', 'a_flags', 'a_index'];

/** One compiled point program per WebGL context: every tile's layer shares it (tiles/layer.js). */
const PROGRAMS = new WeakMap();

function pointProgram(gl) {
  if (!PROGRAMS.has(gl)) PROGRAMS.set(gl, createProgram(gl, VERTEX, FRAGMENT, ATTRIBUTES));
  return PROGRAMS.get(gl);
}

/**
 * `values` (n x width) rearranged into draw order: row r holds row order[r]. Rows of 4 bytes
 * move as one 32-bit word; each width has its own loop (this runs over millions of rows).
 */
export function permuteRows(values, order, width) {
  if (!order) return values;
  const ahead = permutedAhead(values, order);
  if (ahead) return ahead;
  const n = order.length;
  if (width === 4 && values instanceof Uint8Array && values.byteOffset % 4 === 0) {
    const words = new Uint32Array(values.buffer, values.byteOffset, n);
    const out = new Uint32Array(n);
    for (let r = 0; r < n; r++) out[r] = words[order[r]];
    return new Uint8Array(out.buffer);
  }
  const out = new values.constructor(n * width);
  if (width === 1) {
    for (let r = 0; r < n; r++) out[r] = values[order[r]];
  } else if (width === 3) {
    for (let r = 0; r < n; r++) {
      const i = order[r] * 3;
      const o = r * 3;
      out[o] = values[i];
      out[o + 1] = values[i + 1];
      out[o + 2] = values[i + 2];
    }
  } else {
    for (let r = 0; r < n; r++) for (let k = 0; k < width; k++) out[r * width + k] = values[order[r] * width + k];
  }
  return out;
}

function anyNonZero(bytes) {
  const whole = bytes.byteOffset % 4 === 0 ? bytes.length >> 2 : 0;
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, whole);
  for (let i = 0; i < whole; i++) if (words[i] !== 0) return true;
  for (let i = whole * 4; i < bytes.length; i++) if (bytes[i] !== 0) return true;
  return false;
}

function identity(n) {
  const index = new Uint32Array(n);
  for (let i = 0; i < n; i++) index[i] = i;
  return index;
}

export class PointLayer {
  constructor() {
    this.n = 0;
    this.order = null;
    this.hidden = false; // the 3D labels layer draws the points as text instead
  }

  // ---- layer contract ------------------------------------------------------------------

  setScene(plot) {
    const gl = plot.gl;
    this.gl = gl;
    const { program, uniforms } = pointProgram(gl);
    this.program = program;
    this.uniforms = uniforms;
    this.vao = gl.createVertexArray();
    this.buffers = {
      from: gl.createBuffer(),
      to: gl.createBuffer(),
      color: gl.createBuffer(),
      flags: gl.createBuffer(),
      index: gl.createBuffer(),
    };
    gl.bindVertexArray(this.vao);
    const float3 = (buffer, location) => {
      gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
      gl.enableVertexAttribArray(location);
      gl.vertexAttribPointer(location, 3, gl.FLOAT, false, 0, 0);
    };
    float3(this.buffers.from, 0);
    float3(this.buffers.to, 1);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buffers.color);
    gl.enableVertexAttribArray(2);
    gl.vertexAttribPointer(2, 4, gl.UNSIGNED_BYTE, true, 0, 0);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buffers.flags);
    gl.enableVertexAttribArray(3);
    gl.vertexAttribIPointer(3, 1, gl.UNSIGNED_BYTE, 0, 0);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buffers.index);
    gl.enableVertexAttribArray(4);
    gl.vertexAttribIPointer(4, 1, gl.UNSIGNED_INT, 0, 0);
    gl.bindVertexArray(null);
  }

  /**
   * Target positions (n x 3, the points' own order); `from` is where an animated transition
   * starts (else = target); `order` the draw order (null: as they are).
   */
  onPositionsChanged(to, from, order) {
    const gl = this.gl;
    if (order !== this.order || to.length / 3 !== this.n) {
      this.order = order;
      this.n = to.length / 3;
      // The order's int32 words read as uint32 (a permutation holds no negatives): no copy.
      const index = order ? new Uint32Array(order.buffer, order.byteOffset, order.length) : identity(to.length / 3);
      this._upload(this.buffers.index, index);
      // Colours and flags follow the points into the new draw order (or come with them).
      if (this.colors) this.setColors(this.colors);
      if (this.flags) this.setFlags(this.flags);
    }
    this.n = to.length / 3;
    const target = permuteRows(to, order, 3);
    this._upload(this.buffers.to, target);
    // Without a transition both attributes read one buffer: no second copy of the positions.
    gl.bindVertexArray(this.vao);
    gl.bindBuffer(gl.ARRAY_BUFFER, from === to ? this.buffers.to : this.buffers.from);
    gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
    gl.bindVertexArray(null);
    if (from !== to) this._upload(this.buffers.from, permuteRows(from, order, 3));
  }

  /**
   * Points that are their own draw order (a tile: tiles/tile_points.js): positions (count x 3)
   * and each point's row id (hover, sprite cell), uploaded once.
   */
  setPoints(positions, rows) {
    this.order = null;
    this.n = positions.length / 3;
    this._upload(this.buffers.index, new Uint32Array(rows.buffer, rows.byteOffset, rows.length));
    this.onPositionsChanged(positions, positions, null);
  }

  /** Draws points [start, start + count) of the draw order, unless the sprite layer draws them. */
  render(view) {
    if (view.pass !== 'base' || this.hidden || (view.sprites && view.spriteAtlas)) return;
    this.drawRange(view, null);
  }

  onResize() {}

  dispose() {
    const gl = this.gl;
    for (const buffer of Object.values(this.buffers)) gl.deleteBuffer(buffer);
    gl.deleteVertexArray(this.vao);
    // The program is shared by every point layer of this context (pointProgram).
  }

  // ---- data ------------------------------------------------------------------------------

  _upload(buffer, data) {
    const gl = this.gl;
    gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
    gl.bufferData(gl.ARRAY_BUFFER, data, gl.DYNAMIC_DRAW);
  }

  /**
   * RGBA bytes per point (the points' own order). Kept, not uploaded, while the layer holds
   * other points (none: a tiled plot's whole-set layer, which 10M colours would cost 40 MB
   * and a long task each time): onPositionsChanged uploads them with the points they fit.
   */
  setColors(colors) {
    this.colors = colors;
    if (colors.length !== this.n * 4) return;
    this._upload(this.buffers.color, permuteRows(colors, this.order, 4));
  }

  /** One byte of FLAG_* bits (and the neighbour shade) per point (the points' own order);
   * kept until the points they fit, as colours are. */
  setFlags(flags) {
    this.flags = flags;
    if (flags.length !== this.n) return;
    // Usually no point has a flag: then the draw order needs no permutation.
    const none = flags.length > 65536 && !anyNonZero(flags);
    this._upload(this.buffers.flags, none ? flags : permuteRows(flags, this.order, 1));
  }

  /** Binds the program, the vertex arrays and the uniforms of `view`; `atlas` for thumbnails. */
  bind(view, atlas) {
    const gl = this.gl;
    const u = this.uniforms;
    gl.useProgram(this.program);
    gl.bindVertexArray(this.vao);
    gl.uniformMatrix4fv(u.u_matrix, false, view.matrix);
    gl.uniform1f(u.u_t, view.t);
    gl.uniform1f(u.u_size, view.size);
    gl.uniform1f(u.u_scale, view.scale);
    gl.uniform1f(u.u_sampleSize, view.sampleSize ?? 1);
    gl.uniform1i(u.u_3d, view.threeD ? 1 : 0);
    gl.uniform1i(u.u_hover, view.hover ?? -1);
    gl.uniform1i(u.u_hasSelection, view.hasSelection ? 1 : 0);
    gl.uniform1i(u.u_ringSelected, view.ringSelected === false ? 0 : 1);
    gl.uniform1i(u.u_plain, view.plain ? 1 : 0);
    gl.uniform1i(u.u_sprites, atlas ? 1 : 0);
    gl.uniform4fv(u.u_dim, view.dim);
    gl.uniform3fv(u.u_selected, view.selectedColor);
    gl.uniform3fv(u.u_hovered, view.hoverColor);
    gl.uniform3fv(u.u_ringColor, view.ringColor);
    gl.uniform3fv(u.u_background, view.background);
    gl.uniform1f(u.u_spriteCols, atlas ? atlas.cols : 1);
    gl.uniform1f(u.u_spritePerPage, atlas ? atlas.perPage : 1);
    gl.uniform2fv(u.u_cell, atlas ? atlas.cell : [1, 1]);
    gl.uniform2fv(u.u_picture, atlas?.picture ?? [1, 1]);
    gl.uniform1i(u.u_ink, atlas?.ink ? (atlas.ink.lightPaper ? 1 : 2) : 0);
    gl.uniform3fv(u.u_inkColor, view.inkColor ?? [0, 0, 0]);
    if (atlas) {
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(gl.TEXTURE_2D_ARRAY, atlas.texture);
      gl.uniform1i(u.u_atlas, 0);
    }
  }

  /**
   * Draws the view's range of the draw order. `view`: matrix, t (transition 0..1), size,
   * scale, sampleSize, threeD, hover, hasSelection, plain (no colour-by), start, count, and
   * theme colours dim / ring / background.
   */
  drawRange(view, atlas) {
    const count = Math.min(view.count ?? this.n, this.n - (view.start ?? 0));
    if (!this.n || count <= 0) return;
    this.bind(view, atlas);
    const gl = this.gl;
    if (view.elements) {
      // Ranks [start, start + count) of a list of ranks (renderer/cull.js), not of the order.
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, view.elements);
      gl.drawElements(gl.POINTS, count, gl.UNSIGNED_INT, (view.start ?? 0) * 4);
    } else {
      gl.drawArrays(gl.POINTS, view.start ?? 0, count);
    }
    gl.bindVertexArray(null);
  }
}
