// The App's store, in two parts. The *state* (state.js) is what a URL or a bookmark
// serialises: every view choice, validated on the way in. The *runtime* (below) is what the
// page holds beside it and never serialises: the open data set, its projections, answers
// from the server, tokens of requests in flight. Every runtime field is declared here, with
// its shape and its writer, and the App is built from this declaration: a module that needs
// a new field adds it here, never on the App ad hoc (tests/store.test.js reads the sources
// and refuses an undeclared one). A projection's own fields (its job, frames, level of detail,
// display) are declared the same way, once, by its class (projection/projection.js).

/** @typedef {ReturnType<typeof import('./state.js').defaultState>} State  the serialised part */
/** @typedef {import('./dataset.js').Dataset} Dataset */
/** @typedef {{ name: string, embeddings: Array<{ name: string, shape?: number[], error?: string }> }} Run */
/** @typedef {{ kind: 'none' | 'categorical' | 'numeric' | 'quality', colors: Uint8Array, legend: object | null }} Coloring */
/** @typedef {import('./projection/projection.js').Projection} Projection  one method's projection of the open data set */
/** @typedef {{ label: string, projector?: State }} Bookmark  a TensorBoard State (bookmarks.js), ours inside */

/**
 * What the App holds beside the state.
 * @typedef {object} Runtime
 * @property {Run[]} runs  the server's runs (listed at start, again after an upload)
 * @property {Dataset | null} dataset  the data set on screen (controller/loading.js)
 * @property {Dataset[]} localDatasets  sets read in this browser, by file or drop
 * @property {{ pca: Projection | null, tsne: Projection | null, umap: Projection | null, custom: Projection | null }} projections
 *   each method's latest projection of the open data set (controller/projecting.js)
 * @property {Projection | null} shown  the projection the plot shows
 * @property {Uint8Array | null} missing  1 per row without coordinates in the shown projection
 * @property {Array<{ index: number, distance: number }>} neighbors  the focus's neighbours, nearest first
 * @property {{ indices: number[], error: string | null }} searchResult  the state's search, answered
 * @property {Coloring | null} coloring  the points' colours by the state's colour rule (colors.js pointColoring)
 * @property {Array<number | null> | null} quality  per-point quality of the shown projection, once measured (structure panel)
 * @property {number} hover  the point under the pointer, or -1
 * @property {Bookmark[]} bookmarks  the tray (panels/bookmarks.js, controller/saving.js)
 * @property {number} activeBookmark  the tray's bookmark the view is, or -1 once the view changed
 * @property {{ text: string, error: boolean }} message  the status line (controller/status.js)
 * @property {boolean} ready  the data set's first view is up (tests and the widget wait for it)
 * @property {number} loadToken  the latest data set load: an older one that finishes late is dropped
 * @property {number} neighborToken  the same for neighbour requests
 * @property {number} searchToken  the same for searches
 * @property {number} colorToken  the same for a tiled view's colours (controller/tile_highlighting.js)
 * @property {boolean} coloredTiled  colours and flags are the tiles' rules, not per-point arrays
 * @property {object | null} selectionScope  the region or search that made the selection in a tiled
 *   view (controller/tile_highlighting.js), valid while the state's selection is its list
 * @property {string | null} lastHash  the URL hash this page wrote last (its own hashchange is ignored)
 * @property {unknown[] | null} slicedDisplay  what the plot is being filled with in slices (data, axes, order,
 *   isolated rows), while it is (projection/display.js)
 */

/** A fresh runtime: the App's fields before anything is loaded. */
export function runtimeDefaults() {
  return {
    runs: [],
    dataset: null,
    localDatasets: [],
    projections: { pca: null, tsne: null, umap: null, custom: null },
    shown: null,
    missing: null,
    neighbors: [],
    searchResult: { indices: [], error: null },
    coloring: null,
    quality: null,
    hover: -1,
    bookmarks: [],
    activeBookmark: -1,
    message: { text: '', error: false },
    ready: false,
    loadToken: 0,
    neighborToken: 0,
    searchToken: 0,
    colorToken: 0,
    coloredTiled: false,
    selectionScope: null,
    lastHash: null,
    slicedDisplay: null,
  };
}

/** The runtime's field names, for the check that nothing else is written on the App. */
export const RUNTIME_FIELDS = Object.freeze(Object.keys(runtimeDefaults()));
