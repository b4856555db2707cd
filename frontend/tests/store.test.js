// The App's, its parts', the Plot's and a Projection's fields are declared in one place each:
// their constructors (store.js says why). Read from the sources, every field any module
// writes on them must be one of those, and a part writes only its own fields: never the
// App's (its state included) nor another part's.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Highlighting } from '../js/controller/highlighting.js';
import { DatasetLoading } from '../js/controller/loading.js';
import { Projecting } from '../js/controller/projecting.js';
import { Saving } from '../js/controller/saving.js';
import { StatusDisplay } from '../js/controller/status.js';
import { Projection } from '../js/projection/projection.js';

const JS = join(dirname(fileURLToPath(import.meta.url)), '..', 'js');
const ASSIGN = String.raw`\s*(?:=(?!=)|\?\?=|\|\|=|&&=|\+=|-=|\+\+|--)`;

/** A source without its comments (a field named in prose is not a field written). */
function code(path) {
  return readFileSync(path, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .map((line) => line.replace(/^\s*\/\/.*$/, ''))
    .join('\n');
}

function allSources(dir = JS) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return allSources(path);
    return entry.name.endsWith('.js') ? [path] : [];
  });
}

/**
 * Names written as `<prefix>NAME = ...` (or ??=, +=, ++ ...) in `text`, and the keys of
 * `Object.assign(<prefix without its dot>, { NAME: ..., NAME2 })`.
 */
function writes(text, prefix) {
  const found = [];
  const esc = prefix.replace(/[.$]/g, (c) => `\\${c}`);
  for (const re of [new RegExp(String.raw`(?<![\w$])${esc}([A-Za-z_$][\w$]*)${ASSIGN}`, 'g'), new RegExp(String.raw`(?:\+\+|--)${esc}([A-Za-z_$][\w$]*)`, 'g')]) {
    for (const m of text.matchAll(re)) found.push(m[1]);
  }
  const target = esc.replace(/\\\.$/, '');
  for (const m of text.matchAll(new RegExp(String.raw`Object\.assign\(\s*${target}\s*,\s*\{`, 'g'))) {
    found.push(...objectKeys(text, m.index + m[0].length));
  }
  return found;
}

/** The keys of the object literal whose body starts at `from` (just past its `{`). */
function objectKeys(text, from) {
  const keys = [];
  let depth = 0;
  let start = from;
  for (let i = from; i < text.length && depth >= 0; i++) {
    const c = text[i];
    if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    if ((c === ',' && depth === 0) || depth < 0) {
      const key = /^\s*([A-Za-z_$][\w$]*)/.exec(text.slice(start, i));
      if (key) keys.push(key[1]);
      start = i + 1;
    }
  }
  return keys;
}

/** The body of a class's constructor in `text`. */
function constructorBody(text, className) {
  const start = text.indexOf('constructor(', text.indexOf(`class ${className}`));
  let depth = 0;
  let open = start + 'constructor'.length; // past its parameters (a default may hold braces)
  do {
    if (text[open] === '(') depth++;
    else if (text[open] === ')') depth--;
    open++;
  } while (depth > 0);
  for (let i = text.indexOf('{', open); i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return text.slice(start, i);
  }
  throw new Error(`no constructor in class ${className}`);
}

/** The App's parts: the name it holds each by, its file, its class. */
const PARTS = [
  ['datasets', join('controller', 'loading.js'), 'DatasetLoading', DatasetLoading],
  ['projecting', join('controller', 'projecting.js'), 'Projecting', Projecting],
  ['highlight', join('controller', 'highlighting.js'), 'Highlighting', Highlighting],
  ['saving', join('controller', 'saving.js'), 'Saving', Saving],
  ['status', join('controller', 'status.js'), 'StatusDisplay', StatusDisplay],
];

/** The fields a class's constructor declares (`this.NAME = ...`). */
function declaredBy(file, className) {
  return new Set(writes(constructorBody(code(join(JS, file)), className), 'this.'));
}

