// The App's, the Plot's and a Projection's fields are declared in one place each (store.js
// for the App's runtime, the Plot's and the Projection's constructors): read from the
// sources, every field any module writes on them must be one of those, and the mixed-in
// files must not define a method twice.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { mixin } from '../js/mixin.js';
import { Projection } from '../js/projection/projection.js';
import { RUNTIME_FIELDS, runtimeDefaults } from '../js/store.js';

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

/** The files of a class written as several (mixin.js): its own and those mixed into it. */
function classFiles(file, className) {
  const text = code(join(JS, file));
  const call = new RegExp(String.raw`mixin\(${className},([^)]*)\)`).exec(text);
  const sources = call ? call[1].split(',').map((s) => s.trim()).filter(Boolean) : [];
  const files = sources.map((name) => {
    const imported = new RegExp(String.raw`import \{[^}]*\b${name}\b[^}]*\} from '\./([^']+)'`).exec(text);
    assert.ok(imported, `${file}: where does ${name} come from?`);
    return join(dirname(file), imported[1]);
  });
  return [file, ...files];
}

/** Every write of a field on an instance not declared: `this.` in its files, `<names>.` elsewhere. */
function undeclared(file, className, declared, names) {
  const own = classFiles(file, className);
  const wrong = [];
  for (const path of allSources()) {
    const rel = relative(JS, path);
    const text = code(path);
    const prefixes = own.includes(rel) ? ['this.', ...names] : names;
    for (const prefix of prefixes) {
      for (const field of writes(text, prefix)) if (!declared.has(field)) wrong.push(`${rel}: ${prefix}${field}`);
    }
  }
  return wrong;
}

test('the runtime is declared once, fresh for each app', () => {
  const a = runtimeDefaults();
  const b = runtimeDefaults();
  assert.deepEqual(Object.keys(a), [...RUNTIME_FIELDS]);
  for (const key of RUNTIME_FIELDS) if (a[key] !== null && typeof a[key] === 'object') assert.notEqual(a[key], b[key], key);
  assert.ok(Object.isFrozen(RUNTIME_FIELDS));
});

test('every field written on the App is its state, its runtime (store.js) or a collaborator of its constructor', () => {
  const text = code(join(JS, 'app.js'));
  assert.match(constructorBody(text, 'App'), /Object\.assign\(this, runtimeDefaults\(\)\)/);
  const declared = new Set([...RUNTIME_FIELDS, ...writes(constructorBody(text, 'App'), 'this.')]);
  assert.ok(declared.has('state') && declared.has('plot') && declared.has('panels'));
  assert.ok(classFiles('app.js', 'App').includes(join('controller', 'highlighting.js')));
  assert.deepEqual(undeclared('app.js', 'App', declared, ['app.']), []);
});

test('every field written on the Plot is one its constructor declares', () => {
  const declared = new Set(writes(constructorBody(code(join(JS, 'plot.js')), 'Plot'), 'this.'));
  assert.deepEqual(classFiles('plot.js', 'Plot'), ['plot.js', 'plot_frames.js']);
  assert.deepEqual(undeclared('plot.js', 'Plot', declared, ['plot.', 'app.plot.', 'this.plot.']), []);
});

test('every field written on a Projection is one its constructor declares, and no other can be', () => {
  const file = join('projection', 'projection.js');
  const declared = new Set(writes(constructorBody(code(join(JS, file)), 'Projection'), 'this.'));
  for (const field of ['status', 'data', 'tiled', 'previewLoad', 'previewInOrder', 'displayedOnce', 'lodPending']) assert.ok(declared.has(field), field);
  assert.deepEqual(classFiles(file, 'Projection'), [file, ...['running.js', 'preview.js', 'display.js'].map((f) => join('projection', f))]);
  assert.deepEqual(undeclared(file, 'Projection', declared, ['p.', 'projection.', 'shown.', 'old.']), []);
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
});

test('mixin copies methods and getters, and refuses a method defined twice', () => {
  class Base {
    constructor() {
      this.n = 2;
    }

    own() {
      return 'own';
    }
  }
  class Doubling {
    double() {
      return this.n * 2;
    }

    get square() {
      return this.n * this.n;
    }
  }
  class Shadowing {
    own() {
      return 'other';
    }
  }
  mixin(Base, Doubling);
  const b = new Base();
  assert.equal(b.double(), 4);
  assert.equal(b.square, 4);
  assert.throws(() => mixin(Base, Shadowing), /Shadowing\.own would replace Base\.own on Base/);
  assert.equal(new Base().own(), 'own');
});
