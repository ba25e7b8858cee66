/** The package version, set by the build (esbuild `define`); `dev` when run from the sources. */
export const VERSION: string = typeof SERVER_VERSION === 'string' ? SERVER_VERSION : 'dev';
