// TensorBoard's "3D labels" mode and its sequences (polylines), hooked into the app with one
// call: the two render layers on the plot and their switches in the Data panel, kept in step
// with the state (`labels3d`, `sequences`: saved in the URL and in bookmarks). The sequence
// column is read once per data set; cells that do not name another point are skipped and
// the user is told once.

import { el, formatCount } from '../dom.js';
import { Labels3dLayer } from '../renderer/labels3d.js';
import { PolylineLayer } from '../renderer/polylines.js';
import { parseSequence, sequenceColumn, sequenceWarning } from '../sequences.js';

/** @param {import('../app.js').App} app */
export function installLabelsAndSequences(app) {
  const labels = new Labels3dLayer((i) => app.highlight.labelOf(i));
  const polylines = new PolylineLayer();
  app.plot.addLayer(polylines);
  app.plot.addLayer(labels);

  const id = (name) => ({ 'data-testid': name });
  const labelsToggle = el('input', { type: 'checkbox', ...id('labels3d-toggle') });
  const sequencesToggle = el('input', { type: 'checkbox', ...id('sequences-toggle') });
  const sequencesStatus = el('span', { class: 'hint', ...id('sequences-status') });
  const sequencesField = el('label', { class: 'check', ...id('sequences-field'), hidden: true }, sequencesToggle, ' Sequences ', sequencesStatus);
  const fields = el('div', id('labels-sequences-fields'),
    el('label', { class: 'check', title: 'Draw every point as its label (a sample of at most a few thousand for large sets)' },
      labelsToggle, ' 3D labels ', el('span', { class: 'hint' }, 'points drawn as their labels')),
    sequencesField);
  labelsToggle.addEventListener('change', () => app.update({ labels3d: labelsToggle.checked }));
  sequencesToggle.addEventListener('change', () => app.update({ sequences: sequencesToggle.checked }));
  const anchor = document.querySelector('[data-testid="sprites-field"]');
  if (anchor) anchor.after(fields);
  else document.querySelector('[data-testid="data-panel"]')?.append(fields);

  let sequenceFor = null; // the metadata the segments were read from
  let textsFor = null;

  /** Reads the sequence column of a newly shown data set (once; metadata may come later). */
  function readSequences(ds) {
    const metadata = ds?.metadata ?? null;
    if (metadata === sequenceFor) return;
    sequenceFor = metadata;
    const column = ds ? sequenceColumn(ds.columns) : null;
    if (!column) {
      polylines.setSegments(new Uint32Array(0));
      sequencesField.hidden = true;
      return;
    }
    const values = ds.values(column);
    if (!values) {
      sequenceFor = null; // still coming from the server: read again once it is here
      return;
    }
    const parsed = parseSequence(values, ds.n);
    polylines.setSegments(parsed.pairs);
    sequencesField.hidden = false;
    sequencesStatus.textContent = `${formatCount(parsed.pairs.length / 2)} links (${column})`;
    if (parsed.bad) app.setMessage(sequenceWarning(column, parsed), true);
  }

  const section = {
    render() {
      const { state, dataset: ds } = app;
      readSequences(ds);
      if (labels.enabled !== state.labels3d) labels.setEnabled(state.labels3d);
      if (polylines.enabled !== state.sequences) polylines.setEnabled(state.sequences);
      labelsToggle.checked = state.labels3d;
      sequencesToggle.checked = state.sequences;
      const texts = [ds, ds?.metadata, state.labelBy];
      if (!textsFor || texts.some((v, i) => v !== textsFor[i])) {
        textsFor = texts;
        labels.textsChanged();
      }
    },
  };
  app.panels.push(section);
  /** For tests: the layers (labels.drawn, polylines.drawnSegments). */
  /** @type {any} */ (window).__tbLabels = { labels, polylines };
  return { labels, polylines };
}
