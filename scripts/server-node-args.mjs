// The Node.js options the language server runs with, in one place: scripts/build.mjs writes them
// into the server bundle's shebang (so `cuda-occupancy-lsp --stdio` gets them) and into the VS Code
// client (which starts the server with them); the benchmark and the server tests read them back from
// the shebang, so that they measure and test the server as it ships.
//
// --max-old-space-size=1024: V8 sizes the heap it lets grow before a full collection from this cap.
// With Node's default (a quarter of the machine's memory, several GB) it lets the heap grow to up to
// 4x what is live after a collection; under a 1 GB cap, to about 1.6x. With 20 open 10k-line files the
// live set is about 100 MB, and the server's RSS went from 458-481 MB to 341-353 MB
// (npm run bench, memory). 1 GB is still ten times that live set.
export const SERVER_NODE_ARGS = ['--max-old-space-size=1024'];

/** The shebang line that runs a bundle with `args`: `env -S` splits them (coreutils 8.30+, macOS, npm's Windows shims). */
export function shebangFor(args) {
  return args.length === 0 ? '#!/usr/bin/env node' : `#!/usr/bin/env -S node ${args.join(' ')}`;
}

/** The Node options in a bundle's first line, as shebangFor wrote them ([] for a plain `#!/usr/bin/env node`). */
export function nodeArgsFromShebang(firstLine) {
  const match = /^#!\/usr\/bin\/env(?: -S)? node((?: \S+)*)\s*$/.exec(firstLine);
  if (!match) throw new Error(`not a node shebang: ${JSON.stringify(firstLine.slice(0, 80))}`);
  return match[1].split(' ').filter(Boolean);
}
