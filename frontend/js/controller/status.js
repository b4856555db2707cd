// The status bar, the plot's message and progress card, and the theme the plot reads.

import { $, formatCount } from '../dom.js';
import { readTheme } from '../theme.js';

export class StatusDisplay {
  setMessage(text, error = false) {
    this.message = { text, error };
    this._renderStatus();
  }

  _showPlotMessage(text) {
    const box = $('plot-message');
    box.hidden = !text;
    box.textContent = text || '';
  }

  _renderStatus() {
    const ds = this.dataset;
    const shownCount = this.state.isolated ? this.state.isolated.length : null;
    $('status-points').textContent = ds
      ? `Points: ${formatCount(ds.n)}${shownCount !== null ? ` (showing ${formatCount(shownCount)})` : ''}`
      : 'Points: –';
    $('status-dimension').textContent = ds ? `Dimension: ${formatCount(ds.d)}` : 'Dimension: –';
    $('status-hover').textContent = this.hover >= 0 ? this.labelOf(this.hover) : '';
    const selected = this.state.selection.length;
    const nb = this.neighbors.length;
    $('status-selection').textContent = selected
      ? `Selected ${formatCount(selected)} point${selected === 1 ? '' : 's'}${nb ? ` + ${formatCount(nb)} neighbours` : ''}`
      : '';
    const message = $('status-message');
    message.textContent = this.message.text;
    message.classList.toggle('error', this.message.error);
  }

  _renderProgress() {
    const task = this.progress.top;
    const box = $('progress');
    box.hidden = !task;
    if (!task) return;
    $('progress-label').textContent = task.label;
    const fill = $('progress-fill');
    fill.classList.toggle('indeterminate', task.fraction === null);
    fill.style.width = task.fraction === null ? '' : `${Math.round(task.fraction * 100)}%`;
  }


  toggleTheme() {
    const root = document.documentElement;
    root.dataset.theme = root.dataset.theme === 'dark' ? 'light' : 'dark';
    try {
      localStorage.setItem('projector-theme', root.dataset.theme);
    } catch {
      // storage refused (the page is in another site's iframe): the theme is not remembered
    }
    this.plot.setTheme(readTheme());
  }
}
