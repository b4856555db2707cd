// Pictures of the plot: what is on screen, at full detail, at any scale. The PNG is the
// plot's own layers rendered once more into an off-screen framebuffer `scale` times the
// canvas's CSS size (every point, whatever the frame budget; point sizes and labels scaled as
// a screen of that pixel ratio would show them), read back, with the overlay canvases
// (labels, outlines) and a legend drawn over it. The SVG draws the same points as circles
// (for views up to SVG_LIMIT points: beyond, a file that size is no longer a drawing to edit).

import { toScreen } from '../camera.js';
import { gradientCss, MISSING_COLOR, rgbToCss } from '../colors.js';
import { DetailBuffer } from '../renderer/detail.js';
import { FLAG_FOCUS, FLAG_HIDDEN, FLAG_NEIGHBOR, FLAG_SELECTED } from '../renderer/points.js';

export const SVG_LIMIT = 100000;
const LEGEND_FONT = 12;
const LEGEND_ROWS = 12;

/** The largest side this GPU renders off screen. */
export function maxImageSide(gl) {
  const [vw, vh] = gl.getParameter(gl.MAX_VIEWPORT_DIMS);
  return Math.min(gl.getParameter(gl.MAX_RENDERBUFFER_SIZE), vw, vh);
}

/** The scale that gives an image `width` pixels wide (a chosen width), or `scale` itself. */
export function scaleFor(plot, { scale = 2, width = null } = {}) {
  return width ? width / Math.max(1, plot.canvas.clientWidth) : scale;
}

/**
 * The plot at `scale` times its CSS size as a 2D canvas: every point drawn, the top pass
 * (highlights, labels) over them, then `legend` (app.highlight.coloring's legend, titled) when given.
 */
export function renderPlotImage(plot, { scale = 2, legend = null } = {}) {
  const gl = plot.gl;
  const cssW = plot.canvas.clientWidth;
  const cssH = plot.canvas.clientHeight;
  const w = Math.round(cssW * scale);
  const h = Math.round(cssH * scale);
  const max = maxImageSide(gl);
  if (w > max || h > max || w < 1 || h < 1) throw new Error(`an image of ${w} x ${h} px: this GPU renders at most ${max} px a side`);
  const dpr = plot.dpr || 1;
  const buffer = new DetailBuffer(gl);
  const pixels = new Uint8Array(w * h * 4);
  try {
    plot.dpr = scale;
    for (const layer of plot.layers) layer.onResize(cssW, cssH, scale);
    buffer.bind(w, h);
    plot.frames.clear();
    const view = plot.frames.view();
    Object.assign(view, { start: 0, count: plot.n, sampled: false, sampleSize: 1, elements: null });
    plot.frames.renderLayers(view, 'base');
    plot.frames.renderLayers(view, 'top');
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
  } finally {
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    buffer.dispose();
    plot.dpr = dpr;
  }
  const out = document.createElement('canvas');
  out.width = w;
  out.height = h;
  const ctx = out.getContext('2d');
  const image = new ImageData(w, h);
  for (let y = 0; y < h; y++) image.data.set(pixels.subarray((h - 1 - y) * w * 4, (h - y) * w * 4), y * w * 4);
  for (let i = 3; i < image.data.length; i += 4) image.data[i] = 255;
  ctx.putImageData(image, 0, 0);
  for (const canvas of overlays(plot)) ctx.drawImage(canvas, 0, 0, w, h);
  for (const layer of plot.layers) layer.onResize(cssW, cssH, dpr);
  plot._changed({ moving: false });
  if (legend) drawLegend(ctx, legend, scale, plot.theme);
  return out;
}

function overlays(plot) {
  return [...plot.container.querySelectorAll('canvas')].filter((c) => c !== plot.canvas && c.width && c.height && !c.hidden);
}

