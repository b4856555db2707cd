// Seeded random numbers the server draws identically (projector_core/kernels/portable_random.py):
// mulberry32 for uniforms, Box-Muller for normals, so a seed gives the same vectors on both
// sides (the custom projection's random centroid, tests/cases/custom.json) without numpy's RNG.

/** Seeded pseudo-random numbers in [0, 1) (mulberry32; seed 0 counts as 1). */
export function seededUniform(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One standard-normal number from two uniforms (Box-Muller, cosine branch). */
export function gaussian(rand) {
  return Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());
}

/** `count` standard-normal numbers from `seed`: the server's standard_normal(count, seed). */
export function standardNormal(count, seed) {
  const rand = seededUniform(seed);
  const out = new Float64Array(count);
  for (let i = 0; i < count; i++) out[i] = gaussian(rand);
  return out;
}
