// The polyline layer: sequences (a metadata column linking each point to the next) drawn as
// line segments between linked points, one gl.LINES call over an index buffer built once per
// data set. Positions are the plot's own typed arrays, uploaded when they change, and glide
// with the points (from/to mixed on the GPU). Drawn in the 'top' pass, so the chains show
// over the finished full-detail frame; while the view moves, a frame that draws a sample of
// the points draws the segments starting in it. Segments touching a hidden (isolated-away)
// point are left out.

import { createProgram } from './gl.js';
import { FLAG_HIDDEN } from './points.js';

const VERTEX = `#version 300 es
precision highp float;
layout(location = 0) in vec3 a_from;
layout(location = 1) in vec3 a_to;
uniform mat4 u_matrix;
uniform float u_t;
void main() {
  gl_Position = u_matrix * vec4(mix(a_from, a_to, u_t), 1.0);
}`;

const FRAGMENT = `#version 300 es
precision highp float;
uniform vec4 u_color;
out vec4 outColor;
void main() {
  outColor = u_color;
}`;

/** How many of the ascending `ranks` are below `count` (binary search). */
export function segmentsBefore(ranks, count) {
  let lo = 0;
  let hi = ranks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ranks[mid] < count) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class PolylineLayer {
  constructor() {
    this.pairs = new Uint32Array(0);
    this.enabled = true;
    this.count = 0; // indices in the element buffer (two per segment drawn)
    this.drawnSegments = 0; // segments the last frame drew, for tests and the status line
    this.flagsSeen = null;
    this.nSeen = 0;
    this.rankSeen = null;
    this.sourceRanks = new Int32Array(0); // draw-order rank of each drawn segment's first point
    this.positionsDirty = false;
  }

  /** Segment pairs from parseSequence ([from, to, ...], the points' own indices). */
  setSegments(pairs) {
    this.pairs = pairs;
    this.flagsSeen = null;
    this.positionsDirty = true;
    this.plot?.requestRender();
  }

  setEnabled(on) {
    this.enabled = on;
    this.plot?.requestRender();
  }

  // ---- layer contract ------------------------------------------------------------------

  setScene(plot) {
    this.plot = plot;
    const gl = plot.gl;
    this.gl = gl;
    this.program = createProgram(gl, VERTEX, FRAGMENT, ['a_from', 'a_to']);
    this.fromBuffer = gl.createBuffer();
    this.toBuffer = gl.createBuffer();
    this.elements = gl.createBuffer();
    this.vao = gl.createVertexArray();
    gl.bindVertexArray(this.vao);
    for (const [location, buffer] of [[0, this.fromBuffer], [1, this.toBuffer]]) {
      gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
      gl.enableVertexAttribArray(location);
      gl.vertexAttribPointer(location, 3, gl.FLOAT, false, 0, 0);
    }
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.elements);
    gl.bindVertexArray(null);
  }

  /** Positions are uploaded at the next frame that draws lines (none without sequences). */
  onPositionsChanged() {
    this.positionsDirty = true;
  }

  render(view) {
    if (view.pass !== 'top') return;
    this.drawnSegments = 0;
    const plot = this.plot;
    if (!this.enabled || !this.pairs.length || !plot.n) return;
    const gl = this.gl;
    gl.bindVertexArray(this.vao);
    if (this.positionsDirty) this._uploadPositions();
    if (plot.flags !== this.flagsSeen || plot.n !== this.nSeen || plot.rank !== this.rankSeen) this._buildElements(plot.flags);
    if (!this.count) {
      gl.bindVertexArray(null);
      return;
    }
    gl.useProgram(this.program.program);
    const u = this.program.uniforms;
    gl.uniformMatrix4fv(u.u_matrix, false, view.matrix);
    gl.uniform1f(u.u_t, plot.fromPositions ? view.t : 1);
    const dark = view.background.reduce((a, b) => a + b, 0) < 1.5;
    gl.uniform4fv(u.u_color, dark ? [0.85, 0.85, 0.9, 0.55] : [0.2, 0.25, 0.4, 0.55]);
    gl.disable(gl.DEPTH_TEST); // the chains read over the points, as a drawn overlay
    const segments = view.count < plot.n ? segmentsBefore(this.sourceRanks, view.count) : this.count / 2;
    gl.drawElements(gl.LINES, segments * 2, gl.UNSIGNED_INT, 0);
    gl.enable(gl.DEPTH_TEST);
    gl.bindVertexArray(null);
    this.drawnSegments = segments;
  }

  onResize() {}

  dispose() {
    const gl = this.gl;
    for (const buffer of [this.fromBuffer, this.toBuffer, this.elements]) gl.deleteBuffer(buffer);
    gl.deleteVertexArray(this.vao);
    gl.deleteProgram(this.program.program);
  }

  // ---- buffers -------------------------------------------------------------------------

  _uploadPositions() {
    const gl = this.gl;
    const plot = this.plot;
    gl.bindBuffer(gl.ARRAY_BUFFER, this.toBuffer);
    gl.bufferData(gl.ARRAY_BUFFER, plot.positions, gl.DYNAMIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.fromBuffer);
    gl.bufferData(gl.ARRAY_BUFFER, plot.fromPositions ?? plot.positions, gl.DYNAMIC_DRAW);
    this.positionsDirty = false;
  }

  /**
   * The element buffer: every pair whose two ends exist and are not hidden, in the draw order
   * of their first point, so that a moving frame's sample of points draws the segments that
   * start in it (a prefix of the buffer: an even sample of the chains).
   */
  _buildElements(flags) {
    const plot = this.plot;
    const n = plot.n;
    const pairs = this.pairs;
    const hidden = (i) => i >= n || (flags.length === n && (flags[i] & FLAG_HIDDEN) !== 0);
    const kept = [];
    for (let s = 0; s < pairs.length; s += 2) {
      if (!hidden(pairs[s]) && !hidden(pairs[s + 1])) kept.push(s);
    }
    const rank = plot.rank && plot.rank.length === n ? plot.rank : null;
    if (rank) kept.sort((a, b) => rank[pairs[a]] - rank[pairs[b]]);
    const elements = new Uint32Array(kept.length * 2);
    this.sourceRanks = new Int32Array(kept.length);
    kept.forEach((s, k) => {
      elements[k * 2] = pairs[s];
      elements[k * 2 + 1] = pairs[s + 1];
      this.sourceRanks[k] = rank ? rank[pairs[s]] : pairs[s];
    });
    const gl = this.gl;
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.elements); // the layer's VAO is bound
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, elements, gl.STATIC_DRAW);
    this.count = elements.length;
    this.flagsSeen = flags;
    this.nSeen = n;
    this.rankSeen = plot.rank;
  }
}
