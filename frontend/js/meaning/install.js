// Search by meaning and by example in the page, hooked in with one call: the Inspector's
// search box gets a "Meaning" mode when the embedding has a model (/api/runs `model`): a
// phrase typed there is searched on the server as it is typed, Enter keeps it (each kept
// phrase has its colour and its pin on the map, all searched together); "More like these"
// beside the selection's actions asks the neighbours of its centroid, for any embedding.
// The answers are listed with their similarities (MeaningSearch in search.js asks and
// selects; MarkerLayer in markers.js draws the pins). Uses the app's public members only.

import { el, formatCount } from '../dom.js';
import { MarkerLayer } from './markers.js';
import { MeaningSearch, phraseColor, phrasesOf } from './search.js';

const LISTED = 20; // points listed per phrase; the rest are highlighted only

/** @param {import('../app.js').App} app */
export function installMeaning(app) {
  const sheet = el('link', { rel: 'stylesheet', href: new URL('../../css/meaning.css', import.meta.url).href });
  document.head.append(sheet);
  const search = new MeaningSearch(app);
  const layer = new MarkerLayer(() => search.markers());
  app.plot.addLayer(layer, { moving: false });
  const view = meaningControls(app, search);
  app.panels.push(view);
  /** For tests and bench/: the answers, the pins drawn and the page's timings. */
  /** @type {any} */ (window).__meaning = { search, layer };
  return { search, layer };
}

/** The controls in the Inspector, and the panel's render (state -> DOM, and the question asked). */
function meaningControls(app, search) {
  const inspector = document.querySelector('[data-testid="inspector-panel"]');
  const labelRow = inspector.querySelector('.search-row');
  const setMeaning = (patch, { select = true } = {}) => {
    search.selectNext = select;
    app.update({ meaning: { ...app.state.meaning, ...patch } });
  };

  const modeButton = (on, text, title) => el('button', { type: 'button', 'aria-pressed': 'false', title, dataset: { mode: on ? 'meaning' : 'label' }, onclick: () => setMeaning({ on }) }, text);
  const labelMode = modeButton(false, 'Label', 'Search the metadata column for text');
  const meaningMode = modeButton(true, 'Meaning', 'Search by meaning: the phrase is embedded by the model that made the vectors');
  const mode = el('div', { class: 'search-mode', role: 'group', 'aria-label': 'Search by', 'data-testid': 'search-mode', hidden: true }, labelMode, meaningMode);
  const input = el('input', { type: 'search', 'data-testid': 'meaning-input', 'aria-label': 'Search by meaning', placeholder: 'A phrase: Enter keeps it', maxlength: '1000', autocomplete: 'off' });
  const k = el('input', { type: 'number', min: '1', max: '1000', step: '1', 'data-testid': 'meaning-k', 'aria-label': 'Points per phrase', title: 'Points listed and highlighted per phrase' });
  const row = el('div', { class: 'meaning-row', 'data-testid': 'meaning-row', hidden: true }, input, k);
  const chips = el('ul', { class: 'meaning-phrases', 'data-testid': 'meaning-phrases', 'aria-label': 'Phrases kept' });
  const status = el('p', { class: 'meaning-status', 'data-testid': 'meaning-status', role: 'status' });
  const results = el('div', { class: 'meaning-results', 'data-testid': 'meaning-results' });
  labelRow.before(mode);
  labelRow.after(row, chips, status);
  inspector.querySelector('[data-testid="search-results"]').after(results);
  const more = el('button', { type: 'button', class: 'button', 'data-testid': 'more-like-these', disabled: true, title: 'The points nearest to the centroid of the selection, in the original space', onclick: () => search.moreLikeThese() }, 'More like these');
  inspector.querySelector('.selection-actions').append(more);

  input.addEventListener('input', () => setMeaning({ query: input.value }));
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      const phrase = input.value.trim();
      if (phrase) setMeaning({ phrases: phrasesOf({ phrases: [...app.state.meaning.phrases, phrase], query: '' }), query: '' });
    } else if (event.key === 'Escape' && input.value) {
      event.stopPropagation();
      setMeaning({ query: '' });
    }
  });
  k.addEventListener('change', () => {
    const wanted = Number(k.value);
    if (Number.isInteger(wanted) && wanted >= 1) setMeaning({ k: wanted });
    else k.value = String(app.state.meaning.k);
  });

  let listed = null;
  function render() {
    search.changed();
    const model = search.model();
    const on = Boolean(model) && app.state.meaning.on;
    mode.hidden = !model;
    row.hidden = !on;
    inspector.classList.toggle('meaning-on', on);
    labelMode.setAttribute('aria-pressed', String(!on));
    meaningMode.setAttribute('aria-pressed', String(on));
    const { meaning } = app.state;
    if (input.value !== meaning.query && document.activeElement !== input) input.value = meaning.query;
    if (document.activeElement !== k) k.value = String(search.k() || meaning.k);
    input.disabled = app.api.isStatic;
    renderChips(on ? meaning.phrases : []);
    status.className = `meaning-status${search.error ? ' error' : ''}`;
    status.textContent = on ? statusText(app, search, model) : '';
    more.disabled = !app.state.selection.length;
    const answers = [search.examples, on ? search.answer : null];
    if (listed && answers.every((a, i) => a === listed.answers[i]) && listed.labelBy === app.state.labelBy) return;
    listed = { answers, labelBy: app.state.labelBy };
    results.replaceChildren(...answers.flatMap((answer, i) => (answer ? groupsOf(app, search, answer, i === 0) : [])));
  }

  function renderChips(phrases) {
    const key = JSON.stringify(phrases);
    if (chips.dataset.key === key) return;
    chips.dataset.key = key;
    chips.replaceChildren(...phrases.map((text, i) => {
      const remove = el('button', { type: 'button', 'aria-label': `Remove “${text}”`, title: 'Remove', onclick: () => setMeaning({ phrases: app.state.meaning.phrases.filter((p) => p !== text) }) }, '×');
      const chip = el('li', { title: text }, el('span', {}, text), remove);
      chip.style.setProperty('--phrase', phraseColor(i));
      return chip;
    }));
  }

  function hovered(i) {
    for (const node of results.querySelectorAll('li.hovered')) node.classList.remove('hovered');
    if (i >= 0) for (const node of results.querySelectorAll(`li[data-index="${i}"]`)) node.classList.add('hovered');
  }

  return { render, hovered };
}

