/**
 * Branch path costs from compiled code instead of estimates from the syntax: PTX
 * (`nvcc -ptx -lineinfo`) after a save, and SASS (`cuobjdump -sass`, `nvdisasm`) when there is a
 * listing. Costs are per instantiation: a template kernel compiled 30 times has 30 entries, and a
 * branch costs what one of them issues, the one that is launched when the launches say which (else
 * the costliest, with the range). A branch the compiler predicated (no branch instruction where it
 * is) is said to be predicated, with what every warp then issues.
 */
import { finish, type Branch } from '../body/divergence';
import type { Launch, Span } from '../types';
import {
  countInstructionsInSpans,
  fileIdsFor,
  parsePtx,
  ptxEntriesFor,
  type PtxFunction,
  type PtxModule,
} from './ptx-line-costs';
import { demangle } from './demangle';
import { pickInstance, type KernelInstance } from './kernel-resources';
import { launchTemplateArgs } from './figures-registry';
import { conditionalBranches, parseSass, sassFunctionsFor, type SassFunction } from './sass-listing';

/** The kinds of branch the compiler can turn into predicated instructions or selects. */
const PREDICABLE: ReadonlySet<string> = new Set(['if', 'else-if', 'ternary', 'short-circuit']);

/**
 * Replace syntax estimates with PTX instruction counts: for each divergent branch of a kernel
 * found in the PTX, each path costs the instructions of one instantiation whose `.loc` falls in its
 * source. `filePath` names the analysed file as nvcc saw it; `launches` (the document's) say which
 * instantiation runs. A branch whose non-empty paths do not all map to instructions keeps its
 * estimate (a ternary's `.loc` names its statement only), but is still said to be predicated when
 * no branch instruction sits on its lines.
 */
export function refineBranchesWithPtx(
  branches: readonly Branch[],
  ptx: PtxModule | string,
  filePath: string,
  launches: readonly Launch[] = [],
): Branch[] {
  const module = typeof ptx === 'string' ? parsePtx(ptx) : ptx;
  const fileIds = fileIdsFor(module, filePath);
  return branches.map((b) => {
    if (b.kind !== 'divergent' || fileIds.size === 0) return b;
    const candidates = b.inDeviceFunction ? module.functions : ptxEntriesFor(module, b.kernel);
    const counted = candidates
      .map((entry) => ({
        entry,
        counts: b.paths.map((p) => (p.spans.length === 0 ? 0 : countInstructionsInSpans([entry], fileIds, p.spans))),
      }))
      .filter(({ counts }) => b.paths.every((p, i) => p.spans.length === 0 || counts[i] > 0));
    const inLines = (entry: PtxFunction) =>
      entry.instructions.filter(
        (ins) =>
          ins.location &&
          fileIds.has(ins.location.file) &&
          ins.location.line - 1 >= b.span.start.line &&
          ins.location.line - 1 <= b.span.end.line,
      );
    if (counted.length === 0) {
      // No per-path counts: say whether the compiler predicated it, from the instructions on its lines.
      const entries = candidates.filter((e) => inLines(e).length > 0);
      if (entries.length === 0 || !PREDICABLE.has(b.construct)) return b;
      const chosen = launched(entries, b, launches) ?? entries;
      const lines = chosen.map(inLines);
      if (lines.some((ins) => ins.some((i) => isBranchInstruction(i.text)))) return b;
      const cost = Math.max(...lines.map((ins) => ins.length));
      return finish({ ...b, predicated: { source: 'ptx', cost } }, basisOf(b), shapesKnown(b));
    }
    const chosen = launched(
      counted.map((c) => c.entry),
      b,
      launches,
    );
    const pool = chosen ? counted.filter((c) => chosen.includes(c.entry)) : counted;
    const total = (c: (typeof counted)[number]) => c.counts.reduce((s, x) => s + x, 0);
    const shown = pool.reduce((a, c) => (total(c) > total(a) ? c : a));
    const paths = b.paths.map((p, i) => ({ ...p, cost: shown.counts[i] }));
    const name = instanceName(shown.entry.name);
    const ranges = b.paths.map((p, i) => {
      const values = pool.map((c) => c.counts[i]);
      const lo = Math.min(...values);
      const hi = Math.max(...values);
      return lo === hi ? `${p.label} ${lo}` : `${p.label} ${lo}–${hi}`;
    });
    const template = (demangle(shown.entry.name)?.templateArgs.length ?? 0) > 0;
    const which =
      !template && counted.length === 1
        ? ''
        : chosen
          ? pool.length === 1
            ? `of \`${name}\`, the instance launched here`
            : `of \`${name}\`, the costliest of the ${pool.length} instances launched here (across them: ${ranges.join(' · ')})`
          : counted.length === 1
            ? `of \`${name}\``
            : `of \`${name}\`, the costliest of ${counted.length} instantiations (across them: ${ranges.join(' · ')})`;
    const assumptions = b.assumptions
      .filter(
        (a) =>
          !a.startsWith('path costs are estimates') && !a.startsWith('the loop at line') && !a.startsWith('the loop `'),
      )
      .concat([
        `path costs are the PTX instructions (nvcc -ptx -lineinfo) whose source location falls in each path, per warp and per pass${which ? `, ${which}` : ''}; loops are counted once`,
      ]);
    const predicated =
      PREDICABLE.has(b.construct) &&
      !shown.entry.instructions.some(
        (ins) =>
          ins.location &&
          fileIds.has(ins.location.file) &&
          inSpan(ins.location, b.span) &&
          !b.paths.some((p) => p.spans.some((s) => inSpan(ins.location!, s))) &&
          isBranchInstruction(ins.text),
      );
    return finish(
      {
        ...b,
        paths,
        // The paths' PTX counts are weighed against the same instance's length, in the same currency.
        kernelIssueSlots: Math.max(1, shown.entry.instructions.length),
        costSource: 'ptx',
        assumptions,
        ...(predicated ? { predicated: { source: 'ptx' as const, cost: paths.reduce((s, p) => s + p.cost, 0) } } : {}),
      },
      basisOf(b),
      shapesKnown(b),
    );
  });
}