/** Legend rows: [{ color: css, text }] of a categorical colouring, or a numeric scale. */
function legendRows(legend) {
  const { coloring } = legend;
  const l = coloring.legend;
  if (coloring.kind === 'categorical') {
    // The LEGEND_ROWS most frequent of the named categories, in the legend's order (by value).
    const kept = new Set([...l.items].sort((a, b) => b.count - a.count).slice(0, LEGEND_ROWS));
    const rows = l.items.filter((item) => kept.has(item)).map((item) => ({ color: rgbToCss(item.color), text: `${item.value}` }));
    const rest = l.categories - rows.length;
    if (rest > 0) rows.push({ color: null, text: `+ ${rest} more` });
    if (l.missing) rows.push({ color: rgbToCss(MISSING_COLOR), text: '(missing)' });
    return rows;
  }
  return null;
}

function drawLegend(ctx, legend, scale, theme) {
  const rows = legendRows(legend);
  const font = LEGEND_FONT * scale;
  const pad = 8 * scale;
  const line = font * 1.5;
  ctx.save();
  ctx.font = `500 ${font}px system-ui, sans-serif`;
  ctx.textBaseline = 'middle';
  const texts = [legend.title, ...(rows ?? [{ text: fmt(legend.coloring.legend.min) }, { text: fmt(legend.coloring.legend.max) }]).map((r) => r.text)];
  const textWidth = Math.max(...texts.map((t) => ctx.measureText(t).width));
  const boxW = Math.min(ctx.canvas.width / 2, textWidth + line + pad * 2);
  const boxH = pad * 2 + line * (1 + (rows ? rows.length : 1.6));
  const x0 = ctx.canvas.width - boxW - pad;
  const y0 = pad;
  ctx.fillStyle = theme.labelBackground || 'rgba(255,255,255,0.85)';
  ctx.strokeStyle = theme.labelBorder || '#888';
  ctx.lineWidth = scale;
  ctx.beginPath();
  ctx.roundRect(x0, y0, boxW, boxH, 4 * scale);
  ctx.fill();
  ctx.stroke();
  ctx.fillStyle = theme.labelText || '#222';
  ctx.fillText(legend.title, x0 + pad, y0 + pad + line / 2, boxW - pad * 2);
  if (rows) {
    rows.forEach((row, i) => {
      const cy = y0 + pad + line * (i + 1.5);
      if (row.color) {
        ctx.fillStyle = row.color;
        ctx.beginPath();
        ctx.arc(x0 + pad + font / 2, cy, font * 0.38, 0, Math.PI * 2);
        ctx.fill();
      }
      ctx.fillStyle = theme.labelText || '#222';
      ctx.fillText(row.text, x0 + pad + line, cy, boxW - pad * 2 - line);
    });
  } else {
    const barY = y0 + pad + line * 1.1;
    const gradient = ctx.createLinearGradient(x0 + pad, 0, x0 + boxW - pad, 0);
    gradientStops(gradient);
    ctx.fillStyle = gradient;
    ctx.fillRect(x0 + pad, barY, boxW - pad * 2, font * 0.7);
    ctx.fillStyle = theme.labelText || '#222';
    const ty = barY + font * 0.7 + line / 2;
    ctx.fillText(fmt(legend.coloring.legend.min), x0 + pad, ty);
    ctx.textAlign = 'right';
    ctx.fillText(fmt(legend.coloring.legend.max), x0 + boxW - pad, ty);
  }
  ctx.restore();
}

function gradientStops(gradient) {
  const colors = /linear-gradient\([^,]+,(.*)\)$/.exec(gradientCss())?.[1].split(/,(?![^(]*\))/) ?? [];
  colors.forEach((c, i) => gradient.addColorStop(i / Math.max(1, colors.length - 1), c.trim().split(' ')[0]));
}

function fmt(value) {
  return value === null || value === undefined ? '–' : Number(value).toPrecision(4).replace(/\.?0+$/, '');
}

const css = (rgb) => `rgb(${rgb.map((c) => Math.round(c * 255)).join(',')})`;

/**
 * The plot as SVG text at its CSS size: each drawn point a circle (coloured and sized as the
 * point shader does: highlighted larger, the rest dimmed under a selection; far first in
 * 3D), the labels overlay as an image, the legend as text. Throws above SVG_LIMIT points.
 */
