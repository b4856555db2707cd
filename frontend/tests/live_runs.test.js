import assert from 'node:assert/strict';
import { test } from 'node:test';

import { EventFeed } from '../js/events.js';
import { withEvent } from '../js/live_runs.js';

const entry = (name, status = 'ready') => ({ name, status, shape: status === 'ready' ? [10, 4] : null });

test('a new run, then its embeddings, are listed in the order the run gives', () => {
  let runs = [{ name: 'a', embeddings: [entry('x')] }];
  runs = withEvent(runs, 'run', { action: 'added', run: 'b', error: null, warnings: [], embeddings: ['s:00000', 's:00001'] });
  assert.deepEqual(runs[1].embeddings.map((e) => [e.name, e.status]), [['s:00000', 'loading'], ['s:00001', 'loading']]);
  runs = withEvent(runs, 'embedding', { action: 'added', run: 'b', embedding: 's:00001', entry: entry('s:00001') });
  runs = withEvent(runs, 'embedding', { action: 'added', run: 'b', embedding: 's:00000', entry: entry('s:00000', 'loading') });
  assert.deepEqual(runs[1].embeddings.map((e) => [e.name, e.status]), [['s:00000', 'loading'], ['s:00001', 'ready']]);
  assert.equal(runs[0].embeddings[0].name, 'x');
});

test('removals drop the embedding or the run; an entry gone when sent changes nothing', () => {
  const runs = [{ name: 'a', embeddings: [entry('x'), entry('y')] }, { name: 'b', embeddings: [entry('z')] }];
  assert.deepEqual(withEvent(runs, 'embedding', { action: 'removed', run: 'a', embedding: 'x' })[0].embeddings.map((e) => e.name), ['y']);
  assert.deepEqual(withEvent(runs, 'run', { action: 'removed', run: 'b' }).map((r) => r.name), ['a']);
  assert.equal(withEvent(runs, 'embedding', { action: 'changed', run: 'a', embedding: 'x' }), runs);
  assert.equal(withEvent(runs, 'step', { action: 'added' }), runs);
});

test('events replayed over a listing made after them leave the latest state', () => {
  const listing = [{ name: 'a', embeddings: [entry('x')] }]; // ready by the time it was listed
  const early = [['embedding', { action: 'changed', run: 'a', embedding: 'x', entry: entry('x', 'loading') }],
    ['embedding', { action: 'changed', run: 'a', embedding: 'x', entry: entry('x') }]];
  const runs = early.reduce((r, [kind, data]) => withEvent(r, kind, data), listing);
  assert.equal(runs[0].embeddings[0].status, 'ready');
});

/** An EventSource as the feed uses it, driven by the test. */
class FakeSource {
  constructor(url) {
    this.url = url;
    this.readyState = 0;
    this.listeners = new Map();
    this.onerror = null;
    this.closed = false;
    FakeSource.made.push(this);
  }
  addEventListener(kind, listener) {
    if (!this.listeners.has(kind)) this.listeners.set(kind, []);
    this.listeners.get(kind).push(listener);
  }
  send(kind, data, id) {
    for (const listener of this.listeners.get(kind) ?? []) listener({ data: data === undefined ? undefined : JSON.stringify(data), lastEventId: id });
  }
  close() {
    this.closed = true;
  }
}
FakeSource.made = [];

test('one stream for every subscriber, by kind; ready once the server says open', async () => {
  FakeSource.made = [];
  const feed = new EventFeed('/api/events', { open: (url) => new FakeSource(url) });
  const heard = [];
  feed.subscribe('step', (data, meta) => heard.push(['a', data.step, meta.id]));
  const stop = feed.subscribe('step', (data) => heard.push(['b', data.step]));
  feed.subscribe('run', (data) => heard.push(['run', data.run]));
  assert.equal(FakeSource.made.length, 1);
  const source = FakeSource.made[0];
  let ready = false;
  feed.ready().then(() => { ready = true; });
  source.send('open', undefined); // the browser's own open event: not the server's
  await Promise.resolve();
  assert.equal(ready, false);
  source.send('open', { heartbeat: 15 }, 'e-0');
  await feed.ready();
  source.send('step', { step: 3 }, 'e-1');
  stop();
  source.send('step', { step: 4 }, 'e-2');
  source.send('run', { run: 'r' }, 'e-3');
  assert.deepEqual(heard, [['a', 3, 'e-1'], ['b', 3], ['a', 4, 'e-2'], ['run', 'r']]);
  assert.equal(feed.lastId, 'e-3');
  feed.close();
  assert.ok(source.closed);
});

test('a stream the browser closed is opened again, its followers told to read the state again', async () => {
  FakeSource.made = [];
  const feed = new EventFeed('/api/events', { open: (url) => new FakeSource(url), reopenMs: 1 });
  const resets = [];
  feed.subscribe('reset', (data) => resets.push(data.reason));
  feed.subscribe('run', () => {});
  const first = FakeSource.made[0];
  first.readyState = 0; // reconnecting by itself (Last-Event-ID): nothing to do
  first.onerror({});
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(FakeSource.made.length, 1);
  first.readyState = 2; // given up
  first.onerror({});
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(FakeSource.made.length, 2);
  assert.deepEqual([...FakeSource.made[1].listeners.keys()].sort(), ['open', 'reset', 'run']);
  assert.equal(resets.length, 1);
  feed.close();
});
