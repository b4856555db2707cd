// The small chart of the training steps panel: the mean neighbourhood change from each step
// to the next (1 - the mean share of each point's k nearest neighbours kept, GET
// /api/compare), so the step where the representation settles shows as the curve flattening.
// An SVG drawn from numbers only (no data string reaches it as markup).

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 240;
const HEIGHT = 56;
const PAD = 4;

function svgEl(tag, attributes) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  return node;
}

/**
 * Draws the chart into `svg`: one dot per step whose change is known (`changes[i]`: from step
 * i - 1 to step i, null: not measured yet), joined, the shown step `current` ringed.
 * @param {SVGSVGElement} svg
 * @param {Array<{ step: number, change: number | null }>} changes
 * @param {number} current  index of the step shown
 */
export function drawChangeChart(svg, changes, current) {
  svg.setAttribute('viewBox', `0 0 ${WIDTH} ${HEIGHT}`);
  const known = changes.map((c, i) => ({ ...c, i })).filter((c) => c.change !== null);
  const top = Math.max(1e-6, ...known.map((c) => c.change));
  const x = (i) => PAD + (changes.length > 1 ? (i / (changes.length - 1)) * (WIDTH - 2 * PAD) : (WIDTH - 2 * PAD) / 2);
  const y = (change) => HEIGHT - PAD - (change / top) * (HEIGHT - 2 * PAD);
  const parts = [svgEl('line', { class: 'change-axis', x1: PAD, y1: HEIGHT - PAD, x2: WIDTH - PAD, y2: HEIGHT - PAD })];
  if (known.length > 1) {
    parts.push(svgEl('polyline', { class: 'change-line', points: known.map((c) => `${x(c.i)},${y(c.change)}`).join(' ') }));
  }
  for (const c of known) {
    const dot = svgEl('circle', { class: c.i === current ? 'change-dot current' : 'change-dot', cx: x(c.i), cy: y(c.change), r: c.i === current ? 3.5 : 2.2, 'data-step': c.step, 'data-change': c.change });
    const title = document.createElementNS(SVG, 'title');
    title.textContent = `step ${c.step}: ${Math.round(c.change * 1000) / 10}% of neighbours changed`;
    dot.append(title);
    parts.push(dot);
  }
  if (current >= 0 && current < changes.length && changes[current].change === null) {
    parts.push(svgEl('line', { class: 'change-now', x1: x(current), y1: PAD, x2: x(current), y2: HEIGHT - PAD }));
  }
  svg.replaceChildren(...parts);
  return top;
}