/** What the status line says in meaning mode: loading, an error, or what answered. */
function statusText(app, search, model) {
  if (app.api.isStatic) return `Phrases are embedded by ${model.name}, which runs on a Projector server: this shared site has no model. Select points and use “More like these”: it works here, from the exported neighbour lists.`;
  if (search.loading) return `Loading the model ${model.name}: ${Math.round(100 * search.loading.progress)}%. The phrases are searched once it is ready.`;
  if (search.error) return search.error;
  if (model.status === 'failed' && !search.answer) return `The model ${model.name} cannot search: ${model.error}`;
  if (search.answer) return search.answer.note;
  return phrasesOf(app.state.meaning).length ? '' : `Phrases are embedded by ${model.name}, the model that made these vectors.`;
}

/** An answer's groups: each phrase (or the examples) with its points and their similarity. */
function groupsOf(app, search, answer, dismissable) {
  if (!answer.groups.length) return [el('p', { class: 'meaning-status error' }, answer.note)];
  return answer.groups.map((group) => {
    const close = dismissable ? el('button', { type: 'button', class: 'link-button', 'aria-label': 'Close this list', onclick: () => search.dismiss() }, 'Close') : null;
    const title = el('div', { class: 'meaning-group-title' }, el('span', { title: group.text }, group.text), close);
    const shown = group.neighbors.slice(0, LISTED);
    const rest = group.neighbors.length - shown.length;
    const node = el(
      'div',
      { class: 'meaning-group', 'data-testid': 'meaning-group', dataset: { text: group.text } },
      title,
      el('ol', { class: 'neighbor-list no-thumbs' }, ...shown.map((n) => pointRow(app, n))),
      rest > 0 ? el('p', { class: 'hint' }, `and ${formatCount(rest)} more, highlighted`) : null,
      dismissable ? el('p', { class: 'hint' }, answer.note) : null,
    );
    node.style.setProperty('--phrase', group.color);
    return node;
  });
}

/** One listed point: its label, a bar and its similarity (or distance); hover and click as the Inspector's. */
function pointRow(app, found) {
  const { index, similarity, distance } = found;
  const value = similarity ?? distance;
  const width = similarity !== null ? Math.max(0, Math.min(1, similarity)) : 1 / (1 + distance);
  const label = app.highlight.labelOf(index);
  return el(
    'li',
    {
      class: 'no-thumb',
      tabindex: '0',
      dataset: { index },
      title: similarity !== null ? `similarity ${similarity.toFixed(3)}` : `distance ${distance.toFixed(3)}`,
      onclick: () => app.highlight.selectPoint(index),
      onmouseenter: () => app.highlight.hoverPoint(index),
      onmouseleave: () => app.highlight.hoverPoint(-1),
      onkeydown: (event) => {
        if (event.key === 'Enter' || event.key === ' ') {
          event.preventDefault();
          app.highlight.selectPoint(index);
        }
      },
    },
    el('span', { class: 'row-label' }, label),
    el('div', { class: 'distance-bar' }, el('div', { style: { width: `${width * 100}%` } })),
    el('span', { class: 'row-distance' }, value.toFixed(3)),
  );
}
