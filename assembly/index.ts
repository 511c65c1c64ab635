// The whole export surface of ppdp's WebAssembly core. Kernels see only integer codes and
// raw pointers into a memory whose layout the TS wrapper (src/wasm/kernel.ts) owns: no
// allocator, no strings, no I/O. Codes are validated by the wrapper before they get here,
// because the loops use unchecked loads.

export { compose, groupBy, histogram, placeColumn } from './groupby';
export { mondrianCut, mondrianGroup, mondrianMedian, mondrianStats } from './mondrian';
export { kronMode, kronModeStructured } from './kronecker';
export { perturb, perturbSimd } from './perturb';
export { csvMatch, csvRows } from './csv';
export { classSums } from './classes';
export { digestRows, rawLanes } from './digest';
export { bytesHashes } from './bytes-hashes';
export { gatherBytes, shufflePlaces } from './gather-bytes';
export { csvFields } from './csv-fields';
