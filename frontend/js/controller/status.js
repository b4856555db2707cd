// The status bar, the plot's message and progress card, and the theme the plot reads: a part
// of the App (app.js).

import { $, el, formatCount } from '../dom.js';
import { flipTheme, readTheme } from '../theme.js';

export class StatusDisplay {
  /** @param {import('../app.js').App} app */
  constructor(app) {
    this.app = app;
    /** @type {{ text: string, error: boolean, dataset?: import('../dataset.js').Dataset | null, holds?: (() => boolean) | null }} the status line */
    this.message = { text: '', error: false };
    Object.seal(this);
  }

  /**
   * Shows a status message for as long as it is true: until the data set changes, and, with
   * `holds`, until that says the state it described is gone (a selection replaced, a
   * bookmark's view changed), so the bar never reports what is no longer on screen.
   */
  setMessage(text, error = false, { holds = null } = {}) {
    this.message = { text, error, dataset: this.app.dataset, holds };
    this.renderStatus();
  }

  /** The message, or none once what it describes has gone. */
  _currentMessage() {
    const m = this.message;
    if (m.text && (m.dataset !== this.app.dataset || (m.holds && !m.holds()))) this.message = { text: '', error: false };
    return this.message;
  }

  /** A message in the plot area instead of points (null: none). */
  showPlotMessage(text) {
    const box = $('plot-message');
    box.hidden = !text;
    box.textContent = text || '';
  }

  /**
   * A failure to open a data set, in the plot area over what stays shown (null removes it);
   * the user dismisses it, or the next data set that opens does.
   */
  showLoadFailure(text) {
    let box = document.querySelector('[data-testid="load-failure"]');
    if (!text) {
      box?.remove();
      return;
    }
    if (!box) {
      box = el('div', { class: 'load-failure', role: 'alert', dataset: { testid: 'load-failure' } },
        el('span', { class: 'load-failure-text' }),
        el('button', { type: 'button', class: 'icon-button', 'aria-label': 'Dismiss', title: 'Dismiss', onclick: () => box.remove() }, '×'));
      $('.plot-container').append(box);
    }
    box.querySelector('.load-failure-text').textContent = text;
  }

  renderStatus() {
    const { dataset: ds, state, highlight } = this.app;
    const shownCount = state.isolated ? state.isolated.length : null;
    $('status-points').textContent = ds
      ? `Points: ${formatCount(ds.n)}${shownCount !== null ? ` (showing ${formatCount(shownCount)})` : ''}`
      : 'Points: –';
    $('status-dimension').textContent = ds ? `Dimension: ${formatCount(ds.d)}` : 'Dimension: –';
    $('status-hover').textContent = highlight.hover >= 0 ? highlight.labelOf(highlight.hover) : '';
    const selected = highlight.selectedCount();
    const nb = highlight.neighbors.length;
    $('status-selection').textContent = selected
      ? `Selected ${formatCount(selected)} point${selected === 1 ? '' : 's'}${nb ? ` + ${formatCount(nb)} neighbours` : ''}`
      : '';
    const message = $('status-message');
    const { text, error } = this._currentMessage();
    message.textContent = text;
    message.classList.toggle('error', error);
  }

  renderProgress() {
    const task = this.app.progress.top;
    const box = $('progress');
    box.hidden = !task;
    if (!task) return;
    $('progress-label').textContent = task.label;
    const fill = $('progress-fill');
    fill.classList.toggle('indeterminate', task.fraction === null);
    fill.style.width = task.fraction === null ? '' : `${Math.round(task.fraction * 100)}%`;
  }

  toggleTheme() {
    flipTheme();
    this.app.plot.setTheme(readTheme());
  }
}