/**
 * SASS of the file (`cuobjdump -sass`, or `nvdisasm` with line information): a divergent branch of
 * a kernel that ptxas compiled without a branch instruction where it is (its lines, with line
 * information; anywhere in the kernel, without) is said to be predicated, with the SASS
 * instructions on its lines as its cost when the listing says where they come from.
 */
export function refineBranchesWithSass(
  branches: readonly Branch[],
  sass: readonly SassFunction[] | string,
  filePath: string,
  launches: readonly Launch[] = [],
): Branch[] {
  const functions = typeof sass === 'string' ? parseSass(sass) : sass;
  const base = filePath.replace(/\\/g, '/').split('/').pop();
  const ours = (file: string) => file.replace(/\\/g, '/').split('/').pop() === base;
  return branches.map((b) => {
    if (b.kind !== 'divergent' || !PREDICABLE.has(b.construct) || b.inDeviceFunction) return b;
    const all = sassFunctionsFor(functions, b.kernel);
    if (all.length === 0) return b;
    const chosen = launched(all, b, launches) ?? all;
    const lines = (f: SassFunction) =>
      f.instructions.filter(
        (i) =>
          i.location &&
          ours(i.location.file) &&
          i.location.line - 1 >= b.span.start.line &&
          i.location.line - 1 <= b.span.end.line,
      );
    const withLines = chosen.some((f) => f.instructions.some((i) => i.location));
    if (withLines) {
      const here = chosen.map(lines);
      if (here.every((ins) => ins.length === 0)) return b;
      if (here.some((ins) => ins.some((i) => i.predicated && /^(BRA|BRX|JMP|JMX)$/.test(i.opcode)))) return b;
      return finish(
        { ...b, predicated: { source: 'sass', cost: Math.max(...here.map((ins) => ins.length)) } },
        basisOf(b),
        shapesKnown(b),
      );
    }
    // Without line information: only a kernel with no conditional branch at all says so for each of its branches.
    if (chosen.some((f) => conditionalBranches(f).length > 0)) return b;
    return finish({ ...b, predicated: { source: 'sass', cost: null } }, basisOf(b), shapesKnown(b));
  });
}

/** The instances the document's launches of the branch's kernel run, when they say which (null: they do not). */
function launched<T extends { name: string }>(
  entries: readonly T[],
  b: Branch,
  launches: readonly Launch[],
): T[] | null {
  const mine = launches.filter((l) => l.baseName === b.kernel && !l.inMacro);
  if (mine.length === 0 || b.inDeviceFunction) return null;
  const instances: Array<KernelInstance & { entry: T }> = entries.map((entry) => ({
    entry,
    mangledName: entry.name,
    signature: null,
    templateArgs: [...(demangle(entry.name)?.templateArgs ?? [])],
    resources: {},
  }));
  const picked = new Set<T>();
  for (const l of mine) {
    const instance = pickInstance(instances, launchTemplateArgs(l));
    if (!instance) return null;
    picked.add((instance as KernelInstance & { entry: T }).entry);
  }
  return [...picked];
}

/** `scale<int, 8>` for `_Z5scaleIiLi8EEvPKT_PS0_S3_i`. */
function instanceName(mangled: string): string {
  const d = demangle(mangled);
  return d ? d.qualifiedName : mangled;
}

function isBranchInstruction(text: string): boolean {
  return /^(@!?%\w+\s+)?bra(\.uni)?\s/.test(text);
}

function inSpan(loc: { line: number; column: number }, span: Span): boolean {
  const line = loc.line - 1;
  if (loc.column === 0) return line >= span.start.line && line <= span.end.line;
  const col = loc.column - 1;
  const afterStart = line > span.start.line || (line === span.start.line && col >= span.start.character);
  const beforeEnd = line < span.end.line || (line === span.end.line && col < span.end.character);
  return afterStart && beforeEnd;
}

function basisOf(b: Branch): 'data' | 'lanes' {
  return b.split?.dataDependent ? 'data' : 'lanes';
}

function shapesKnown(b: Branch): boolean {
  return !b.assumptions.some((a) => a.startsWith('no launch of'));
}
