// The plot's colours, read from the page's CSS theme variables (light or dark), so the
// WebGL plot and the rest of the page always agree; every page with a plot reads it here.

import { hexToRgb } from './colors.js';

/** Switches the page between light and dark, remembered for the next visit; true when dark. */
export function flipTheme() {
  const root = document.documentElement;
  root.dataset.theme = root.dataset.theme === 'dark' ? 'light' : 'dark';
  try {
    localStorage.setItem('projector-theme', root.dataset.theme);
  } catch {
    // storage refused (the page is in another site's iframe): the theme is not remembered
  }
  return root.dataset.theme === 'dark';
}

/** The plot's colours from the CSS theme variables. */
export function readTheme() {
  const css = getComputedStyle(document.documentElement);
  const value = (name) => css.getPropertyValue(name).trim();
  const rgb = (name) => hexToRgb(value(name)).map((c) => c / 255);
  const rgba = (name) => {
    const m = /rgba?\(([^)]+)\)/.exec(value(name));
    const parts = m ? m[1].split(',').map((s) => Number(s.trim())) : [200, 200, 200, 0.5];
    return [parts[0] / 255, parts[1] / 255, parts[2] / 255, parts[3] ?? 1];
  };
  return {
    background: rgb('--plot-bg'),
    dim: rgba('--plot-dim'),
    selected: rgb('--plot-selected'),
    hovered: rgb('--plot-hovered'),
    ring: rgb('--plot-ring'),
    text: rgb('--text'),
    labelBackground: value('--label-bg'),
    labelText: value('--label-text'),
    labelStrongBackground: value('--label-strong-bg'),
    labelStrongText: value('--label-strong-text'),
    labelBorder: value('--label-border'),
    region: value('--region'),
    regionFill: value('--region-fill'),
  };
}
