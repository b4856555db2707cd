// Cameras over the normalised point cloud (it fits in [-1, 1]^3): a 2D orthographic camera
// (pan, zoom towards the cursor) and a 3D orbit camera (orbit, pan, dolly), as plain objects
// { target, theta, phi, distance, zoom } so that state and bookmarks can hold them. Pure math.

const FOV = Math.PI / 4;
const HALF_VIEW_2D = 1.15;
const ORBIT_SPEED = 0.008;

export function defaultCamera() {
  return { target: [0, 0, 0], theta: 0.8, phi: 1.1, distance: 3.4, zoom: 1 };
}

function normalize(v) {
  const l = Math.hypot(v[0], v[1], v[2]) || 1;
  return [v[0] / l, v[1] / l, v[2] / l];
}

function cross(a, b) {
  return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
}

function dot(a, b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/** Column-major 4x4 product a * b. */
export function multiply(a, b) {
  const out = new Float32Array(16);
  for (let c = 0; c < 4; c++) {
    for (let r = 0; r < 4; r++) {
      let s = 0;
      for (let k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
      out[c * 4 + r] = s;
    }
  }
  return out;
}

function perspective(fov, aspect, near, far) {
  const f = 1 / Math.tan(fov / 2);
  const nf = 1 / (near - far);
  return new Float32Array([f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0]);
}

function ortho(left, right, bottom, top, near, far) {
  const lr = 1 / (left - right);
  const bt = 1 / (bottom - top);
  const nf = 1 / (near - far);
  return new Float32Array([
    -2 * lr, 0, 0, 0, 0, -2 * bt, 0, 0, 0, 0, 2 * nf, 0,
    (left + right) * lr, (top + bottom) * bt, (far + near) * nf, 1,
  ]);
}

function lookAt(eye, target, up) {
  const z = normalize([eye[0] - target[0], eye[1] - target[1], eye[2] - target[2]]);
  const x = normalize(cross(up, z));
  const y = cross(z, x);
  return new Float32Array([
    x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0,
    -dot(x, eye), -dot(y, eye), -dot(z, eye), 1,
  ]);
}

/** Where the 3D camera sits. */
export function eyePosition(cam) {
  const s = Math.sin(cam.phi);
  return [
    cam.target[0] + cam.distance * s * Math.sin(cam.theta),
    cam.target[1] + cam.distance * Math.cos(cam.phi),
    cam.target[2] + cam.distance * s * Math.cos(cam.theta),
  ];
}

/** Half the height and width of the 2D view in world units. */
function halfView2d(cam, aspect) {
  const h = HALF_VIEW_2D / cam.zoom / Math.min(1, aspect);
  return [h * aspect, h];
}

/** The matrix taking world coordinates to clip space. */
export function viewProjection(cam, threeD, aspect) {
  if (threeD) {
    const eye = eyePosition(cam);
    const near = cam.distance * 0.01;
    const far = cam.distance * 10 + 10;
    return multiply(perspective(FOV, aspect, near, far), lookAt(eye, cam.target, [0, 1, 0]));
  }
  const [hw, hh] = halfView2d(cam, aspect);
  const [cx, cy] = cam.target;
  return ortho(cx - hw, cx + hw, cy - hh, cy + hh, -10, 10);
}

/** Scale that makes perspective point sizes match 2D sizes at the default distance. */
export function pointScale(cam, threeD) {
  return threeD ? defaultCamera().distance : Math.sqrt(cam.zoom);
}

export function orbit(cam, dx, dy) {
  const phi = Math.min(Math.PI - 0.01, Math.max(0.01, cam.phi - dy * ORBIT_SPEED));
  return { ...cam, theta: cam.theta - dx * ORBIT_SPEED, phi };
}

/** Moves the view by (dx, dy) pixels on a viewport `height` pixels high. */
export function pan(cam, threeD, dx, dy, height, aspect) {
  if (!threeD) {
    const [, hh] = halfView2d(cam, aspect);
    const perPixel = (2 * hh) / height;
    const [x, y, z] = cam.target;
    return { ...cam, target: [x - dx * perPixel, y + dy * perPixel, z] };
  }
  const eye = eyePosition(cam);
  const forward = normalize([cam.target[0] - eye[0], cam.target[1] - eye[1], cam.target[2] - eye[2]]);
  const right = normalize(cross(forward, [0, 1, 0]));
  const up = cross(right, forward);
  const perPixel = (2 * cam.distance * Math.tan(FOV / 2)) / height;
  const target = cam.target.map((t, i) => t - right[i] * dx * perPixel + up[i] * dy * perPixel);
  return { ...cam, target };
}

/**
 * Zooms by `factor` (> 1 zooms in). In 2D the world point under the cursor (ndcX, ndcY in
 * [-1, 1]) stays put; in 3D the camera dollies towards the target.
 */
export function zoom(cam, threeD, factor, ndcX = 0, ndcY = 0, aspect = 1) {
  if (threeD) {
    return { ...cam, distance: Math.min(100, Math.max(0.02, cam.distance / factor)) };
  }
  const next = Math.min(1e5, Math.max(0.05, cam.zoom * factor));
  const [hw, hh] = halfView2d(cam, aspect);
  const [nw, nh] = halfView2d({ ...cam, zoom: next }, aspect);
  const [x, y, z] = cam.target;
  const wx = x + ndcX * hw;
  const wy = y + ndcY * hh;
  return { ...cam, zoom: next, target: [wx - ndcX * nw, wy - ndcY * nh, z] };
}

/**
 * Screen position [x, y] in CSS pixels of a world point (top-left origin), plus its clip
 * depth; null when the point is behind the camera.
 */
export function toScreen(m, x, y, z, width, height) {
  const w = m[3] * x + m[7] * y + m[11] * z + m[15];
  if (w <= 0) return null;
  const cx = (m[0] * x + m[4] * y + m[8] * z + m[12]) / w;
  const cy = (m[1] * x + m[5] * y + m[9] * z + m[13]) / w;
  const cz = (m[2] * x + m[6] * y + m[10] * z + m[14]) / w;
  return [((cx + 1) / 2) * width, ((1 - cy) / 2) * height, cz];
}

/**
 * The share of `rows` (at most `limit` of them, evenly spaced) whose point (`positions`,
 * n x 3) the view matrix `m` puts inside the canvas; null for no rows.
 * @param {Float32Array} m
 * @param {Float32Array} positions
 * @param {number[]} rows
 */
export function shareInView(m, positions, rows, limit = 1000) {
  if (!rows.length) return null;
  const step = Math.max(1, rows.length / limit);
  let seen = 0;
  let inside = 0;
  for (let k = 0; k < rows.length; k += step) {
    const i = rows[Math.floor(k)] * 3;
    const p = toScreen(m, positions[i], positions[i + 1], positions[i + 2], 1, 1);
    seen++;
    if (p && p[0] >= 0 && p[0] <= 1 && p[1] >= 0 && p[1] <= 1) inside++;
  }
  return inside / seen;
}

// TensorBoard's cameras look at the same [-1, 1] cube through other lenses (vz_projector's
// scatterPlot.ts): a 70-degree vertical field of view in 3D (ours is 45), an orthographic half
// extent of 1.2 in 2D (ours 1.15), and a three.js `zoom` that narrows either. A CameraDef is
// read so that the same part of the cloud fills the plot, not the same eye position.
const TB_FOV = (70 * Math.PI) / 180;
const TB_HALF_VIEW_2D = 1.2;
/** Our eye distance per unit of TensorBoard's for the same view. */
const TB_DISTANCE_SCALE = Math.tan(TB_FOV / 2) / Math.tan(FOV / 2);

/** TensorBoard's CameraDef of a camera, for bookmark files. */
export function toTensorBoardCamera(cam, threeD) {
  if (threeD) {
    const eye = eyePosition({ ...cam, distance: cam.distance / TB_DISTANCE_SCALE });
    return { orthographic: false, position: eye, target: cam.target.slice(), zoom: 1 };
  }
  const [x, y] = cam.target;
  return { orthographic: true, position: [x, y, 1], target: [x, y, 0], zoom: (cam.zoom * TB_HALF_VIEW_2D) / HALF_VIEW_2D };
}

/** A camera from TensorBoard's CameraDef that shows what TensorBoard shows; null when unusable. */
export function fromTensorBoardCamera(def) {
  const vec3 = (v) => Array.isArray(v) && v.length === 3 && v.every(Number.isFinite);
  if (!def || !vec3(def.position) || !vec3(def.target)) return null;
  const cam = defaultCamera();
  const tbZoom = Number.isFinite(def.zoom) && def.zoom > 0 ? def.zoom : 1;
  cam.target = def.target.slice();
  if (def.orthographic) {
    cam.zoom = (tbZoom * HALF_VIEW_2D) / TB_HALF_VIEW_2D;
    return cam;
  }
  const offset = def.position.map((p, i) => p - def.target[i]);
  const distance = Math.hypot(...offset);
  if (distance === 0) return cam;
  cam.distance = (distance * TB_DISTANCE_SCALE) / tbZoom;
  cam.phi = Math.acos(Math.max(-1, Math.min(1, offset[1] / distance)));
  cam.theta = Math.atan2(offset[0], offset[2]);
  return cam;
}