export function plotSvg(plot, { legend = null } = {}) {
  const w = plot.canvas.clientWidth;
  const h = plot.canvas.clientHeight;
  const view = plot.frames.view();
  const matrix = view.matrix;
  const shown = [];
  for (let i = 0; i < plot.n; i++) if (!(plot.flags[i] & FLAG_HIDDEN)) shown.push(i);
  if (shown.length > SVG_LIMIT) throw new Error(`SVG is for views of up to ${SVG_LIMIT.toLocaleString('en-US')} points; this one draws ${shown.length.toLocaleString('en-US')}: save a PNG`);
  const scale = view.scale / (plot.dpr || 1);
  const theme = plot.theme;
  const colors = plot.points.colors;
  const items = [];
  for (const i of shown) {
    const p = plot.positions;
    const s = toScreen(matrix, p[i * 3], p[i * 3 + 1], p[i * 3 + 2], w, h);
    if (!s) continue;
    const f = plot.flags[i];
    const highlighted = f & (FLAG_SELECTED | FLAG_NEIGHBOR);
    const depth = view.threeD ? clipW(matrix, p, i) : highlighted ? -1 : 0;
    let size = plot.size * (view.threeD ? scale / depth : scale);
    if (highlighted) size *= 1.4;
    if (f & FLAG_FOCUS) size *= 1.5;
    size = Math.min(160, Math.max(1.5, size));
    const fill = plot.hasSelection && !highlighted
      ? css(theme.dim.slice(0, 3))
      : plot.plain && (f & FLAG_SELECTED) ? css(theme.selected) : `rgb(${colors[i * 4]},${colors[i * 4 + 1]},${colors[i * 4 + 2]})`;
    const opacity = plot.hasSelection && !highlighted ? theme.dim[3] : 1;
    items.push({ depth, svg: `<circle cx="${s[0].toFixed(2)}" cy="${s[1].toFixed(2)}" r="${(size / 2).toFixed(2)}" fill="${fill}"${opacity < 1 ? ` fill-opacity="${opacity.toFixed(3)}"` : ''}/>` });
  }
  items.sort((a, b) => b.depth - a.depth);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">`,
    `<rect width="100%" height="100%" fill="${css(theme.background)}"/>`,
    `<g>${items.map((it) => it.svg).join('')}</g>`,
  ];
  const labels = overlays(plot).map((c) => `<image width="${w}" height="${h}" href="${c.toDataURL('image/png')}"/>`);
  parts.push(...labels);
  if (legend) parts.push(svgLegend(legend, w, theme));
  parts.push('</svg>');
  return parts.join('\n');
}

function clipW(m, p, i) {
  return m[3] * p[i * 3] + m[7] * p[i * 3 + 1] + m[11] * p[i * 3 + 2] + m[15];
}

const escapeXml = (text) => String(text).replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

function svgLegend(legend, width, theme) {
  const rows = legendRows(legend) ?? [{ color: null, text: `${fmt(legend.coloring.legend.min)} – ${fmt(legend.coloring.legend.max)}` }];
  const line = LEGEND_FONT * 1.5;
  const boxW = 180;
  const x0 = width - boxW - 8;
  const out = [`<g font-family="system-ui, sans-serif" font-size="${LEGEND_FONT}" fill="${escapeXml(theme.labelText || '#222')}">`,
    `<rect x="${x0}" y="8" width="${boxW}" height="${16 + line * (rows.length + 1)}" rx="4" fill="${escapeXml(theme.labelBackground || '#fff')}" stroke="${escapeXml(theme.labelBorder || '#888')}"/>`,
    `<text x="${x0 + 8}" y="${16 + line / 2}" dominant-baseline="middle">${escapeXml(legend.title)}</text>`];
  rows.forEach((row, i) => {
    const cy = 16 + line * (i + 1.5);
    if (row.color) out.push(`<circle cx="${x0 + 8 + LEGEND_FONT / 2}" cy="${cy}" r="${LEGEND_FONT * 0.38}" fill="${row.color}"/>`);
    out.push(`<text x="${x0 + 8 + line}" y="${cy}" dominant-baseline="middle">${escapeXml(row.text)}</text>`);
  });
  out.push('</g>');
  return out.join('');
}