/** Every write of a field not declared: `this.` in the class's own file, `<names>.` anywhere. */
function undeclared(file, declared, names) {
  const wrong = [];
  for (const path of allSources()) {
    const rel = relative(JS, path);
    const text = code(path);
    for (const prefix of rel === file ? ['this.', ...names] : names) {
      for (const field of writes(text, prefix)) if (!declared.has(field)) wrong.push(`${rel}: ${prefix}${field}`);
    }
  }
  return wrong;
}

test('every field written on the App is one its constructor declares, and only the App writes them', () => {
  const declared = declaredBy('app.js', 'App');
  for (const field of ['state', 'plot', 'panels', 'datasets', 'highlight']) assert.ok(declared.has(field), field);
  assert.deepEqual(undeclared('app.js', declared, ['app.']), []);
  const outside = [];
  for (const path of allSources()) {
    const rel = relative(JS, path);
    if (rel === 'app.js') continue;
    for (const field of [...writes(code(path), 'app.'), ...writes(code(path), 'this.app.')]) outside.push(`${rel}: app.${field}`);
  }
  assert.deepEqual(outside, []); // the state included: app.update() and app.replaceState() write it
});

test("each part of the App declares its fields, is sealed, and no other module writes them", () => {
  for (const [name, file, className, Part] of PARTS) {
    const declared = declaredBy(file, className);
    assert.ok(declared.has('app'), `${className} holds the app`);
    assert.deepEqual(undeclared(file, declared, []), [], className);
    const outside = [];
    for (const path of allSources()) {
      const rel = relative(JS, path);
      if (rel === file) continue;
      for (const prefix of [`app.${name}.`, `this.app.${name}.`, `this.${name}.`]) {
        for (const field of writes(code(path), prefix)) outside.push(`${rel}: ${prefix}${field}`);
      }
    }
    assert.deepEqual(outside, [], `${className}'s fields are its own`);
    const part = new Part({});
    assert.deepEqual(new Set(Object.keys(part)), declared, className);
    assert.ok(Object.isSealed(part), className);
  }
});

test('every field written on the Plot is one its constructor declares', () => {
  const declared = declaredBy('plot.js', 'Plot');
  for (const field of ['source', 'coloring', 'marks', 'frames', 'detailed', 'drawn', 'cpuStep']) assert.ok(declared.has(field), field);
  assert.deepEqual(undeclared('plot.js', declared, ['plot.', 'app.plot.', 'this.plot.', 'view.plot.']), []);
  const frames = declaredBy('plot_frames.js', 'PlotFrames');
  for (const field of ['budget', 'requested', 'firstFrameMs']) assert.ok(frames.has(field), field);
  assert.deepEqual(undeclared('plot_frames.js', frames, ['plot.frames.', 'app.plot.frames.', 'this.plot.frames.', 'view.plot.frames.']), []);
});

test('every field written on a Projection is one its constructor declares, and no other can be', () => {
  const file = join('projection', 'projection.js');
  const declared = declaredBy(file, 'Projection');
  for (const field of ['status', 'data', 'source', 'delivery', 'previewLoad', 'previewInOrder', 'displayedOnce', 'lodPending', 'slicing']) assert.ok(declared.has(field), field);
  assert.deepEqual(undeclared(file, declared, ['p.', 'projection.', 'shown.', 'old.']), []);
  const p = new Projection('pca', {}, 2);
  assert.deepEqual(new Set(Object.keys(p)), declared);
  p.displayedOnce = true;
  assert.throws(() => {
    p.drawnOnce = true; // a field outside the declared shape: the projection is sealed
  }, TypeError);
  assert.equal('drawnOnce' in p, false);
});

test('the check finds a field written ad hoc', () => {
  assert.deepEqual(writes('this.a = 1; this.b == 2; ++this.c; this.d ??= 3; app.e = f;', 'this.'), ['a', 'd', 'c']);
  assert.deepEqual(writes('app.e = f; app.g(); x.app.h === 1', 'app.'), ['e']);
  assert.deepEqual(writes('Object.assign(p, { a: f(1, 2), b, c: { d: 1 } }); Object.assign(q, { e: 1 })', 'p.'), ['a', 'b', 'c']);
  assert.deepEqual(writes('p.shown.x = 1; shown.y = 2', 'shown.'), ['x', 'y']);
  assert.deepEqual(writes('this.app.saving.bookmarks = []', 'this.app.saving.'), ['bookmarks']);
});
