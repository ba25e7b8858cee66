/**
 * The memory and barrier rules of a document's kernels: `barrier-divergence` (barriers.ts),
 * `uncoalesced-access` (global-access.ts) and `bank-conflict` (shared-banks.ts), read from the
 * events the uniformity walk records for each kernel instance its launches make (the same analysis
 * the divergence pass reads). Each record names the block shape it assumed; an access or barrier
 * whose pattern cannot be known from the thread indices and the shapes gives none.
 */
import type { Dim3, Kernel, Span } from '../types';
import type { SourceText } from '../text/source-text';
import { positionAt, withinLines } from '../text/source-text';
import { fileName } from '../preprocess/paths';
import { oneLineOfCode } from '../text/one-line';
import type { AccessEvent, BarrierEvent, MemoryEvent } from '../uniformity/memory-events';
import { canonicalWarpValues, sameInEveryBlock, type Sym } from '../uniformity/symbolic-values';
import {
  analysedText,
  blockShapes,
  DEFAULT_DIVERGENCE_COST_THRESHOLD,
  DEFAULT_DIVERGENCE_MIN_SHARE,
  functionAt,
  instanceUniformity,
  instancesOf,
  launchesOfKernel,
  type DivergenceContext,
  type Instance,
} from './divergence';
import { withinStack } from './body-passes';
import { candidateShapes, conjunction, describeShapes, symText, type RuleShapes } from './lane-samples';
import { barrierVerdict, describeReach, type BarrierVerdict } from './barriers';
import {
  coalescingVerdict,
  coveredByIterations,
  coveredByNeighbours,
  KernelOffsets,
  type CoalescingVerdict,
} from './global-access';
import {
  bankVerdict,
  columnsUsed,
  mergedAccess,
  type ArrayUse,
  type BankVerdict,
  type MergedAccess,
} from './shared-banks';
import type { Node as SyntaxNode } from 'web-tree-sitter';
import { estimateCost } from './path-costs';
import { SyntaxViews } from '../syntax/syntax-view';

export type MemoryRule = 'barrier-divergence' | 'uncoalesced-access' | 'bank-conflict';

export interface MemoryRecord {
  rule: MemoryRule;
  kernel: string;
  severity: 'error' | 'warning' | 'hint';
  /** Where the finding stands: the barrier or access, or the call in this file that reaches it. */
  span: Span;
  /** The barrier or access itself, in this file, where `span` is a call that reaches it (the message names its line). */
  reaches?: Span;
  /** The barrier or access as written. */
  text: string;
  message: string;
  /** How it was decided: from the thread indices alone, or depending on data. */
  basis: 'proven' | 'data';
  /** barrier: threads that reach it / threads of the block; access: sectors per request / ideal; bank: ways / 1. */
  measure: { actual: number; ideal: number } | null;
  fix: string;
  assumptions: string[];
  /** A global access: a load or a store, and the bytes each lane moves in it as the source reads. */
  access?: { store: boolean; bytes: number };
  /** What the PTX compiles the access's line to (compiler/ptx-memory-widths.ts), when it was given. */
  compiled?: { instructions: string[]; bytes: number[] };
}

/** Instances analysed with a known shape past which the rest are not checked. */
const MAX_EVENTS = 2000;

