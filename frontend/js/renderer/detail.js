// The full-detail frame, built off screen over several animation frames while the view is
// still (a slice of the draw order each), then copied to the canvas in one blit. The canvas
// keeps showing the sampled frame meanwhile, so nothing flickers while detail builds up.

/** Copies a finished off-screen frame (`framebuffer`, width x height) onto the canvas. */
export function presentFramebuffer(gl, framebuffer, width, height) {
  gl.bindFramebuffer(gl.READ_FRAMEBUFFER, framebuffer);
  gl.bindFramebuffer(gl.DRAW_FRAMEBUFFER, null);
  gl.blitFramebuffer(0, 0, width, height, 0, 0, width, height, gl.COLOR_BUFFER_BIT, gl.NEAREST);
  gl.bindFramebuffer(gl.FRAMEBUFFER, null);
}

export class DetailBuffer {
  constructor(gl) {
    this.gl = gl;
    this.framebuffer = gl.createFramebuffer();
    this.color = gl.createRenderbuffer();
    this.depth = gl.createRenderbuffer();
    this.width = 0;
    this.height = 0;
  }

  /** Binds the buffer for drawing at the canvas size (reallocated when it changes). */
  bind(width, height) {
    const gl = this.gl;
    if (width !== this.width || height !== this.height) {
      this.width = width;
      this.height = height;
      gl.bindRenderbuffer(gl.RENDERBUFFER, this.color);
      gl.renderbufferStorage(gl.RENDERBUFFER, gl.RGBA8, width, height);
      gl.bindRenderbuffer(gl.RENDERBUFFER, this.depth);
      gl.renderbufferStorage(gl.RENDERBUFFER, gl.DEPTH_COMPONENT24, width, height);
      gl.bindFramebuffer(gl.FRAMEBUFFER, this.framebuffer);
      gl.framebufferRenderbuffer(gl.FRAMEBUFFER, gl.COLOR_ATTACHMENT0, gl.RENDERBUFFER, this.color);
      gl.framebufferRenderbuffer(gl.FRAMEBUFFER, gl.DEPTH_ATTACHMENT, gl.RENDERBUFFER, this.depth);
    }
    gl.bindFramebuffer(gl.FRAMEBUFFER, this.framebuffer);
    gl.viewport(0, 0, width, height);
  }

  /** Copies the finished frame's colours onto the canvas (the default framebuffer). */
  present() {
    presentFramebuffer(this.gl, this.framebuffer, this.width, this.height);
  }

  dispose() {
    const gl = this.gl;
    gl.deleteFramebuffer(this.framebuffer);
    gl.deleteRenderbuffer(this.color);
    gl.deleteRenderbuffer(this.depth);
  }
}
