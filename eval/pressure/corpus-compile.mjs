// What the pressure scripts share: where the repository, the development corpus and its extra
// headers are, the command line's options, and a corpus file's nvcc flags as eval/launches/compile.json
// gives them (its project's defaults, the stubs and the extra headers' folders).
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The command line's arguments. */
export const argv = process.argv.slice(2);
/** The value after `--name` on the command line, or undefined. */
export const opt = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
export const corpus = path.resolve(
  opt('--corpus') ?? process.env.CUDA_DEV_CORPUS ?? path.join(repo, '..', 'dev-corpus'),
);
export const depsDir = path.resolve(process.env.CUDA_EVAL_DEPS ?? path.join(repo, '..', 'eval-data', 'deps'));
if (!existsSync(corpus)) {
  console.error(`no development corpus at ${corpus} (see eval/launches/README.md)`);
  process.exit(2);
}
export const table = JSON.parse(readFileSync(path.join(repo, 'eval', 'launches', 'compile.json'), 'utf8'));

/** A compile.json entry's include folders and flags. */
export function entryFlags(entry) {
  const d = table.defaults?.[entry.project] ?? {};
  return [
    ...(entry.include ?? d.include ?? []).map((i) => `-I${i}`),
    ...(entry.stubs ?? d.stubs ?? []).map((s) => `-I${path.join(repo, 'eval', 'launches', 'stubs', s)}`),
    ...(entry.deps ?? d.deps ?? []).map((x) => `-I${path.join(depsDir, x)}`),
    ...(entry.flags ?? d.flags ?? []),
  ];
}
