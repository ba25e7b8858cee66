/** Set by the build (esbuild `define`) from package.json's version. */
declare const SERVER_VERSION: string;
/** Set by the build (esbuild `define`) from scripts/server-launch.cjs: the Node options the server runs with. */
declare const SERVER_NODE_ARGS: string[];
/** Set by the build (esbuild `define`) from scripts/server-launch.cjs: the environment the server runs with. */
declare const SERVER_ENV: Record<string, string>;
