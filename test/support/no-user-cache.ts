/**
 * Loaded before every test (the mocha configurations `require` it): the tests compile with fake nvccs, so
 * nothing they compile is kept in, or read from, the user's compile cache. A test of the cache names a
 * directory of its own (`check --cache-dir`).
 */
process.env.CUDA_OCCUPANCY_CACHE_DIR ??= 'off';
