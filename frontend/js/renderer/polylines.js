// The polyline layer: sequences (a metadata column linking each point to the next) drawn as
// line segments between linked points, one gl.LINES call over an index buffer built once per
// data set. Positions are the plot's own typed arrays, uploaded when they change, and glide
// with the points (from/to mixed on the GPU). Drawn in the 'top' pass, so the chains show
// over any level-of-detail sample and over the finished full-detail frame alike; segments
// touching a hidden (isolated-away) point are left out.

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

export class PolylineLayer {
  constructor() {
    this.pairs = new Uint32Array(0);
    this.enabled = true;
    this.count = 0; // indices in the element buffer (two per segment drawn)
    this.drawnSegments = 0; // segments the last frame drew, for tests and the status line
    this.flagsSeen = null;
    this.nSeen = 0;
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
    if (plot.flags !== this.flagsSeen || plot.n !== this.nSeen) this._buildElements(plot.flags);
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
    gl.drawElements(gl.LINES, this.count, gl.UNSIGNED_INT, 0);
    gl.enable(gl.DEPTH_TEST);
    gl.bindVertexArray(null);
    this.drawnSegments = this.count / 2;
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

  /** The element buffer: every pair whose two ends exist and are not hidden. */
  _buildElements(flags) {
    const n = this.plot.n;
    const pairs = this.pairs;
    const hidden = (i) => i >= n || (flags.length === n && (flags[i] & FLAG_HIDDEN) !== 0);
    let kept = pairs;
    if (flags.length === n || pairs.some((i) => i >= n)) {
      const out = new Uint32Array(pairs.length);
      let k = 0;
      for (let s = 0; s < pairs.length; s += 2) {
        if (hidden(pairs[s]) || hidden(pairs[s + 1])) continue;
        out[k++] = pairs[s];
        out[k++] = pairs[s + 1];
      }
      kept = out.subarray(0, k);
    }
    const gl = this.gl;
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.elements); // the layer's VAO is bound
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, kept, gl.STATIC_DRAW);
    this.count = kept.length;
    this.flagsSeen = flags;
    this.nSeen = n;
  }
}
