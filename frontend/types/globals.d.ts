// What the page puts on `window` for tests and bench/ (read-only hooks; see each module) and
// the worker's postMessage with transfer: declarations for the type check only (tsc --noEmit,
// tsconfig.json), never loaded by the page.
interface Window {
  /** app.js: the App and its timings */
  __projector: any;
  /** compare/main.js: the comparison page */
  __compare: any;
  /** panels/labels_sequences.js: the 3D labels layer */
  __tbLabels: any;
  /** structure/install.js: the structure overlay */
  __structure: any;
}
