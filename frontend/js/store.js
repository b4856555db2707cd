// The App's store, in two parts. The *state* (state.js) is what a URL or a bookmark
// serialises: every view choice, validated on the way in, held and written by the App alone
// (app.update, app.replaceState). The *runtime* is what the page holds beside it and never
// serialises: the open data set, its projections, answers from the server, tokens of
// requests in flight. It is split by the App's parts (app.js: datasets, projecting,
// highlight, saving, status): each part declares its fields once, typed, in its constructor
// and is sealed; a part writes only its own fields and asks another part through its
// methods (tests/store.test.js reads the sources and refuses a field written elsewhere,
// or undeclared). A projection's own fields (its job, frames, level of detail, display) are
// declared the same way, once, by its class (projection/projection.js). The shapes the
// parts share are declared here.

/** @typedef {ReturnType<typeof import('./state.js').defaultState>} State  the serialised part */
/**
 * @typedef {object} EmbeddingEntry  one embedding of a run in /api/runs
 * @property {string} name
 * @property {number[]} [shape]
 * @property {string} [status]  'ready' | 'loading' | ...
 * @property {string} [error]
 * @property {string[]} [warnings]
 * @property {{ fraction: number, bytes_done: number, bytes_total: number }} [progress]
 * @property {string[]} [metadata_columns]
 * @property {string | null} [label_column]  the column that names points (the server's choice)
 * @property {boolean} [sprite]
 * @property {boolean} [has_bookmarks]
 * @property {boolean} [tiles]  2-D PCA and custom views come as tiles (points/point_source.js)
 * @property {boolean} [tsne_umap_tiles]  t-SNE and UMAP too
 */
/** @typedef {{ name: string, error?: string, embeddings: EmbeddingEntry[], folder?: string | null }} Run  folder: the LOGDIR's name, for the run "." */
/** @typedef {{ label: string, projector?: State, isSelected?: boolean, tSNEIteration?: number, saved?: { id: number, author: string, at: number } }} Bookmark  a TensorBoard State (bookmarks.js), ours inside; `saved`: kept in the server's store */
/** @typedef {{ index: number, distance: number }} Neighbor */
/**
 * What made the selection when it lists fewer rows than it holds (tiles: a region's or a
 * search's first rows), valid while the state's selection is its list.
 * @typedef {{ kind: 'region' | 'search', count: number, selection: number[], polygon?: number[][], axes?: number[], column?: string, codes?: Set<number> }} SelectionScope
 */

export {};
