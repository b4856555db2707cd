// Data panel: run and tensor pickers, label and colour columns with the legend, spherize,
// sprites, uploads and downloads.

import { gradientCss, rgbToCss } from '../colors.js';
import { $, el, formatCount, setOptions } from '../dom.js';
import { uploadFiles } from '../upload.js';

/** @param {import('../app.js').App} app */
export function createDataPanel(app) {
  const runSelect = $('run-select');
  const embeddingSelect = $('embedding-select');
  const labelBy = $('label-by');
  const colorBy = $('color-by');
  const categorical = $('categorical');
  const spherize = $('spherize');
  const sprites = $('show-sprites');
  const legend = $('legend');
  const uploadError = $('upload-error');
  let legendFor = null;

  runSelect.addEventListener('change', () => {
    const local = app.datasets.localDatasets.find((d) => d.run === runSelect.value);
    if (local) {
      app.update({ run: local.run, embedding: local.name });
      return;
    }
    const run = app.datasets.runs.find((r) => r.name === runSelect.value);
    const first = run?.embeddings.find((e) => e.shape && !e.error) ?? run?.embeddings[0];
    // A run with nothing readable is still asked for: the app refuses it and says why.
    if (run) app.update({ run: run.name, embedding: first?.name ?? null });
  });
  embeddingSelect.addEventListener('change', () => app.update({ embedding: embeddingSelect.value }));
  labelBy.addEventListener('change', () => app.update({ labelBy: labelBy.value || null }));
  colorBy.addEventListener('change', () => app.update({ colorBy: colorBy.value || null, categorical: null }));
  categorical.addEventListener('change', () => app.update({ categorical: categorical.checked }));
  spherize.addEventListener('change', () => app.update({ pca: { ...app.state.pca, spherize: spherize.checked } }));
  sprites.addEventListener('change', () => app.update({ sprites: sprites.checked }));
  $('download-csv').addEventListener('click', () => app.saving.downloadCoordinates(','));
  $('download-tsv').addEventListener('click', () => app.saving.downloadCoordinates('\t'));
  $('download-metadata').addEventListener('click', () => app.saving.downloadMetadata());
  $('upload-apply').addEventListener('click', async () => {
    const tensor = $('upload-tensor').files[0];
    const metadata = $('upload-metadata').files[0] ?? null;
    uploadError.hidden = true;
    if (!tensor) {
      uploadError.textContent = 'Choose a tensor file (TSV or .npy) first.';
      uploadError.hidden = false;
      return;
    }
    try {
      await uploadFiles(app, tensor, metadata);
    } catch (err) {
      uploadError.textContent = err.message;
      uploadError.hidden = false;
    }
  });

  function renderLegend() {
    const coloring = app.highlight.coloring;
    if (coloring === legendFor) return;
    legendFor = coloring;
    legend.hidden = !coloring?.legend;
    if (!coloring?.legend) {
      legend.replaceChildren();
      return;
    }
    const rows = [];
    if (coloring.kind === 'numeric') {
      const { min, max, missing } = coloring.legend;
      rows.push(el('div', { class: 'legend-gradient', style: { background: gradientCss() } }));
      rows.push(el('div', { class: 'legend-scale' }, el('span', {}, formatNumber(min)), el('span', {}, formatNumber(max))));
      if (missing) rows.push(legendRow('rgb(150, 150, 150)', '(missing)', missing));
    } else {
      const { items, otherCount, categories, missing } = coloring.legend;
      for (const item of items) rows.push(legendRow(rgbToCss(item.color), item.value, item.count));
      if (otherCount) rows.push(legendRow('transparent', `${categories - items.length} more values (colours repeat)`, otherCount));
      if (missing) rows.push(legendRow('rgb(150, 150, 150)', '(missing)', missing));
    }
    legend.replaceChildren(...rows);
  }

  function render() {
    const { state, dataset: ds } = app;
    const runOptions = app.datasets.runs.map((r) => ({ value: r.name, label: `${app.datasets.runLabel(r.name)}${r.error ? ' (error)' : ''}` }));
    for (const local of app.datasets.localDatasets) runOptions.push({ value: local.run, label: 'Uploaded files' });
    setOptions(runSelect, runOptions, state.run);
    const local = app.datasets.localDatasets.find((d) => d.run === state.run);
    const embeddings = local
      ? [{ value: local.name, label: `${local.name} (${formatCount(local.n)} × ${local.d})` }]
      : (app.datasets.runs.find((r) => r.name === state.run)?.embeddings ?? []).map((e) => ({
          value: e.name,
          label: e.shape ? `${e.name} (${formatCount(e.shape[0])} × ${e.shape[1]})` : `${e.name} (unreadable)`,
        }));
    setOptions(embeddingSelect, embeddings, state.embedding);

    const info = ds && !ds.local ? app.datasets.embeddingInfo(ds.run, ds.name) : null;
    const notes = [info?.error, ...(info?.warnings ?? [])].filter(Boolean);
    const warnings = $('dataset-warnings');
    warnings.hidden = notes.length === 0;
    warnings.textContent = notes.join(' · ');

    const columns = ds ? ds.columns : [];
    setOptions(labelBy, [{ value: '', label: '(index)' }, ...columns.map((c) => ({ value: c, label: c }))], state.labelBy ?? '');
    setOptions(colorBy, [{ value: '', label: '(none)' }, ...columns.map((c) => ({ value: c, label: c }))], state.colorBy ?? '');
    // Known from the whole column, or (tiles) from the server's counts of its values once here.
    const kind = app.highlight.columnKind(state.colorBy);
    const numeric = Boolean(kind?.numeric);
    $('categorical-field').hidden = !numeric;
    categorical.checked = numeric && (state.categorical ?? kind.categorical);
    spherize.checked = state.pca.spherize;
    $('sprites-field').hidden = !ds?.sprite;
    sprites.checked = state.sprites;
    renderLegend();
  }

  return { render };
}

function legendRow(color, value, count) {
  return el(
    'div',
    { class: 'legend-row', title: value },
    el('span', { class: 'legend-swatch', style: { background: color } }),
    el('span', { class: 'legend-value' }, value),
    el('span', { class: 'legend-count' }, formatCount(count)),
  );
}

function formatNumber(v) {
  if (v === null || v === undefined) return '–';
  return Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(2) : String(Number(v.toPrecision(4)));
}
