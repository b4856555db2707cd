// Hooks training steps into the page with one call: the Training steps panel (left column,
// under Data; shown while the open embedding is a step of a training run), its style sheet,
// and the `step` events that drive Follow. Uses only the app's public members.

import { changeGradientCss } from '../compare/linked.js';
import { el } from '../dom.js';
import { drawChangeChart } from './change_chart.js';
import { TrainingSteps } from './following.js';

/** @param {import('../app.js').App} app */
export function installTraining(app) {
  if (!app.events) return null; // a shared site is not being written
  const sheet = document.createElement('link');
  sheet.rel = 'stylesheet';
  sheet.href = new URL('../../css/training.css', import.meta.url).href;
  document.head.append(sheet);
  const steps = new TrainingSteps(app);
  const panel = createStepsPanel(app, steps);
  document.querySelector('[data-testid="data-panel"]')?.after(panel.element);
  app.panels.push(panel);
  steps.changed = () => panel.render();
  app.events.subscribe('step', (data) => steps.heard(data));
  // The change colours are drawn for the theme on screen.
  new MutationObserver(() => {
    panel.themeChanged();
    steps.themeChanged();
  }).observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
  /** For tests and bench/: the steps followed and what is shown of them. */
  /** @type {any} */ (window).__training = {
    steps,
    shown: () => ({
      embedding: app.dataset?.name ?? null,
      step: steps.steps[steps.current]?.step ?? null,
      follow: steps.follow,
      steps: steps.steps.map((s) => s.step),
      change: steps.change ? { embedding: steps.change.embedding, before: steps.change.before, perPoint: steps.change.perPoint } : null,
      projection: app.shown ? { method: app.shown.method, status: app.shown.status, jobId: app.shown.jobId, params: app.shown.params } : null,
    }),
  };
  return { steps, panel };
}

/**
 * @param {import('../app.js').App} app
 * @param {TrainingSteps} steps
 */
function createStepsPanel(app, steps) {
  const id = (name) => ({ 'data-testid': name });
  const follow = el('input', { type: 'checkbox', ...id('step-follow') });
  const byChange = el('input', { type: 'checkbox', checked: true, ...id('step-color-by-change') });
  const slider = el('input', { type: 'range', min: '0', max: '0', step: '1', 'aria-label': 'Training step', ...id('step-slider') });
  const play = el('button', { type: 'button', class: 'button', ...id('step-play') }, 'Play');
  const label = el('span', { class: 'stat', ...id('step-label') });
  const bar = el('div', { class: 'change-bar' });
  const legend = el('div', { class: 'change-legend', ...id('step-change-legend') },
    bar, el('div', { class: 'change-ends' }, el('span', {}, 'neighbours kept'), el('span', {}, 'changed')));
  const chart = /** @type {SVGSVGElement} */ (document.createElementNS('http://www.w3.org/2000/svg', 'svg'));
  chart.setAttribute('class', 'change-chart');
  chart.setAttribute('data-testid', 'step-change-chart');
  chart.setAttribute('role', 'img');
  const chartTitle = el('div', { class: 'change-chart-title', ...id('step-chart-title') });
  const status = el('p', { class: 'stat', ...id('step-status') });
  const element = el('section', { class: 'panel', ...id('steps-panel'), 'aria-label': 'Training steps', hidden: true },
    el('div', { class: 'panel-title-row' }, el('h2', { class: 'panel-title' }, 'Training steps'),
      el('label', { class: 'check', title: 'Show each new step as the training writes it' }, follow, ' Follow')),
    el('div', { class: 'step-row' }, play, slider),
    label,
    el('label', { class: 'check' }, byChange, ' Colour by change since the step before'),
    legend,
    chartTitle,
    chart,
    status);

  follow.addEventListener('change', () => steps.setFollow(follow.checked));
  byChange.addEventListener('change', () => steps.setColorByChange(byChange.checked));
  slider.addEventListener('input', () => steps.scrubTo(Number(slider.value)));
  play.addEventListener('click', () => steps.togglePlay());

  function themeChanged() {
    bar.style.background = changeGradientCss(document.documentElement.dataset.theme === 'dark');
  }
  themeChanged();

  let drawn = '';
  function render() {
    steps.sync();
    element.hidden = steps.run === null;
    if (element.hidden) return;
    const current = steps.current;
    slider.max = String(Math.max(0, steps.steps.length - 1));
    slider.value = String(Math.max(0, current));
    slider.disabled = steps.steps.length < 2;
    play.textContent = steps.playing ? 'Pause' : 'Play';
    play.disabled = steps.steps.length < 2;
    follow.checked = steps.follow;
    byChange.checked = steps.colorByChange;
    legend.hidden = !steps.colorByChange;
    label.textContent = steps.label();
    const points = steps.chart();
    const key = JSON.stringify([points, current]);
    if (key !== drawn) {
      drawn = key;
      const top = drawChangeChart(chart, points, current);
      const measured = points.filter((p) => p.change !== null).length;
      chartTitle.textContent = measured ? `Neighbours changed per step (top: ${Math.round(top * 1000) / 10}%)` : 'Neighbours changed per step: measuring…';
    }
    const p = app.shown;
    status.textContent = steps.changeError ? `Change: ${steps.changeError}`
      : steps.follow && current === steps.steps.length - 1 && (!p || !p.running) ? 'Following: the next step shows when it is written.' : '';
  }

  return { element, render, themeChanged };
}
