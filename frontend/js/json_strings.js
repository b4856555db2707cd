// A long JSON list of strings (a metadata column's dictionary: a million ids or sentences is
// tens of MB) parsed in pieces, a task each: JSON.parse of the whole took a quarter of a
// second of main thread at 1M values. A piece ends at the separator after a string: the
// quotes are walked from the piece's start, each one no backslash escapes opening or closing
// a string (inside a JSON string a quote is always escaped), so no value is ever cut.

import { laterTask } from './yielding.js';

/** Characters parsed per task: about 10-20 ms. */
export const PIECE_CHARS = 4 << 20;

/**
 * The strings of `text`, a JSON list of strings as Python's json.dumps writes it (", " or ","
 * between items, whitespace around), parsed `pieceChars` at a time with a yield between.
 * @param {string} text
 * @param {number} [pieceChars]
 * @returns {Promise<string[]>}
 */
export async function parseStringList(text, pieceChars = PIECE_CHARS) {
  const open = text.indexOf('[');
  const close = text.lastIndexOf(']');
  if (close - open <= pieceChars) return JSON.parse(text);
  const out = [];
  let start = open + 1;
  while (start < close) {
    const cut = endOfPiece(text, start, start + pieceChars, close);
    const piece = JSON.parse(`[${text.slice(start, cut)}]`);
    for (let i = 0; i < piece.length; i++) out.push(piece[i]);
    start = cut + 1; // past the comma
    if (start < close) await laterTask();
  }
  return out;
}

/**
 * The comma after the first string that ends at or after `from` (`close` if none), found by
 * walking the quotes from `start` (outside any string): each quote no backslash escapes opens
 * or closes a string, so a value such as "," is never taken for a separator.
 */
function endOfPiece(text, start, from, close) {
  let inside = false;
  let at = start;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote < 0 || quote >= close) return close;
    at = quote + 1;
    let slashes = 0;
    while (text.charCodeAt(quote - 1 - slashes) === 92) slashes++; // '\'
    if (inside && slashes % 2 === 1) continue; // an escaped quote inside the string
    inside = !inside;
    if (inside || quote < from) continue;
    const comma = text.indexOf(',', at);
    return comma < 0 || comma > close ? close : comma;
  }
}