export function memoryRecordsOf(ctx: DivergenceContext, kernels: readonly Kernel[]): MemoryRecord[] {
  const out: MemoryRecord[] = [];
  for (const kernel of kernels) {
    const pf = functionAt(ctx, kernel);
    if (!pf) continue;
    const chosen = new Map<string, MemoryRecord>();
    const { launches, from, elsewhere } = launchesOfKernel(ctx, kernel);
    for (const instance of instancesOf(pf, kernel, launches, from)) {
      const result = instanceUniformity(ctx, pf, instance);
      if (!result?.events) continue;
      const known = blockShapes(kernel, instance.launches, result.multiDimensional, ctx.defaultBlock);
      const shapes: RuleShapes = known.known
        ? { shapes: known.shapes, known: true }
        : { shapes: candidateShapes(result.multiDimensional, result.threeDimensional), known: false };
      const events = canonicalEvents(result.events.slice(0, MAX_EVENTS));
      const uses = arrayUses(events, shapes);
      const accesses = events.filter((e): e is AccessEvent => e.event === 'access' && e.space === 'global');
      const offsets = new KernelOffsets(shapes.shapes[0]);
      for (const ev of events) {
        const record = withinStack(
          () => recordOf(ctx, kernel, instance, ev, shapes, uses, accesses, offsets),
          () => null,
        );
        if (!record) continue;
        if (instance.label) record.assumptions.unshift(`for the instance ${instance.label}`);
        // The sizes the launches fix (a null pointer only leaves out code: nothing found depends on it).
        const sizes = (instance.args ?? []).filter((a) => !a.pointer);
        if (sizes.length)
          record.assumptions.push(
            `with ${sizes.map((a) => `\`${a.name}\` = ${a.value}`).join(', ')}, as every launch in view passes`,
          );
        if (elsewhere && instance.launches.length > 0)
          record.assumptions.push(`launched from ${fileName(from.path)}, which includes this file`);
        const key = `${record.rule}:${record.span.start.line}:${record.span.start.character}`;
        const had = chosen.get(key);
        if (!had || SEVERITY[record.severity] > SEVERITY[had.severity]) chosen.set(key, record);
      }
    }
    out.push(...chosen.values());
  }
  return out.sort((a, b) => a.span.start.line - b.span.start.line || a.span.start.character - b.span.start.character);
}

const SEVERITY = { hint: 0, warning: 1, error: 2 } as const;

/**
 * The events with their warp-uniform unknowns numbered in order of first appearance, as branch
 * verdicts number theirs (canonicalWarpValues): each warp's sample of one is drawn from its number,
 * and the numbers the walk hands out go on from one analysis to the next, so the same kernel read
 * twice gave two barriers' reach two counts.
 */
function canonicalEvents(events: readonly MemoryEvent[]): MemoryEvent[] {
  const numbers = new Map<number, number>();
  const at = (s: Sym) => canonicalWarpValues(s, numbers);
  return events.map((ev) => {
    const guards = ev.guards.map(at);
    if (ev.event === 'barrier')
      return {
        ...ev,
        guards,
        mask: ev.mask && at(ev.mask),
        ...(ev.exited ? { exited: ev.exited.map(at) } : {}),
        ...(ev.departed ? { departed: ev.departed.map(at) } : {}),
      };
    return { ...ev, guards, offset: at(ev.offset), ...(ev.indices ? { indices: ev.indices.map(at) } : {}) };
  });
}

/** Each shared array of two or more dimensions: its accesses here, and the most columns they use. */
function arrayUses(events: readonly MemoryEvent[], shapes: RuleShapes): Map<string, ArrayUse> {
  const out = new Map<string, { accesses: AccessEvent[]; columns: number | null }>();
  for (const ev of events) {
    if (ev.event !== 'access' || ev.space !== 'shared' || !ev.dims || ev.dims.length < 2) continue;
    const used = withinStack(
      () => columnsUsed(ev, shapes),
      () => null,
    );
    const had = out.get(ev.array);
    if (!had) out.set(ev.array, { accesses: [ev], columns: used });
    else {
      had.accesses.push(ev);
      had.columns = had.columns === null || used === null ? null : Math.max(had.columns, used);
    }
  }
  return out;
}

function recordOf(
  ctx: DivergenceContext,
  kernel: Kernel,
  instance: Instance,
  ev: MemoryEvent,
  shapes: RuleShapes,
  uses: ReadonlyMap<string, ArrayUse>,
  events: readonly AccessEvent[],
  offsets: KernelOffsets,
): MemoryRecord | null {
  const place = placeOf(ctx, ev);
  if (!place) return null;
  if (ev.event === 'barrier') {
    const v = barrierVerdict(ev, shapes);
    return v ? barrierRecord(kernel, ev, v, shapes, place, ctx) : null;
  }
  if (ev.space === 'global') {
    const v = coalescingVerdict(ev, shapes);
    if (!v) return null;
    const neighbours = withinStack(
      (): Neighbours =>
        coveredByNeighbours(ev, events, shapes, offsets)
          ? 'accesses'
          : coveredByIterations(ev, shapes)
            ? 'iterations'
            : null,
      () => null,
    );
    // Bytes every block reads are in L1 or L2 after the first block: an uncoalesced load of them
    // costs requests, not DRAM bytes. Where the lane's neighbouring loads use the rest of each
    // sector as well, what is left is a few load instructions: no finding. Otherwise a hint.
    const everyBlock = !ev.store && sameInEveryBlock(ev.offset);
    if (everyBlock && neighbours) return null;
    return accessRecord(kernel, ev, v, shapes, place, neighbours, everyBlock);
  }
  const v = bankVerdict(ev, shapes, uses.get(ev.array) ?? null);
  // A conflict that runs once per thread (in no loop, here or at the calls that reach it) costs each
  // warp of the block its extra passes once: below what a divergent branch must idle to be worth a
  // finding (a 2-way transpose of a tile, a block reduction's last step in one warp), it is not one.
  if (v && !ev.repeats && v.extraPerWarp < DEFAULT_DIVERGENCE_COST_THRESHOLD) return null;
  if (!v) return null;
  const loop = ev.repeats ? innermostLoop(ctx, ev) : null;
  const weight = loop
    ? withinStack(
        () => loopWeight(ctx, instance, loop, v.extraPerWarp),
        () => null,
      )
    : null;
  // Only the innermost loop's iterations run back to back, where the compiler can merge their accesses.
  const counter = loop ? counterName(loop) : null;
  const merged = counter
    ? withinStack(
        () => mergedAccess(ev, shapes, counter),
        () => null,
      )
    : null;
  return bankRecord(kernel, ev, v, shapes, place, weight, merged && merged.ways < v.ways ? merged : null);
}

/** A conflict's extra passes against the work of the loop it repeats in. */
interface LoopWeight {
  /** Extra passes per warp over the estimated issue slots of one iteration, as a fraction. */
  share: number;
  /** The loop's header as written (`for (uint bkIdx = 0; bkIdx < K; bkIdx += BK)`). */
  loop: string;
}

/** The innermost loop the access runs in: around it, or around the calls that reach it (null: in a file not in view). */
function innermostLoop(ctx: DivergenceContext, ev: AccessEvent): SyntaxNode | null {
  const tree = ctx.programTree ?? ctx.tree;
  // The places from the access out: itself, then the calls that reach it, innermost first.
  const places = [{ file: ev.file, at: ev.at }, ...[...ev.calls].reverse()];
  for (const p of places) {
    if (p.file !== ctx.path) return null;
    let node: SyntaxNode | null = tree.rootNode.descendantForIndex(p.at[0], Math.max(p.at[0], p.at[1] - 1));
    for (; node && node.type !== 'function_definition'; node = node.parent)
      if (
        /^(?:for_statement|while_statement|do_statement|for_range_loop)$/.test(node.type) &&
        node.childForFieldName('body')
      )
        return node;
  }
  return null;
}

/** The variable a `for` loop declares or assigns in its initializer (`i` in `for (uint i = 0; ...)`). */
function counterName(loop: SyntaxNode): string | null {
  const init = loop.type === 'for_statement' ? loop.childForFieldName('initializer') : null;
  if (!init) return null;
  const target =
    init.type === 'declaration'
      ? init
          .childrenForFieldName('declarator')
          .find((d) => d?.type === 'init_declarator')
          ?.childForFieldName('declarator')
      : init.type === 'assignment_expression'
        ? init.childForFieldName('left')
        : null;
  return target?.type === 'identifier' ? target.text : null;
}

/**
 * A conflict's extra passes against one iteration of the innermost loop it runs in, its body
 * estimated from the syntax (inner loops by their constant trip counts, others once): a conflict
 * in a tile's copy is weighed against the copy and the product loop beside it in the same body,
 * one inside the product loop against that loop's own body. Not further out: the syntax counts an
 * unrolled register-array statement as several slots where the compiler issues one, so a loop the
 * access repeats in would look longer beside it than it is.
 */
function loopWeight(ctx: DivergenceContext, instance: Instance, loop: SyntaxNode, extra: number): LoopWeight {
  const tree = ctx.programTree ?? ctx.tree;
  // Template arguments of the instance are the loops' constants too (`dotIdx < BK`).
  const lookup = (name: string): number | null => {
    const b = instance.bindings.get(name);
    if (b && b.k === 'num' && b.values.length === 1) return b.values[0];
    return ctx.lookup(name);
  };
  const views = new SyntaxViews(tree, tree !== ctx.tree ? ctx.tree : undefined);
  const body = loop.childForFieldName('body')!;
  const cost = Math.max(1, estimateCost([body], { functions: ctx.functions, lookup, views }).cost + 2);
  const header = oneLineOfCode(loop.text.slice(0, body.startIndex - loop.startIndex)).trim();
  return { share: extra / cost, loop: header.length > 60 ? `${header.slice(0, 57)}...` : header };
}

/** Who uses the rest of the sectors an uncoalesced access touches: the lane's neighbouring accesses, or its loop's other iterations. */
type Neighbours = 'accesses' | 'iterations' | null;

interface Place {
  span: Span;
  text: string;
  /** Where the event is when it is not at `span` (`in \`f\`, called here`). */
  via: string | null;
  /** The event's own place in this file when `via` names it by line. */
  reaches: Span | null;
}

/** Where the event stands in this document: itself, or the innermost call written here that reaches it. */
function placeOf(ctx: DivergenceContext, ev: MemoryEvent): Place | null {
  const source = ctx.source;
  const view = analysedText(ctx);
  const text = (at: readonly [number, number]) => oneLineOfCode(view.slice(at[0], at[1]));
  // In a function the kernel calls: at the kernel's call, where the conditions it runs under are seen.
  const call = ev.calls.find((c) => c.file === ctx.path);
  if (call) {
    const reaches = ev.file === ctx.path ? spanOf(source, ev.at) : null;
    const inner = reaches ? `\`${text(ev.at)}\` at line ${reaches.start.line + 1}, ` : '';
    return {
      span: spanOf(source, call.at),
      text: text(call.at),
      via: `${inner}reached through \`${text(call.at)}\``,
      reaches,
    };
  }
  if (ev.file !== ctx.path) return null;
  return { span: spanOf(source, ev.at), text: text(ev.at), via: null, reaches: null };
}

function spanOf(source: SourceText, at: readonly [number, number]): Span {
  return withinLines(source, { start: positionAt(source, at[0]), end: positionAt(source, at[1]) });
}

// ---------------------------------------------------------------------------
// Words

/** A condition past this many characters, as the walk computed it, is quoted as the code writes it. */
const LONG_CONDITION = 80;

/**
 * The conditions a barrier runs under: as the walk computed them (`threadIdx.x < n`), or, where that
 * is long and each is a condition this document writes, as written (`row < total_count`).
 */
function conditionText(guard: Sym, ev: BarrierEvent, ctx: DivergenceContext): string {
  const computed = symText(guard);
  const sources = ev.guardSources;
  if (computed.length <= LONG_CONDITION || !sources || sources.length !== ev.guards.length) return computed;
  const parts: string[] = [];
  for (const g of sources) {
    if (!g || g.file !== ctx.path) return computed;
    const written = oneLineOfCode(analysedText(ctx).slice(g.at[0], g.at[1]));
    parts.push(g.negated ? `!(${written})` : sources.length > 1 ? `(${written})` : written);
  }
  return parts.join(' && ');
}

function barrierRecord(
  kernel: Kernel,
  ev: BarrierEvent,
  v: BarrierVerdict,
  shapes: RuleShapes,
  place: Place,
  ctx: DivergenceContext,
): MemoryRecord {
  const guard = conjunction(ev.guards);
  const condition = guard ? `\`${conditionText(guard, ev, ctx)}\`` : null;
  const name = ev.scope === 'warp' ? '`__syncwarp`' : 'this barrier';
  const via = place.via ? ` (${place.via})` : '';
  let message: string;
  let fix: string;
  if (ev.scope === 'warp') {
    const what =
      v.maskProblem === 'outside' ? 'lanes outside its mask reach it' : 'lanes its mask names do not reach it';
    message = `${name}${via}: ${what}${condition ? ` (it runs only where ${condition} holds)` : ''}${v.basis === 'data' ? `, depending on data${v.example ? ` (e.g. ${v.example})` : ''}` : ''}; every lane that calls it must be in the mask, and every lane in the mask must call it, or the behaviour is undefined.`;
    fix =
      'Call `__syncwarp` with the mask of the lanes that reach it (`__ballot_sync` of the condition before the branch), or move it out of the condition.';
  } else if (v.pairedArm) {
    // Not a hang: the threads that skip it meet a barrier in the branch's other arm, and
    // `bar.sync 0` counts arrivals, not the instruction each thread executes.
    const reach = v.reach && v.basis === 'proven' ? ` (${describeReach(v)})` : '';
    message = `${capital(name)}${via} is reached by part of the block: it runs only where ${condition} holds${reach}${v.basis === 'data' && v.example ? `, which can differ between the block's threads (e.g. ${v.example})` : ''}; the others meet a barrier in the other arm of that branch${v.pairedArm === 'and-departed' ? ' or have left the kernel' : ''}. \`__syncthreads()\` counts the threads arriving at barrier 0 whichever instruction they execute, so the block does not hang while every path meets as many barriers, though CUDA C++ calls a barrier not reached by the whole block undefined; check that both arms meet the same number of barriers.`;
    fix = 'Hoist one barrier out of the branch, after the arms join, if both arms need it at the same point.';
  } else if (v.departedOnly) {
    // Not a hang: the threads that miss it have left the kernel, and a barrier only exited threads
    // hold up is released. What is left to check is what they would have written before it.
    const reach = v.reach && v.basis === 'proven' ? ` (${describeReach(v)})` : '';
    message = `${capital(name)}${via} is reached only by the threads still running: it runs only where ${condition} holds${reach}${v.basis === 'data' && v.example ? `, which can differ between the block's threads (e.g. ${v.example})` : ''}, and the others leave the kernel without meeting another barrier. A barrier that only exited threads hold up is released (PTX ISA, \`exit\`), so it does not hang, though CUDA C++ calls a barrier not reached by the whole block undefined; check that no thread reads shared memory after it that a departed thread would have written.`;
    fix =
      'Let every thread reach the barrier (guard the work, not the barrier), or have departing threads write the neutral values the others read (as a reduction needs) before they return.';
  } else {
    const reach = describeReach(v);
    message =
      v.basis === 'proven'
        ? `${capital(name)}${via} is reached by only part of the block: it runs only where ${condition} holds, and ${reach}; the others never arrive, so the block hangs or reads stale shared memory (undefined behaviour).`
        : `${capital(name)}${via} may be reached by only part of the block: it runs only where ${condition} holds, which can differ between the block's threads${v.example ? ` (e.g. ${v.example})` : ''}. Where it does, the others never arrive and the block hangs or reads stale shared memory (undefined behaviour).`;
    fix =
      'Move the barrier out of the condition (let every thread reach it, doing no work where the condition fails), or make the condition the same for the whole block.';
  }
  return {
    rule: 'barrier-divergence',
    kernel: kernel.name,
    severity: v.departedOnly ? 'hint' : v.basis === 'proven' ? 'error' : 'warning',
    span: place.span,
    ...(place.reaches ? { reaches: place.reaches } : {}),
    text: place.text,
    message,
    basis: v.basis,
    measure: v.reach ? { actual: v.reach.arrive, ideal: v.reach.total } : null,
    fix,
    assumptions: [assumedShapes(v.shape, shapes)],
  };
}

function accessRecord(
  kernel: Kernel,
  ev: AccessEvent,
  v: CoalescingVerdict,
  shapes: RuleShapes,
  place: Place,
  neighbours: Neighbours,
  everyBlock: boolean,
): MemoryRecord {
  const ratio = v.sectors / v.ideal;
  const verb = ev.store ? 'store to' : 'load from';
  const stride =
    v.stride !== null && v.stride !== 1 && v.stride !== 0
      ? ` (neighbouring lanes ${Math.abs(v.stride)} elements of ${ev.offsetUnit ?? ev.elementBytes} bytes apart)`
      : '';
  const via = place.via ? ` (${place.via})` : '';
  const shared =
    neighbours === 'accesses'
      ? ` The lane's neighbouring ${ev.store ? 'stores to' : 'loads from'} \`${ev.array}\` use the rest of those sectors (from L1): what is lost is requests, not bytes.`
      : neighbours === 'iterations'
        ? ` The lane's other iterations of its loop ${ev.store ? 'store to' : 'load from'} the rest of those sectors (from L1): what is lost is requests, not bytes.`
        : '';
  const pitches = v.pitches.map(
    (p) =>
      `assuming \`${p.name}\` ≥ ${p.least} (it is the row pitch, and a row holds the ${p.least} columns a warp indexes in it)`,
  );
  const cached = everyBlock
    ? ' Every block reads the same bytes here (the address does not depend on the block), so after the first block they come from L1 or L2: what is lost is requests and cache bandwidth, not DRAM bytes.'
    : '';
  const message = `Uncoalesced ${verb} \`${ev.array}\`${via}: each warp request touches ${v.sectors} 32-byte sectors where unit stride would touch ${v.ideal}${stride}, so ${Math.round((1 - v.ideal / v.sectors) * 100)}% of the bytes fetched are not used by this request; ${assumedShapes(v.shape, shapes)}${pitches.map((p) => `, ${p}`).join('')}.${shared}${cached}`;
  const fix = neighbours
    ? 'Let each lane make one vector access (`float4`, `int4`, `char4`) in place of its neighbouring scalar ones.'
    : 'Make consecutive lanes touch consecutive elements: swap the roles of the thread index and the loop index, or stage a tile through shared memory and transpose it there, or load wider vectors (`float4`) per lane.';
  return {
    rule: 'uncoalesced-access',
    kernel: kernel.name,
    severity: ratio >= 4 && !neighbours && !everyBlock ? 'warning' : 'hint',
    span: place.span,
    ...(place.reaches ? { reaches: place.reaches } : {}),
    text: place.text,
    message,
    basis: 'proven',
    measure: { actual: v.sectors, ideal: v.ideal },
    fix,
    assumptions: [assumedShapes(v.shape, shapes), ...pitches],
    access: { store: ev.store, bytes: ev.member?.bytes ?? ev.elementBytes },
  };
}

function bankRecord(
  kernel: Kernel,
  ev: AccessEvent,
  v: BankVerdict,
  shapes: RuleShapes,
  place: Place,
  weight: LoopWeight | null,
  merged: MergedAccess | null,
): MemoryRecord {
  const verb = ev.store ? 'store to' : 'load from';
  const ways =
    v.fewest === v.ways
      ? `${v.ways}-way`
      : v.exact && v.fewest > 1
        ? `${v.fewest}- to ${v.ways}-way`
        : `Up to ${v.ways}-way`;
  const via = place.via ? ` (${place.via})` : '';
  const fix = !v.padding
    ? null
    : v.padding.to > v.padding.from
      ? `Pad each row from ${v.padding.from} to ${v.padding.to} elements (\`[${v.padding.from}]\` → \`[${v.padding.to}]\`): the lanes then fall on different banks.`
      : `Make each row ${v.padding.to} elements instead of ${v.padding.from} (\`[${v.padding.from}]\` → \`[${v.padding.to}]\`; the kernel's accesses use no column past ${v.padding.to - 1}): the lanes then fall on different banks.`;
  const advice =
    fix ??
    'Give neighbouring lanes addresses an odd number of 4-byte words apart (pad each row by one word, or swizzle the index with an XOR), or let each lane read consecutive words.';
  // Small beside the loop it repeats in (a tile's copy beside the product loop it feeds): a hint,
  // as a divergent branch under the same share of its kernel's work is.
  const slight = weight !== null && weight.share * 100 < DEFAULT_DIVERGENCE_MIN_SHARE;
  const weighed = slight
    ? ` Its extra passes are ${weight.share < 0.01 ? 'under 1' : `about ${Math.floor(weight.share * 100)}`}% of the estimated work of one iteration of \`${weight.loop}\`: little to gain (a warning from ${DEFAULT_DIVERGENCE_MIN_SHARE}%).`
    : '';
  // Whether ptxas merged the lane's run of elements only the SASS tells: a hint that says both.
  const width = merged ? merged.elements * ev.elementBytes : 0;
  const vector = merged
    ? ` The lane's loop ${ev.store ? 'stores' : 'loads'} ${merged.trips} consecutive elements: if the compiler merges them into ${width}-byte accesses (\`${ev.store ? 'STS' : 'LDS'}.${width * 8}\`, served ${width === 16 ? 'a quarter of' : 'half'} a warp at a time), ${merged.ways <= 1 ? 'they are conflict-free' : `they are ${merged.ways}-way`}; the SASS tells which (ptxas may merge what the PTX moves one element at a time).`
    : '';
  const message = `${ways} bank conflict on the shared-memory ${verb} \`${ev.array}\`${via}: lanes of a warp fall on the same bank at different addresses, so the request is served in ${v.fewest === v.ways || (v.exact && v.fewest > 1) ? '' : 'up to '}${v.ways} passes instead of 1; ${assumedShapes(v.shape, shapes)}.${weighed}${vector} ${advice}`;
  return {
    rule: 'bank-conflict',
    kernel: kernel.name,
    severity: v.ways >= 4 && !slight && !merged ? 'warning' : 'hint',
    span: place.span,
    ...(place.reaches ? { reaches: place.reaches } : {}),
    text: place.text,
    message,
    basis: 'proven',
    measure: { actual: v.ways, ideal: 1 },
    fix: advice,
    assumptions: [assumedShapes(v.shape, shapes)],
  };
}

/** The launches' shape the verdict came from; with no launch in view, every shape it holds for. */
function assumedShapes(shape: Dim3, shapes: RuleShapes): string {
  return describeShapes(shapes.known ? { shapes: [shape], known: true } : shapes);
}

function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
