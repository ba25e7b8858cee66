/** Set by the build (esbuild `define`) from package.json's version. */
declare const SERVER_VERSION: string;
