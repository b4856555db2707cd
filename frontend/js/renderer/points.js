// The point layer: every point in one draw call (gl.POINTS), as a shaded disc or as its
// sprite thumbnail from a texture atlas. Positions animate between two buffers (from, to)
// on the GPU; per-point colour and state flags live in their own buffers so that a
// selection or a recolouring never re-uploads positions. The same program draws the
// id-colour picking buffer.

import { createProgram } from './gl.js';
import { uploadSpriteAtlas } from './sprite_atlas.js';

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
uniform mat4 u_matrix;
uniform float u_t;
uniform float u_size;
uniform float u_scale;
uniform bool u_3d;
uniform int u_hover;
uniform bool u_hasSelection;
uniform bool u_plain;
uniform bool u_picking;
uniform bool u_sprites;
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
  bool hov = gl_VertexID == u_hover;
  float shade = float(f >> 4u) / 15.0;

  float size = u_size * (u_3d ? u_scale / pos.w : u_scale);
  if (sel || nb) size *= 1.4;
  if (focus) size *= 1.5;
  if (hov) size *= 1.8;
  size = clamp(size, u_picking ? 5.0 : 1.5, 160.0);

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
  if (u_picking) {
    int id = gl_VertexID + 1;
    color = vec4(float(id & 255), float((id >> 8) & 255), float((id >> 16) & 255), 255.0) / 255.0;
  }
  float cell = float(gl_VertexID);
  float layer = floor(cell / u_spritePerPage);  // the atlas page holding this thumbnail
  cell -= layer * u_spritePerPage;
  float row = floor(cell / u_spriteCols);
  v_uv = vec3(vec2(cell - row * u_spriteCols, row) * u_cell, layer);
  v_color = color;
  v_size = size;
  v_ring = hov ? 2 : (focus || sel) ? 1 : 0;
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
uniform bool u_picking;
uniform vec3 u_background;
uniform bool u_sprites;
uniform bool u_3d;
uniform highp sampler2DArray u_atlas;
uniform vec2 u_cell;
uniform vec3 u_ringColor;
out vec4 outColor;

void main() {
  vec2 pc = gl_PointCoord;
  if (u_sprites) {
    if (u_picking) {
      outColor = v_color;
      return;
    }
    vec4 t = texture(u_atlas, vec3(v_uv.xy + pc * u_cell, v_uv.z));
    float edge = max(abs(pc.x - 0.5), abs(pc.y - 0.5)) * 2.0;
    if (v_ring > 0 && edge > 1.0 - 3.0 / v_size) {
      outColor = vec4(v_ring == 2 ? u_ringColor : vec3(0.98, 0.4, 0.4), 1.0);
      return;
    }
    if (t.a < 0.05) discard;
    // Thumbnails outside the selection fade into the background.
    vec3 rgb = v_dimmed == 1 ? mix(t.rgb, u_background, 0.75) : t.rgb;
    outColor = vec4(rgb, t.a);
    return;
  }
  float r = length(pc - 0.5) * 2.0;
  if (r > 1.0) discard;
  if (u_picking) {
    outColor = v_color;
    return;
  }
  vec3 c = v_color.rgb;
  if (u_3d) c *= 1.0 - 0.28 * r * r;
  if (v_ring > 0 && v_size > 5.0 && r > 1.0 - 3.0 / v_size) c = v_ring == 2 ? u_ringColor : c * 0.55;
  float alpha = v_color.a * clamp((1.0 - r) * v_size * 0.5, 0.0, 1.0);
  outColor = vec4(c, alpha);
}`;

const ATTRIBUTES = ['a_from', 'a_to', 'a_color', 'a_flags'];

export class PointLayer {
  constructor(gl) {
    this.gl = gl;
    this.n = 0;
    const { program, uniforms } = createProgram(gl, VERTEX, FRAGMENT, ATTRIBUTES);
    this.program = program;
    this.uniforms = uniforms;
    this.vao = gl.createVertexArray();
    this.buffers = {
      from: gl.createBuffer(),
      to: gl.createBuffer(),
      color: gl.createBuffer(),
      flags: gl.createBuffer(),
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
    gl.bindVertexArray(null);
    this.atlas = null;
    this.sprite = { cols: 1, perPage: 1, cell: [1, 1] };
  }

  _upload(buffer, data) {
    const gl = this.gl;
    gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
    gl.bufferData(gl.ARRAY_BUFFER, data, gl.DYNAMIC_DRAW);
  }

  /** Target positions (n x 3); `from` is where an animated transition starts (else = target). */
  setPositions(to, from = to) {
    this.n = to.length / 3;
    this._upload(this.buffers.from, from);
    this._upload(this.buffers.to, to);
  }

  /** RGBA bytes per point. */
  setColors(colors) {
    this._upload(this.buffers.color, colors);
  }

  /** One byte of FLAG_* bits (and the neighbour shade) per point. */
  setFlags(flags) {
    this._upload(this.buffers.flags, flags);
  }

  /** The sprite's atlas pages (sprite_atlas.js) as one texture array. */
  setSprite(atlas) {
    this.clearSprite();
    const { texture, ...layout } = uploadSpriteAtlas(this.gl, atlas);
    this.atlas = texture;
    this.sprite = layout;
  }

  clearSprite() {
    if (this.atlas) this.gl.deleteTexture(this.atlas);
    this.atlas = null;
  }

  /**
   * Draws all points. `view`: matrix, t (transition 0..1), size, scale, threeD, hover,
   * hasSelection, plain (no colour-by), sprites, picking, and theme colours dim / ring /
   * background.
   */
  draw(view) {
    const gl = this.gl;
    if (!this.n) return;
    const u = this.uniforms;
    const sprites = Boolean(view.sprites && this.atlas);
    gl.useProgram(this.program);
    gl.bindVertexArray(this.vao);
    gl.uniformMatrix4fv(u.u_matrix, false, view.matrix);
    gl.uniform1f(u.u_t, view.t);
    gl.uniform1f(u.u_size, view.size);
    gl.uniform1f(u.u_scale, view.scale);
    gl.uniform1i(u.u_3d, view.threeD ? 1 : 0);
    gl.uniform1i(u.u_hover, view.hover ?? -1);
    gl.uniform1i(u.u_hasSelection, view.hasSelection ? 1 : 0);
    gl.uniform1i(u.u_plain, view.plain ? 1 : 0);
    gl.uniform1i(u.u_picking, view.picking ? 1 : 0);
    gl.uniform1i(u.u_sprites, sprites ? 1 : 0);
    gl.uniform4fv(u.u_dim, view.dim);
    gl.uniform3fv(u.u_selected, view.selectedColor);
    gl.uniform3fv(u.u_hovered, view.hoverColor);
    gl.uniform3fv(u.u_ringColor, view.ringColor);
    gl.uniform3fv(u.u_background, view.background);
    gl.uniform1f(u.u_spriteCols, this.sprite.cols);
    gl.uniform1f(u.u_spritePerPage, this.sprite.perPage);
    gl.uniform2fv(u.u_cell, this.sprite.cell);
    if (sprites) {
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(gl.TEXTURE_2D_ARRAY, this.atlas);
      gl.uniform1i(u.u_atlas, 0);
    }
    gl.drawArrays(gl.POINTS, 0, this.n);
    gl.bindVertexArray(null);
  }
}
