// Metadata of a large server data set, column by column as typed arrays (a dictionary and
// int32 codes) instead of one TSV to download and split in the browser: at 10M rows the
// text alone is hundreds of MB. Each column becomes an array of shared dictionary strings,
// the shape the rest of the front end reads.

/** Above this many points metadata comes as columns. */
export const COLUMNS_ABOVE = 100000;

/** An array of n strings from a dictionary and n codes into it. */
export function decodeColumn(dictionary, codes) {
  const values = new Array(codes.length);
  for (let i = 0; i < codes.length; i++) values[i] = dictionary[codes[i]];
  return values;
}

/** { names, columns, nRows } (as parseMetadataTsv returns) fetched one column at a time. */
export async function fetchMetadataColumns(api, run, embedding, names, n, onProgress = () => {}) {
  const columns = [];
  for (const name of names) {
    const { dictionary, codes } = await api.metadataColumn(run, embedding, name, 'categorical');
    if (codes.length !== n) throw new Error(`metadata column ${name}: ${codes.length} rows for ${n} points`);
    columns.push(decodeColumn(dictionary, codes));
    onProgress(columns.length / names.length);
  }
  return { names: names.slice(), columns, nRows: n };
}
