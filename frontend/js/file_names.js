// Names of downloaded files: the run and tensor they come from, what they hold, one
// extension. An uploaded file's own extension is dropped ("up_tensor.tsv" gives
// "up_tensor-tsne.csv", not "up_tensor.tsv-tsne.csv") and characters that file systems
// refuse or URLs escape (a step's "default:00010", a tag's "layer/1") become "_".

const KNOWN_EXTENSIONS = /\.(tsv|txt|npy|csv|bytes|json|zarr)$/i;
const UPLOAD_RUN = /^upload-[0-9a-f]+$/; // projector_core/data/uploads.py names each upload's run so

function safe(part) {
  return String(part).replace(KNOWN_EXTENSIONS, '').replace(/[^\p{L}\p{N}._-]+/gu, '_').replace(/^_+|_+$/g, '') || 'data';
}

/** "run-tensor-what.ext", or "tensor-what.ext" when the run adds nothing (or the data was uploaded). */
export function downloadName(dataset, what, ext) {
  const tensor = safe(dataset?.name ?? 'data');
  const named = dataset && !dataset.local && dataset.run && !UPLOAD_RUN.test(dataset.run);
  const run = named && safe(dataset.run) !== tensor ? `${safe(dataset.run)}-` : '';
  return `${run}${tensor}-${what}.${ext}`;
}
