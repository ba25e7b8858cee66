// How the language server process is started, in one place: scripts/build.mjs writes it into the
// server bundle's shebang (so `cuda-occupancy-lsp --stdio` runs that way) and into the VS Code
// client (which starts the server the same way); the benchmark and the server tests read it back
// from the shebang, so that they measure and test the server as it ships. CommonJS, so that the
// compiled tests (CommonJS) can require it as the build scripts (ES modules) import it.
//
// --max-old-space-size=1024: V8 sizes the heap it lets grow before a full collection from this cap.
// With Node's default (a quarter of the machine's memory, several GB) it lets the heap grow to up to
// 4x what is live after a collection; under a 1 GB cap, to about 1.6x. With 20 open 10k-line files the
// live set is about 100 MB, and the server's RSS went from 458-481 MB to 341-353 MB
// (npm run bench, memory). 1 GB is still ten times that live set.
//
// --expose-gc: the server runs full collections itself in windows it knows are idle (an edit's
// debounce, the end of a background analysis; server/src/lsp/idle-collector.ts), so that V8 seldom
// finishes one of its own right when a hover arrives: hover p99 at 10k lines went from 14-19 ms
// to about 5 ms (npm run bench, keystroke). Without the option the server works as before.
//
// --max-semi-space-size=8: the young generation's two halves at 8 MB instead of 16. Both stay
// committed once grown, so this is 16 MB less RSS; the idle collections above take care of what
// gets promoted sooner, and the keystroke and hover figures did not change (npm run bench).
exports.SERVER_NODE_ARGS = ['--max-old-space-size=1024', '--expose-gc', '--max-semi-space-size=8'];

// MALLOC_TRIM_THRESHOLD_=131072: glibc's default trim threshold, pinned. Left dynamic, glibc raises
// it (and the mmap threshold) each time a large block is freed, and then keeps freed memory instead
// of returning it: about 35-40 MB of the server's RSS with 20 open 10k-line files. Other C libraries
// ignore it.
exports.SERVER_ENV = { MALLOC_TRIM_THRESHOLD_: '131072' };

/** The shebang line that runs a bundle with `env` and `args`: `env -S` splits them (coreutils 8.30+, macOS, npm's Windows shims). */
exports.shebangFor = function shebangFor(args, env = {}) {
  const words = [...Object.entries(env).map(([name, value]) => `${name}=${value}`), 'node', ...args];
  return words.length === 1 ? '#!/usr/bin/env node' : `#!/usr/bin/env -S ${words.join(' ')}`;
};

/** The environment and Node options in a bundle's first line, as shebangFor wrote them. */
exports.launchFromShebang = function launchFromShebang(firstLine) {
  const match = /^#!\/usr\/bin\/env(?: -S)?((?: \w+=\S*)*) node((?: \S+)*)\s*$/.exec(firstLine);
  if (!match) throw new Error(`not a node shebang: ${JSON.stringify(firstLine.slice(0, 120))}`);
  const env = Object.fromEntries(
    match[1]
      .split(' ')
      .filter(Boolean)
      .map((word) => word.split(/=(.*)/s).slice(0, 2)),
  );
  return { env, args: match[2].split(' ').filter(Boolean) };
};
