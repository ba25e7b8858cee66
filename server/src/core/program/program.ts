/**
 * The program of one translation unit: the files its preprocessor read, each as the unit sees it
 * (the view), their outlines, and the IR of any function or constant an analysis asks for, built
 * on demand. Names resolve only to what the unit declares (a call of `encoder_forward` reaches the
 * definition the unit includes, never a same-named function of a file it does not), innermost
 * scope first, as C++ looks names up.
 */
import type { Node as SyntaxNode, Tree } from 'web-tree-sitter';
import type { Expr, MacroOrigin, Range, TemplateArg } from '../ir/expr';
import { spell, tokenize, writesAny } from '../preprocess/tokens';
import { expandTokens, ExpansionLimit, toExpand, type MacroDef } from '../preprocess/macro-expansion';
import { buildFunctionIR, type FunctionIR } from '../ir/function-ir';
import { ExprBuilder, type BuildHooks } from '../ir/expr-builder';
import { UnitMacroHooks, type SnippetParser } from '../ir/macro-hooks';
import type { PreprocessedUnit, UnitFile } from '../preprocess/unit';
import { viewText } from '../preprocess/view';
import { parseView } from '../preprocess/parse-view';
import { allArmsText, buildChoices, stateAt, type BuildArm } from '../preprocess/build-choices';
import { initialisersOf, otherArms } from './arm-declarations';
import {
  outlineOf,
  templateArgumentsOf,
  type FileOutline,
  type OutlineConstant,
  type OutlineFunction,
  type OutlineParam,
  type OutlineAlias,
  type OutlineRecord,
} from './outline';
import { analyzeFunctionValues, type FunctionValues } from '../values/function-values';
import { CLASS_TEMPLATE_BIT, join, num, top, TOP, valKey, type FnRef, type Val } from '../values/domain';
import { Evaluator, type CallOutcome, type Env, type Observer, type Resolver } from '../values/evaluate';
import { sizeofType } from '../text/const-eval';
import { memoByText, readsTable } from '../incremental/kept-tables';
import { emptyReads, recordingScope, sameReads, type MacroReads } from './macro-reads';
import type { MacroScope } from '../preprocess/unit';

export interface ProgramFileInput {
  path: string;
  /** The unit's view of the file: the text the syntax tree is parsed from. */
  view: string;
  /** The live tree of `view` (an open document's), or null: what is needed is parsed apart. */
  tree?: Tree | null;
}

export interface ProgramFile {
  path: string;
  view: string;
  tree: Tree | null;
}

/** A file-scope macro use that declares functions, expanded and spelled out (see fileScopeExpansions). */
interface Snippet {
  text: string;
  map: (s: number, e: number) => Range;
  origin: MacroOrigin | null;
}

/** A function of the program, where it is. */
export interface ProgramFunction {
  file: string;
  fn: OutlineFunction;
}

export interface ProgramConstant {
  file: string;
  decl: OutlineConstant;
}

/** What a template parameter is bound to: a value, or a type (as written). */
export type TemplateBinding = Val | TypeBinding;
export interface TypeBinding {
  k: 'type-arg';
  type: string;
  /** A type parameter read with no instance (the type is its own name): what its members are, unknown. */
  open?: { why: string; bits: number };
}

export function isType(b: TemplateBinding): b is TypeBinding {
  return b.k === 'type-arg';
}

/** The function an analysis is in: where names are looked up from, and its template arguments. */
export interface FunctionScope {
  file: string;
  /** Namespaces and classes enclosing the use. */
  scope: readonly string[];
  bindings: ReadonlyMap<string, TemplateBinding>;
  /** In a lambda: the enclosing function's locals it captures, by name, as they are where it is called. */
  captures?: ReadonlyMap<string, Val>;
}

/** Calls followed into callees at most this deep (a wrapper calling a wrapper calling a launcher). */
export const MAX_CALL_DEPTH = 4;

export class UnitProgram {
  private readonly files = new Map<string, ProgramFile>();
  private readonly outlines = new Map<string, FileOutline>();
  private readonly hooks = new Map<string, UnitMacroHooks>();
  private readonly irs = new Map<string, FunctionIR | null>();
  /** Per last component of a name, its functions and constants with the scope each is named from (the index is fixed). */
  private readonly scopedFunctions = new Map<string, Array<ProgramFunction & { scope: readonly string[] }>>();
  private readonly scopedConstants = new Map<
    string,
    Array<{ file: string; decl: OutlineConstant; scope: readonly string[] }>
  >();
  /** resolveCallee's answers by name, argument count and scope: a call is resolved each time a walk passes it. */
  private readonly callees = new Map<string, ProgramFunction[]>();
  private readonly constants = new Map<OutlineConstant, Val>();
  private readonly evaluating = new Set<OutlineConstant>();
  private readonly calls = new Map<string, FunctionValues | null>();
  private readonly stack: string[] = [];
  private byName: Map<
    string,
    {
      functions: ProgramFunction[];
      constants: ProgramConstant[];
      records: Array<{ file: string; record: OutlineRecord }>;
      aliases: Array<{ file: string; alias: OutlineAlias; scope: readonly string[] }>;
    }
  > | null = null;
  /** A class template's static constant per instance (`Packed128<float>::size`), by declaration and arguments. */
  private readonly memberConstants = new Map<string, Val>();

  /**
   * `inputs`: files with their views given (an open document with its tree); every other file the
   * unit read gets its parse view from the unit when first asked.
   */
  constructor(
    readonly unit: PreprocessedUnit,
    private readonly parser: SnippetParser,
    inputs: readonly ProgramFileInput[],
  ) {
    for (const f of inputs) this.files.set(f.path, { path: f.path, view: f.view, tree: f.tree ?? null });
    for (const [path, file] of unit.files)
      if (!this.files.has(path)) {
        this.lazy.set(path, () => {
          const view = viewText(file);
          this.unitViews.set(path, view);
          return this.reading(
            headerViews,
            path,
            () => parseView(view, (o) => this.macrosAt(path, o), this.macroNameSet),
            (text) => text === view,
            view,
          );
        });
      }
  }

  /**
   * Logs of the macro reads of the header computations under way (innermost last): a header's
   * parse view, outline and function IRs are kept across units by their text and these reads.
   */
  private readonly readLogs: MacroReads[] = [];

  /** The unit's macros at `offset` of `path`, every answer written down in the logs under way. */
  private macrosAt(path: string, offset: number): MacroScope {
    const scope = this.unit.macrosAt(path, offset);
    return this.readLogs.length === 0 ? scope : recordingScope(scope, path, offset, this.readLogs);
  }

  /** The unit's macro names, each question written down in the logs under way. */
  private readonly macroNameSet: Pick<ReadonlySet<string>, 'has'> = {
    has: (name) => {
      const had = this.unit.macroNames.has(name);
      for (const log of this.readLogs) log.names.set(name, had);
      return had;
    },
  };

  /**
   * `compute`'s value kept in `table` by `key` and the unit's macros it reads: reused where this
   * unit answers every one of those reads the same (and `alsoValid` holds), computed and kept
   * otherwise.
   */
  private reading<V, E = undefined>(
    table: ReturnType<typeof readsTable<KeptReads<E>, V>>,
    key: string,
    compute: () => V,
    alsoValid: (extra: E | undefined) => boolean,
    extra?: E,
  ): V {
    const kept = table.get(key, (r) => alsoValid(r.extra) && sameReads(this.unit, r.reads));
    if (kept !== undefined) return kept;
    const reads = emptyReads();
    this.readLogs.push(reads);
    let value: V;
    try {
      value = compute();
    } finally {
      this.readLogs.pop();
    }
    table.set(key, { reads, extra }, value);
    return value;
  }

  private readonly lazy = new Map<string, () => string>();
  /** The unit's views of the files parsed apart, before the parse view blanks specifier macros (see withExecutionSpaces). */
  private readonly unitViews = new Map<string, string>();
  /** Each file's parse view with every arm of its undecided groups kept (buildWithChoices). */
  private readonly allArmsViews = new Map<string, string>();
  /** Each file's arms of undecided groups (inOtherArms). */
  private readonly fileArms = new Map<string, BuildArm[]>();

  /** Frees what the program parsed (the expansions' and functions' trees); its results stay valid. */
  dispose(): void {
    for (const h of this.hooks.values()) h.dispose();
    this.hooks.clear();
  }

  file(path: string): ProgramFile | undefined {
    let f = this.files.get(path);
    if (!f) {
      const make = this.lazy.get(path);
      if (!make) return undefined;
      f = { path, view: make(), tree: null };
      this.files.set(path, f);
      this.lazy.delete(path);
    }
    return f;
  }

  /** The files in the order the unit read them. */
  paths(): string[] {
    return [...new Set([...this.files.keys(), ...this.lazy.keys()])];
  }

  outline(path: string): FileOutline {
    let o = this.outlines.get(path);
    if (!o) {
      const f = this.file(path);
      if (!f) return { functions: [], constants: [], records: [], instantiations: [] };
      const unitView = this.unitViews.get(path);
      if (f.tree || unitView === undefined) o = this.computeOutline(f);
      else {
        // A header: its outline holds in every unit that reads the same text with the same macros.
        const kept = this.reading(
          headerOutlines,
          path,
          () => {
            const before = new Set(this.snippets.keys());
            const outline = this.computeOutline(f);
            return { outline, snippets: [...this.snippets].filter(([key]) => !before.has(key)) };
          },
          (texts) => texts?.[0] === f.view && texts[1] === unitView,
          [f.view, unitView] as const,
        );
        for (const [key, snippet] of kept.snippets) this.snippets.set(key, snippet);
        o = kept.outline;
      }
      this.outlines.set(path, o);
    }
    return o;
  }

  private computeOutline(f: ProgramFile): FileOutline {
    const own = this.withExecutionSpaces(
      f.path,
      f.tree ? outlineOf(f.tree.rootNode, f.view) : outlineOfText(f.view, this.parser),
      f.view,
    );
    const expanded = this.fileScopeExpansions(f.path, f.view);
    return expanded.length
      ? {
          functions: [...own.functions, ...expanded.flatMap((x) => x.outline.functions)],
          constants: [...own.constants, ...expanded.flatMap((x) => x.outline.constants)],
          records: [...own.records, ...expanded.flatMap((x) => x.outline.records)],
          instantiations: [...(own.instantiations ?? []), ...expanded.flatMap((x) => x.outline.instantiations ?? [])],
          aliases: [...(own.aliases ?? []), ...expanded.flatMap((x) => x.outline.aliases ?? [])],
        }
      : own;
  }

  /**
   * The execution spaces of functions whose specifiers the parse view blanked (a macro that expands
   * to specifiers only: `#define HD __host__ __device__`, `HD T f(...)`): read from the view before
   * the definition, through the unit's macros there.
   */
  private withExecutionSpaces(path: string, own: FileOutline, parsed: string): FileOutline {
    const file = this.unit.files.get(path);
    if (!file || !own.functions.some((fn) => !fn.global && !fn.device)) return own;
    const view = this.unitViews.get(path) ?? viewText(file);
    if (view.length !== parsed.length || view === parsed) return own;
    let changed = false;
    const functions = own.functions.map((fn) => {
      if (fn.global || fn.device) return fn;
      // The blanked run just before the definition (the parse view keeps every line and offset).
      let start = fn.definitionAt[0];
      while (start > 0 && /\s/.test(parsed[start - 1])) start--;
      if (view.slice(start, fn.definitionAt[0]).trim() === '') return fn;
      const words = this.specifierWords(path, view, start, fn.definitionAt[0]);
      const device = words.has('__device__');
      const global = words.has('__global__');
      if (!device && !global) return fn;
      changed = true;
      const host = words.has('__host__') || /\b__host__\b/.test(parsed.slice(fn.definitionAt[0], fn.nameAt[0]));
      return { ...fn, device, global, host };
    });
    return changed ? { ...own, functions } : own;
  }

  /** The words of `view[start, end)`, with the specifier macros among them replaced by what they expand to. */
  private specifierWords(path: string, view: string, start: number, end: number): Set<string> {
    const out = new Set<string>();
    const add = (word: string, at: number, depth: number) => {
      out.add(word);
      if (depth > 4 || !this.macroNameSet.has(word)) return;
      for (const def of this.macrosAt(path, at).state(word).options)
        for (const t of def?.body ?? []) if (/^[A-Za-z_]\w*$/.test(t.text)) add(t.text, at, depth + 1);
    };
    for (const m of view.slice(start, end).matchAll(/[A-Za-z_]\w*/g)) add(m[0], start + m.index, 0);
    return out;
  }

  /** Expansions of macros used at file scope to define functions (`DEFINE_LAUNCHER(float)`), by key. */
  private readonly snippets = new Map<string, Snippet>();

  /**
   * The declarations written by macro uses at file scope: a use, outside every brace, of a macro
   * whose expansion holds a `{` (it defines something), expanded through the unit's macros there and
   * parsed apart; their ranges are the use's, and their bodies' IR is built from the expansion.
   */
  private fileScopeExpansions(path: string, view: string): Array<{ outline: FileOutline }> {
    // A use is an identifier token, a run of identifier characters in the view (tokens.ts): the
    // names the view writes that way are asked about, not every macro of the unit; where none is
    // such a macro (most headers), the view is not tokenized.
    // Unrecorded (the open document, read afresh at every keystroke): where no macro of the unit can
    // define anything, or none that can is written in the view, nothing is tokenized.
    if (this.readLogs.length === 0 && !writesAny(view, this.unit.macrosWhere(definesBlock))) return [];
    const wanted = new Set<string>();
    const asked = new Set<string>();
    const end = this.macrosAt(path, view.length);
    for (const [name] of view.matchAll(/[\w$\u0080-\uffff]+/g)) {
      if (asked.has(name)) continue;
      asked.add(name);
      if (!this.macroNameSet.has(name)) continue;
      if (end.state(name).options.some((o) => o?.body?.some((t) => t.text === '{'))) wanted.add(name);
    }
    if (wanted.size === 0) return [];
    const out: Array<{ outline: FileOutline }> = [];
    const tokens = tokenize(view);
    // Braces open: a namespace's or `extern "C"`'s (declarations go on inside) or another's.
    const braces: Array<string | null> = [];
    for (let k = 0; k < tokens.length; k++) {
      const t = tokens[k];
      if (t.text === '{') {
        braces.push(namespaceOpening(tokens, k));
        continue;
      }
      if (t.text === '}') {
        braces.pop();
        continue;
      }
      if (t.kind !== 'ident' || !wanted.has(t.text) || braces.some((b) => b === null)) continue;
      const namespaces = braces.filter((b): b is string => b !== null && b !== '').flatMap((b) => b.split('::'));
      const def = this.macrosAt(path, t.start)
        .state(t.text)
        .options.find((o) => o?.body?.some((x) => x.text === '{'));
      if (!def) continue;
      let end = t.end;
      if (def.params !== null) {
        if (tokens[k + 1]?.text !== '(') continue;
        let d = 0;
        let j = k + 1;
        for (; j < tokens.length; j++) {
          if (tokens[j].text === '(') d++;
          else if (tokens[j].text === ')' && --d === 0) break;
        }
        if (j >= tokens.length) continue;
        end = tokens[j].end;
        k = j;
      }
      const expansion = this.macroHooks(path)?.expandDeclarations(t.start, end);
      if (!expansion) continue;
      const key = `${path}@${t.start}`;
      this.snippets.set(key, {
        text: expansion.text,
        map: expansion.map,
        origin: { name: def.name, file: def.file, defAt: def.at },
      });
      const tree = this.parser.parseApart(expansion.text);
      try {
        const inner = outlineOf(tree.rootNode, expansion.text);
        const m = (r: Range) => expansion.map(r[0], r[1]);
        out.push({
          outline: {
            functions: inner.functions.map((fn) => ({
              ...fn,
              scope: [...namespaces, ...fn.scope],
              qualified: [...namespaces, fn.qualified].join('::'),
              at: m(fn.at),
              definitionAt: m(fn.definitionAt),
              nameAt: m(fn.nameAt),
              headerAt: m(fn.headerAt),
              bodyAt: fn.bodyAt ? m(fn.bodyAt) : null,
              params: fn.params.map((p) => ({ ...p, defaultAt: null })),
              expansion: { key, at: fn.definitionAt },
            })),
            constants: [],
            records: inner.records.map((r) => ({ ...r, at: m(r.at) })),
          },
        });
      } finally {
        tree.delete();
      }
    }
    return out;
  }

  macroHooks(path: string): UnitMacroHooks | null {
    let h = this.hooks.get(path);
    if (!h) {
      const f = this.file(path);
      if (!f) return null;
      h = new UnitMacroHooks(this.parser, f.view, (o) => this.macrosAt(path, o));
      this.hooks.set(path, h);
    }
    return h;
  }

  private index() {
    if (!this.byName) {
      this.byName = new Map();
      const entry = (name: string) => {
        let e = this.byName!.get(name);
        if (!e) this.byName!.set(name, (e = { functions: [], constants: [], records: [], aliases: [] }));
        return e;
      };
      for (const path of this.paths()) {
        const o = this.outline(path);
        for (const fn of o.functions) entry(fn.name).functions.push({ file: path, fn });
        for (const decl of o.constants) entry(decl.name).constants.push({ file: path, decl });
        for (const record of o.records) entry(record.name).records.push({ file: path, record });
        for (const alias of o.aliases ?? []) entry(alias.name).aliases.push({ file: path, alias, scope: alias.scope });
      }
    }
    return this.byName;
  }

  /** Every function of the program with this (last-component) name. */
  functionsNamed(name: string): ProgramFunction[] {
    return this.index().get(name)?.functions ?? [];
  }

  /**
   * The template arguments of a function template's explicit instantiations in the unit
   * (`template void f<float>(float*, int);`), those not written deduced from the parameter types as
   * the compiler does (`const T*` against `const float*`): one list per instantiation, aligned with
   * the template's parameters (null: neither written nor deduced). An instantiation an explicit
   * specialization (`template<> void f(double*, int)`) covers is not the template's body: left out
   * (`specialized`).
   */
  instantiationsOf(pf: ProgramFunction): Array<Array<string | null>> {
    const params = pf.fn.templateParams ?? [];
    if (params.length === 0) return [];
    const patterns = pf.fn.params.map(declaredType);
    const deduce = (written: readonly string[] | null, types: readonly string[]): Array<string | null> | null => {
      if (types.length !== patterns.length) return null;
      const args = params.map((_, k) => written?.[k] ?? null);
      for (let i = 0; i < types.length; i++) {
        const got = deduceFrom(
          patterns[i],
          types[i],
          params.map((p) => p.name),
        );
        if (got === null) return null;
        for (const [name, value] of got) {
          const k = params.findIndex((p) => p.name === name);
          if (args[k] === null) args[k] = value;
          else if (normalType(args[k]!) !== normalType(value)) return null;
        }
      }
      return args;
    };
    const out = new Map<string, Array<string | null>>();
    for (const path of this.paths())
      for (const inst of this.outline(path).instantiations ?? []) {
        if (inst.name !== pf.fn.name || !endsWith(pf.fn.scope, inst.scope)) continue;
        const args = deduce(inst.args, inst.paramTypes);
        if (args && !this.specialized(pf, args)) out.set(argsKey(args), args);
      }
    return [...out.values()];
  }

  /** Whether an explicit specialization (`template<> void f(P<half> p)`) replaces the template's body for these arguments. */
  specialized(pf: ProgramFunction, args: ReadonlyArray<string | null>): boolean {
    const params = pf.fn.templateParams ?? [];
    if (params.length === 0 || args.length !== params.length) return false;
    const key = argsKey(args);
    const patterns = pf.fn.params.map(declaredType);
    return this.functionsNamed(pf.fn.name).some((f) => {
      if (f.fn.templateParams?.length !== 0 || !sameScope(f.fn.scope, pf.fn.scope)) return false;
      if (f.fn.params.length !== patterns.length) return false;
      const deduced = new Map<string, string>();
      for (let i = 0; i < patterns.length; i++) {
        const got = deduceFrom(
          patterns[i],
          declaredType(f.fn.params[i]),
          params.map((p) => p.name),
        );
        if (!got) return false;
        for (const [name, value] of got) {
          if (deduced.has(name) && normalType(deduced.get(name)!) !== normalType(value)) return false;
          deduced.set(name, value);
        }
      }
      return argsKey(params.map((p) => deduced.get(p.name) ?? null)) === key;
    });
  }

  recordsNamed(name: string): Array<{ file: string; record: OutlineRecord }> {
    return this.index().get(name)?.records ?? [];
  }

  /** The type a namespace-scope alias `written` names from `scope` (`using fp8_4_t = __nv_fp8x4_e4m3;`), when one alias answers. */
  typeAlias(written: string, scope: readonly string[]): string | null {
    const name = written.replace(/^.*::/, '');
    const found = this.lookup(written, scope, this.index().get(name)?.aliases ?? []);
    const types = new Set(found.map((a) => a.alias.type));
    return types.size === 1 ? [...types][0] : null;
  }

  /**
   * The type `Name<args>::member` names (`typename Qk_vec<float, 128>::Type`): the member type of
   * the specialization the arguments select (`template<> struct Qk_vec<float, 128> { using Type =
   * float4; }`), else of the primary template with its parameters replaced. Null where a
   * specialization may or may not match (two spellings of one type cannot be told apart by text),
   * where two match, or where the member is not declared.
   */
  memberType(name: string, args: readonly string[], member: string): string | null {
    const matches: Array<{ record: OutlineRecord; bound: Map<string, string> }> = [];
    const primaries: OutlineRecord[] = [];
    for (const { record } of this.recordsNamed(name)) {
      if (!record.specializationArgs) {
        primaries.push(record);
        continue;
      }
      const match = matchSpecialization(record, args);
      if (match === 'unknown') return null;
      if (match) matches.push({ record, bound: match });
    }
    // No specialization selects them: the primary template, its parameters bound to the arguments.
    const primary =
      matches.length === 0 ? onlyOne(primaries.filter((r) => r.memberTypes?.some((m) => m.name === member))) : null;
    const pick =
      matches.length === 1
        ? matches[0]
        : primary && {
            record: primary,
            bound: new Map((primary.templateParams ?? []).map((p, k) => [p.name, args[k] ?? p.defaultText ?? p.name])),
          };
    if (!pick) return null;
    const { record, bound } = pick;
    const declared = record.memberTypes?.find((m) => m.name === member);
    return declared ? declared.type.replace(/\b[A-Za-z_]\w*\b/g, (w) => bound.get(w) ?? w) : null;
  }

  /**
   * The declarations `written` (`N`, `ns::N`, `Traits<T>::N`) names from `scope`: those whose
   * qualified name ends with it, in the innermost enclosing scope that has any; when none is in an
   * enclosing scope (a `using namespace`), all of them.
   */
  lookup<T extends { scope: readonly string[] }>(
    written: string,
    scope: readonly string[],
    candidates: readonly T[],
  ): T[] {
    const parts = written
      .replace(/^::/, '')
      .replace(/<[^<>]*(?:<[^<>]*>[^<>]*)*>/g, '')
      .split('::');
    const qualifier = parts.slice(0, -1);
    const matching = candidates.filter((c) => endsWith(c.scope, qualifier));
    if (matching.length <= 1) return matching;
    for (let depth = scope.length; depth >= 0; depth--) {
      const prefix = [...scope.slice(0, depth), ...qualifier];
      const here = matching.filter((c) => sameScope(c.scope, prefix));
      if (here.length) return here;
    }
    return matching;
  }

  // --- IR ---

  /** The IR of a function of the program (its body), or null when it has none. */
  functionIR(pf: ProgramFunction): FunctionIR | null {
    const key = functionKey(pf);
    if (this.irs.has(key)) return this.irs.get(key)!;
    const ir = !pf.fn.bodyAt
      ? null
      : pf.fn.expansion
        ? this.buildExpandedIR(pf.fn.expansion)
        : (this.buildWithChoices(pf) ?? this.buildIR(pf.file, pf.fn.definitionAt));
    this.irs.set(key, ir);
    return ir;
  }

  /** The offset of `path` is in an arm of an undecided `#if` that the view leaves out. */
  outOfView(path: string, offset: number): boolean {
    return stateAt(this.unit.files.get(path)?.regions ?? [], offset) === 'alternative';
  }

  /**
   * A host function whose body holds `#if` groups the unit cannot decide, read with every arm as a
   * branch the build takes (build-choices.ts): its launches' values are then each arm's, not the
   * view's alone. Null when it holds none, or its text with every arm does not parse (an arm that
   * opens a brace another closes): the view's arm is read, as for any other function.
   */
  private buildWithChoices(pf: ProgramFunction): FunctionIR | null {
    // Device code's groups are mostly `__CUDA_ARCH__`, which each pass decides; its branches feed the
    // uniformity analyses, which read a branch as the threads', not the build's.
    if (!pf.fn.host || pf.fn.device || pf.fn.global || !pf.fn.bodyAt) return null;
    const file = this.unit.files.get(pf.file);
    if (!file) return null;
    const arms = buildChoices(file, pf.fn.bodyAt[0], pf.fn.bodyAt[1]);
    if (arms.length === 0) return null;
    const at = pf.fn.definitionAt;
    const text = this.allArmsView(pf.file, file).slice(at[0], at[1]);
    const tree = this.parser.parseApart(text);
    try {
      const node = findFirst(tree.rootNode, 'function_definition');
      if (!node || tree.rootNode.hasError) return null;
      if (!arms.every((arm) => wholeStatements(tree.rootNode, arm.start - at[0], arm.end - at[0]))) return null;
      return buildFunctionIR(node, { text, base: at[0], macros: this.macroHooks(pf.file), arms });
    } finally {
      tree.delete();
    }
  }

  /** The IR of a function a file-scope macro use defines: parsed from the expansion, placed at the use. */
  private buildExpandedIR(expansion: { key: string; at: Range }): FunctionIR | null {
    const snippet = this.snippets.get(expansion.key);
    if (!snippet) return null;
    const tree = this.parser.parseApart(snippet.text);
    try {
      const node = nodeAt(tree.rootNode, expansion.at, 'function_definition');
      if (!node) return null;
      return buildFunctionIR(
        node,
        { text: snippet.text, macros: null },
        { expansion: { map: snippet.map, origin: snippet.origin } },
      );
    } finally {
      tree.delete();
    }
  }

  /** The IR of the function (or lambda) whose node spans `at` in `path`. */
  buildIR(path: string, at: Range, lambda = false): FunctionIR | null {
    const f = this.file(path);
    if (!f) return null;
    const macros = this.macroHooks(path);
    if (f.tree) {
      const node = nodeAt(f.tree.rootNode, at, lambda ? 'lambda_expression' : 'function_definition');
      if (!node) return null;
      return buildFunctionIR(node, { text: f.view, macros }, { lambdaParams: lambda ? lambdaParams(node) : null });
    }
    // Parsed apart: the function's own text, its offsets the file's. Kept across the units that
    // include the file by that text and the macros its uses read (a header's helpers are called
    // from every unit that includes it).
    const text = f.view.slice(at[0], at[1]);
    return this.reading(
      headerIRs,
      `${path}\u0000${at[0]}\u0000${lambda ? 'lambda' : ''}`,
      () => this.buildApart(text, at, lambda, macros),
      (kept) => kept === text,
      text,
    );
  }

  private buildApart(text: string, at: Range, lambda: boolean, macros: UnitMacroHooks | null): FunctionIR | null {
    const tree = this.parser.parseApart(lambda ? `auto __l = ${text};` : text);
    try {
      const node = lambda
        ? findFirst(tree.rootNode, 'lambda_expression')
        : findFirst(tree.rootNode, 'function_definition');
      if (!node) return null;
      const base = lambda ? at[0] - 'auto __l = '.length : at[0];
      const hooks: BuildHooks = { text: lambda ? `auto __l = ${text};` : text, base, macros };
      return buildFunctionIR(node, hooks, { lambdaParams: lambda ? lambdaParams(node) : null });
    } finally {
      tree.delete();
    }
  }

  /** An expression written at `at` of `path` (a constant's initialiser, a default argument), as IR. */
  expressionAt(path: string, at: Range): Expr | null {
    const f = this.file(path);
    if (!f) return null;
    const text = f.view.slice(at[0], at[1]);
    const prefix = 'auto __v = (';
    const tree = this.parser.parseApart(`${prefix}${text});`);
    try {
      const value = findFirst(tree.rootNode, 'parenthesized_expression');
      const inner = value?.namedChildren[0];
      if (!inner) return null;
      const builder = new ExprBuilder(
        { text: `${prefix}${text});`, base: at[0] - prefix.length, macros: this.macroHooks(path) },
        { resolve: () => null, lambda: () => undefined, statements: () => undefined },
      );
      return builder.build(inner);
    } finally {
      tree.delete();
    }
  }

  // --- values ---

  /** The value of a constant of the program (its initialiser evaluated in its scope), unknown when it has none it can compute. */
  constantValue(pc: ProgramConstant): Val {
    const { decl } = pc;
    const kept = this.constants.get(decl);
    if (kept) return kept;
    if (this.evaluating.has(decl) || this.evaluating.size > 64) return top(`\`${decl.name}\` refers to itself`);
    this.evaluating.add(decl);
    let v: Val;
    try {
      v = this.computeConstant(pc);
    } finally {
      this.evaluating.delete(decl);
    }
    this.constants.set(decl, v);
    return v;
  }

  private computeConstant({ file, decl }: ProgramConstant): Val {
    if (decl.kind === 'enumerator' && decl.initAt === null) {
      if (!decl.previous) return num(0);
      const prev = this.lookup(
        decl.previous,
        decl.scope,
        this.index()
          .get(decl.previous.split('::').pop()!)
          ?.constants.map((c) => ({ ...c, scope: c.decl.scope })) ?? [],
      );
      const p = prev.find((c) => c.decl.qualified === decl.previous) ?? prev[0];
      const pv = p ? this.constantValue(p) : TOP;
      return pv.k === 'num' && pv.values.length === 1 ? num(pv.values[0] + 1) : TOP;
    }
    // A variable that is not const may change at run time; a non-const member is per object.
    if (!decl.isConst && decl.kind !== 'enumerator') return top(`\`${decl.name}\` is not const`);
    if (!decl.initAt) return top(`\`${decl.name}\` has no value in view`);
    const e = this.expressionAt(file, decl.initAt);
    if (!e) return TOP;
    const scope: FunctionScope = { file, scope: decl.scope, bindings: new Map() };
    const resolver = this.resolver(scope, 0);
    const ir: FunctionIR = { blocks: [], exit: 0, locals: [], params: [], lambdas: [] };
    const evaluator = new Evaluator(ir, resolver);
    const v = evaluator.eval(e, { vals: new Map(), self: null });
    if (decl.kind !== 'variable' || v.k !== 'num') return v;
    // Declared in an arm of an undecided `#if`: another build declares it in another arm, and the
    // value is one of the arms'. Where another arm's value cannot be read (a call, groups nested in
    // it), the view's build is read, as for any other code: an unknown there (faiss's kWarpSize, 32
    // here and a wavefront size in ROCm builds) would be sampled as any warp size by the device
    // analyses, and split warps no build has.
    let joined: Val = v;
    for (const init of this.inOtherArms(file, decl)) {
      const other = init ? evaluator.eval(init, { vals: new Map(), self: null }) : TOP;
      if (other.k !== 'num') return v;
      joined = join(joined, other);
    }
    return joined;
  }

  /**
   * The initialisers another build gives a constant the view declares in an arm of an undecided
   * `#if` (arm-declarations.ts): one per arm the view leaves out, null for an arm that does not
   * declare it with one.
   */
  private inOtherArms(file: string, decl: OutlineConstant): Array<Expr | null> {
    const unitFile = this.unit.files.get(file);
    if (!unitFile) return [];
    let arms = this.fileArms.get(file);
    if (!arms) this.fileArms.set(file, (arms = buildChoices(unitFile, 0, unitFile.text.length)));
    const others = arms.length ? otherArms(arms, unitFile.regions, decl.at) : null;
    if (!others) return [];
    const view = this.allArmsView(file, unitFile);
    return others.map((arm) => {
      const text = view.slice(arm.start, arm.end);
      const tree = this.parser.parseApart(text);
      try {
        const found = initialisersOf(tree.rootNode, decl.name);
        if (found.length !== 1 || tree.rootNode.hasError) return null;
        const builder = new ExprBuilder(
          { text, base: arm.start, macros: this.macroHooks(file) },
          { resolve: () => null, lambda: () => undefined, statements: () => undefined },
        );
        return builder.build(found[0]);
      } finally {
        tree.delete();
      }
    });
  }

  /** The parse view of `path` with every arm of its undecided groups kept (build-choices.ts). */
  private allArmsView(path: string, file: UnitFile): string {
    let view = this.allArmsViews.get(path);
    if (view === undefined) {
      view = parseView(allArmsText(file), (o) => this.macrosAt(path, o), this.macroNameSet);
      this.allArmsViews.set(path, view);
    }
    return view;
  }

  /** The resolver of names and calls for code in `scope`, following calls `depth` deep so far. */
  resolver(scope: FunctionScope, depth: number): Resolver {
    return {
      name: (name, templateArgs, evaluate) => this.nameValue(name, templateArgs, scope, evaluate),
      call: (callee, args, _exprs, at) => this.callValue(callee, args, scope, depth, at),
      writesThrough: (callee, index) => this.writesThrough(callee, index, scope),
      sizeofType: (type) => {
        const b = scope.bindings.get(type.trim());
        return b && isType(b) ? sizeofType(b.type) : null;
      },
      construct: (type, args) => this.construct(type, args, scope, depth),
      templateParameter: (name) => {
        const b = scope.bindings.get(name);
        return b === undefined ? null : isType(b) ? top(`\`${name}\` is a type`) : b;
      },
      file: scope.file,
      namesNothing: (name) => this.namesNothing(name, scope),
    };
  }

  /**
   * `name` is a macro of the unit that stands for a number wherever it is defined (`#define BLOCK
   * 512`), and nothing else of that name is declared: no function, variable, enumerator, class,
   * alias, class member, template parameter or capture in any file the unit reads. A macro that
   * renames (`#define cudaLaunchCooperativeKernel hipLaunchCooperativeKernel`, ggml's HIP build)
   * names what a header the unit cannot read declares: never taken so.
   */
  private namesNothing(name: string, from: FunctionScope): boolean {
    if (!/^[A-Za-z_]\w*$/.test(name) || !this.macroNameSet.has(name)) return false;
    if (this.unit.macrosWhere(notANumber).has(name)) return false;
    if (from.bindings.has(name) || from.captures?.has(name) || this.index().has(name)) return false;
    return !this.memberNames().has(name);
  }

  private members: Set<string> | null = null;

  /** The names of every class's fields in the unit. */
  private memberNames(): Set<string> {
    if (!this.members) {
      this.members = new Set();
      for (const entry of this.index().values())
        for (const { record } of entry.records) for (const f of record.fields) this.members.add(f.name);
    }
    return this.members;
  }

  private nameValue(
    name: string,
    templateArgs: TemplateArg[] | null,
    from: FunctionScope,
    evaluate: (e: Expr) => Val,
  ): Val | null {
    const captured = from.captures?.get(name);
    if (captured) return captured;
    const bound = from.bindings.get(name);
    if (bound) return isType(bound) ? top(`\`${name}\` is a type`) : bound;
    // `Policy::n_threads` of a type parameter: the member of the type it is bound to, or, read with no
    // instance, known only per instantiation.
    const cut = name.lastIndexOf('::');
    if (cut > 0) {
      const owner = name.slice(0, cut).replace(/^::/, '').trim();
      const type = from.bindings.get(owner);
      if (type && isType(type)) {
        if (type.open) return top(type.open.why, type.open.bits);
        if (type.type !== owner)
          return this.nameValue(`${type.type}::${name.slice(cut + 2)}`, templateArgs, from, evaluate);
      }
    }
    const base = name
      .replace(/<[^<>]*(?:<[^<>]*>[^<>]*)*>/g, '')
      .split('::')
      .pop()!;
    const entry = this.index().get(base);
    if (!entry) return null;
    const constants = this.lookup(name, from.scope, this.constantsScoped(base, entry.constants));
    // `x128::size`, `Packed128<float>::size`: a static constant of a class template's instance.
    if (name.includes('::') && (constants.length === 0 || constants.every((c) => c.decl.inTemplate))) {
      const member = this.templateMemberConstant(name, from);
      if (member) return member;
    }
    if (constants.length) {
      const values = constants.map((c) => this.constantValue(c));
      const first = values[0];
      // Declarations that agree are one constant; ones that differ (two namespaces a `using` joins) are not known.
      return values.every((v) => valKey(v) === valKey(first))
        ? first
        : top(`\`${name}\` is declared more than once with different values`);
    }
    const functions = this.lookup(name, from.scope, this.functionsScoped(base));
    if (functions.length) {
      const ref: FnRef = {
        name: name.replace(/^::/, ''),
        templateArgs: templateArgs
          ? templateArgs.map((t) =>
              'type' in t ? { type: this.boundType(t.type, from) } : { value: evaluate(t.expr) },
            )
          : null,
        written: templateArgs,
        ...(templateArgs ? { writtenIn: from.file } : {}),
      };
      return { k: 'fn', refs: [ref] };
    }
    return null;
  }

  /**
   * A static constant of a class template's instance, named through its class (`Packed128<float>::size`)
   * or an alias of one (`x128::size` after `typedef Packed128<floatX> x128;`): its initialiser
   * evaluated with the template's parameters bound to the arguments, aliases read through. Null
   * where the class is not one template of the program with as many parameters, or the constant
   * is not its own.
   */
  private templateMemberConstant(name: string, from: FunctionScope): Val | null {
    const cut = name.lastIndexOf('::');
    const member = name.slice(cut + 2);
    const owner = this.expandAlias(name.slice(0, cut).replace(/^::/, '').trim(), from);
    const open = owner.indexOf('<');
    if (open < 0 || !owner.endsWith('>')) return null;
    const className = owner.slice(0, open).trim().split('::').pop()!;
    const args = templateArgumentsOf(owner).map((a) => this.expandAlias(a, from));
    const records = this.recordsNamed(className).filter((r) => r.record.templateParams);
    if (records.length !== 1) return null;
    const { record } = records[0];
    const params = record.templateParams!;
    if (params.length !== args.length) return null;
    const inner = [...record.scope, record.name];
    const decl = (this.index().get(member)?.constants ?? []).find((c) => sameScope(c.decl.scope, inner));
    if (!decl) return null;
    if (!decl.decl.isConst || !decl.decl.initAt || this.evaluating.has(decl.decl) || this.evaluating.size > 64)
      return null;
    // A value argument is read where the class is named: `L<BLOCK>::P` in `h<128>` is `L<128>::P`.
    const bindings = new Map<string, TemplateBinding>();
    for (let k = 0; k < params.length; k++) {
      if (params[k].kind === 'type') bindings.set(params[k].name, { k: 'type-arg', type: args[k] });
      else bindings.set(params[k].name, this.valueArgument(args[k], from));
    }
    const instance = params.map((p) => {
      const b = bindings.get(p.name)!;
      return isType(b) ? b.type : valKey(b);
    });
    const key = `${decl.file}\u0000${decl.decl.at[0]}\u0000${record.qualified}<${instance.join(', ')}>`;
    const kept = this.memberConstants.get(key);
    if (kept) return kept;
    this.evaluating.add(decl.decl);
    let v: Val;
    try {
      const e = this.expressionAt(decl.file, decl.decl.initAt);
      const scope: FunctionScope = { file: decl.file, scope: decl.decl.scope, bindings };
      const ir: FunctionIR = { blocks: [], exit: 0, locals: [], params: [], lambdas: [] };
      v = e ? new Evaluator(ir, this.resolver(scope, 0)).eval(e, { vals: new Map(), self: null }) : TOP;
    } finally {
      this.evaluating.delete(decl.decl);
    }
    this.memberConstants.set(key, v);
    return v;
  }

  /** A class template's value argument as written where it is named (a number, or what the scope makes of it). */
  private valueArgument(text: string, from: FunctionScope): Val {
    const n = Number(text);
    if (text !== '' && Number.isInteger(n)) return num(n);
    const bound = from.bindings.get(text);
    if (bound) return isType(bound) ? top(`\`${text}\` is a type`) : bound;
    return this.evaluateSpelled(from.file, text, [0, 0], from) ?? top(`\`${text}\` is not a number here`);
  }

  /** A type read through the program's aliases and the scope's type arguments (`floatX` → `float`). */
  private expandAlias(type: string, from: FunctionScope): string {
    let t = type.replace(/\s+/g, ' ').trim();
    for (let k = 0; k < 8; k++) {
      const bound = from.bindings.get(t);
      if (bound && isType(bound)) {
        t = bound.type;
        continue;
      }
      if (!/^(?:::)?[A-Za-z_][\w:]*$/.test(t)) return t;
      const aliased = this.typeAlias(t, from.scope);
      if (aliased === null) return t;
      t = aliased;
    }
    return t;
  }

  /** The constant `name` means from `from`, where it is declared and its value, for a note. */
  describeConstant(
    name: string,
    from: FunctionScope,
  ): { kind: string; file: string; at: number; value: number | null } | null {
    const base = name
      .replace(/<[^<>]*(?:<[^<>]*>[^<>]*)*>/g, '')
      .split('::')
      .pop()!;
    const entry = this.index().get(base);
    if (!entry) return null;
    const found = this.lookup(name, from.scope, this.constantsScoped(base, entry.constants));
    if (found.length === 0) return null;
    const c = found[0];
    const v = this.constantValue(c);
    return {
      kind: c.decl.kind === 'enumerator' ? 'enumerator' : 'const',
      file: c.file,
      at: c.decl.at[0],
      value: v.k === 'num' && v.values.length === 1 ? v.values[0] : null,
    };
  }

  private boundType(type: string, from: FunctionScope): string {
    const b = from.bindings.get(type.trim());
    return b && isType(b) ? b.type : type;
  }

  private functionsScoped(base: string): Array<ProgramFunction & { scope: readonly string[] }> {
    let list = this.scopedFunctions.get(base);
    if (!list) {
      list = this.functionsNamed(base).map((f) => ({ ...f, scope: nameScope(f.fn) }));
      this.scopedFunctions.set(base, list);
    }
    return list;
  }

  private constantsScoped(
    base: string,
    constants: ReadonlyArray<{ file: string; decl: OutlineConstant }>,
  ): Array<{ file: string; decl: OutlineConstant; scope: readonly string[] }> {
    let list = this.scopedConstants.get(base);
    if (!list) {
      list = constants.map((c) => ({ ...c, scope: c.decl.scope }));
      this.scopedConstants.set(base, list);
    }
    return list;
  }

  /** The functions of the program a function value may call, given the number of arguments (shared: never changed). */
  resolveCallee(ref: FnRef, argCount: number, from: FunctionScope): readonly ProgramFunction[] {
    const key = `${ref.name}\u0000${argCount}\u0000${from.scope.join('\u0001')}`;
    let kept = this.callees.get(key);
    if (!kept) {
      kept = this.computeCallee(ref, argCount, from);
      this.callees.set(key, kept);
    }
    return kept;
  }

  private computeCallee(ref: FnRef, argCount: number, from: FunctionScope): ProgramFunction[] {
    const base = ref.name
      .replace(/<[^<>]*(?:<[^<>]*>[^<>]*)*>/g, '')
      .split('::')
      .pop()!;
    const candidates = this.lookup(ref.name, from.scope, this.functionsScoped(base));
    const takes = (c: ProgramFunction, strict: boolean) => {
      const required = c.fn.params.filter((p) => !p.defaultAt && !p.variadic).length;
      const variadic = c.fn.params.some((p) => p.variadic);
      return (argCount >= required || !strict) && (variadic || argCount <= c.fn.params.length);
    };
    // Fewer arguments than a definition takes: its defaults are in a declaration out of view.
    let fit = candidates.filter((c) => takes(c, true));
    if (fit.length === 0) fit = candidates.filter((c) => takes(c, false));
    // A declaration and its definition are one function: keep the definitions when there are.
    const defined = fit.filter((c) => c.fn.bodyAt);
    return defined.length ? defined : fit;
  }

  /** resolveCallee, narrowed by the arguments' shapes among overloads. */
  resolveCall(ref: FnRef, args: ReadonlyArray<Val | undefined>, from: FunctionScope): ProgramFunction[] {
    return bestOverloads(this.resolveCallee(ref, args.length, from), args);
  }

  private writesThrough(callee: Val, index: number, from: FunctionScope): boolean {
    if (callee.k !== 'fn') return false;
    for (const ref of callee.refs)
      for (const c of this.resolveCallee(ref, index + 1, from)) {
        const p = c.fn.params[index];
        if (p && writableReference(p.text)) return true;
      }
    return false;
  }

  private callValue(callee: Val, args: Val[], from: FunctionScope, depth: number, at: Expr): CallOutcome | null {
    void at;
    // `T(args)`: an object of a class the program defines, made by whichever constructor takes them.
    if (callee.k === 'fn' && callee.refs.length === 1) {
      const base = callee.refs[0].name.replace(/<.*$/, '').split('::').pop()!;
      if (this.functionsNamed(base).some((f) => isConstructor(f.fn))) {
        const made = this.construct(base, args, from, depth);
        return made ? { value: made, paramsOut: null } : null;
      }
    }
    const target = this.callTargetOf(callee, args, from);
    if (!target) return null;
    const result = this.analyzeCall(
      target.pf,
      { args, bindings: target.bindings, self: target.self, passed: args.length },
      depth + 1,
    );
    if (!result) return null;
    // A constructor called by its class's name makes the object.
    if (isConstructor(target.pf.fn)) return result.self ? { value: result.self, paramsOut: null } : null;
    // What the callee leaves in a parameter reaches the caller only through one of its references
    // (an overload that takes it by value changes its own copy).
    const params = target.pf.fn.params;
    const paramsOut = result.paramsOut.map((v, k) =>
      params[k] && !params[k].variadic && writableReference(params[k].text) ? v : undefined,
    );
    return { value: result.returns, paramsOut };
  }

  /** What a call of a function value (or of an object's `operator()`) runs: one function with its bindings. */
  callTargetOf(
    callee: Val,
    args: ReadonlyArray<Val | undefined>,
    from: FunctionScope,
  ): { pf: ProgramFunction; bindings: Map<string, TemplateBinding>; self: Val | null } | null {
    const argCount = args.length;
    if (callee.k === 'fn' && callee.refs.length === 1) {
      const t = this.callTarget(callee.refs[0], args, from);
      if (!t) return null;
      return { ...t, self: isConstructor(t.pf.fn) ? this.emptyObject(t.pf.fn.className!, from) : null };
    }
    if (callee.k === 'agg' && callee.type) {
      const type = callee.type.replace(/<.*$/, '').split('::').pop()!;
      const ops = this.functionsNamed('operator()').filter((f) => f.fn.className === type && f.fn.bodyAt);
      const fit = ops.filter((f) => f.fn.params.some((p) => p.variadic) || f.fn.params.length === argCount);
      if (fit.length !== 1) return null;
      return { pf: fit[0], bindings: new Map(), self: callee };
    }
    return null;
  }

  /** An object of a class before its constructor runs: its fields unknown, of their types' shapes. */
  emptyObject(className: string, from: FunctionScope, params = 0): Val {
    const records = this.lookup(
      className,
      from.scope,
      this.recordsNamed(className).map((r) => ({ ...r, scope: r.record.scope })),
    );
    const fields = new Map<string, Val>();
    for (const f of records[0]?.record.fields ?? [])
      fields.set(f.name, shapeOf(f.type, top(`\`${f.name}\` is a member set at run time`, params)));
    return { k: 'agg', type: className, fields };
  }

  private construct(type: string, args: Val[], from: FunctionScope, depth: number): Val | null {
    const name = type.replace(/<.*$/, '').trim().split('::').pop()!;
    if (!/^[A-Za-z_]\w*$/.test(name)) return null;
    const ctors = this.functionsNamed(name).filter((f) => isConstructor(f.fn) && f.fn.bodyAt);
    const fit = bestOverloads(
      ctors.filter((f) => {
        const required = f.fn.params.filter((p) => !p.defaultAt && !p.variadic).length;
        return args.length >= required && args.length <= f.fn.params.length;
      }),
      args,
    );
    if (fit.length === 0) return null;
    let made: Val | null = null;
    for (const ctor of fit) {
      const result = this.analyzeCall(
        ctor,
        { args, bindings: new Map(), self: this.emptyObject(name, from), passed: args.length },
        depth + 1,
      );
      const v = result?.self ?? null;
      if (!v) return null;
      made = made ? join(made, v) : v;
    }
    return made;
  }

  /** The one function a reference calls with its template arguments bound, or null. */
  callTarget(
    ref: FnRef,
    args: ReadonlyArray<Val | undefined>,
    from: FunctionScope,
  ): { pf: ProgramFunction; bindings: Map<string, TemplateBinding> } | null {
    const targets = this.resolveCall(ref, args, from).filter((c) => c.fn.bodyAt && !c.fn.global);
    if (targets.length !== 1) return null;
    const pf = targets[0];
    return { pf, bindings: this.bindTemplate(pf, ref, from) };
  }

  /** Template parameters bound from the explicit template arguments, then the defaults. */
  bindTemplate(pf: ProgramFunction, ref: FnRef, from: FunctionScope): Map<string, TemplateBinding> {
    const bindings = this.bindClassTemplate(pf, ref.name, from);
    const params = pf.fn.templateParams ?? [];
    params.forEach((p, k) => {
      const given = ref.templateArgs?.[k];
      if (!given) return;
      // `f<SmallPolicy>`: a name the parser cannot tell from a value is a type where the parameter is one.
      const written = ref.written?.[k];
      const name = !written
        ? null
        : 'type' in written
          ? written.type.trim()
          : written.expr.k === 'name' && p.kind === 'type'
            ? written.expr.name
            : null;
      // The caller's own type parameter, read with no instance, stays open here too.
      const outer = name !== null ? from.bindings.get(name) : undefined;
      if (outer && isType(outer) && outer.open) bindings.set(p.name, outer);
      else if (name !== null && p.kind === 'type' && 'value' in given)
        bindings.set(p.name, { k: 'type-arg', type: this.boundType(name, from) });
      else bindings.set(p.name, 'type' in given ? { k: 'type-arg', type: given.type } : given.value);
    });
    for (const p of params) {
      if (bindings.has(p.name) || p.defaultText === null) continue;
      if (p.kind === 'type') bindings.set(p.name, { k: 'type-arg', type: p.defaultText });
      else {
        const v = this.evaluateText(pf.file, p.defaultText, { file: pf.file, scope: pf.fn.scope, bindings });
        if (v) bindings.set(p.name, v);
      }
    }
    void from;
    return bindings;
  }

  /**
   * The class template whose body defines the member function `pf` (the innermost record around
   * it), or null. A member defined outside its class names the parameters in its own template
   * header, which `pf`'s template parameters hold already.
   */
  private classTemplateOf(pf: ProgramFunction): OutlineRecord | null {
    const className = pf.fn.className;
    if (!className) return null;
    const [start, end] = pf.fn.definitionAt;
    let inner: OutlineRecord | null = null;
    for (const { file, record } of this.recordsNamed(className))
      if (file === pf.file && record.at[0] <= start && end <= record.at[1] && (!inner || record.at[0] >= inner.at[0]))
        inner = record;
    return inner?.templateParams?.length ? inner : null;
  }

  /**
   * A member of a class template called as `C<args>::f`: the class's parameters bound to the
   * arguments (read where the call is), then to their defaults. Called otherwise (on an object, or
   * read alone), they are what each instance makes them: unknown here, and never a namespace's
   * constant of the same name, which they hide.
   */
  private bindClassTemplate(pf: ProgramFunction, called: string, from: FunctionScope): Map<string, TemplateBinding> {
    const bindings = new Map<string, TemplateBinding>();
    const record = this.classTemplateOf(pf);
    // A partial specialization's parameters are not the arguments' places.
    if (!record || record.specializationArgs) return bindings;
    const params = record.templateParams!;
    const qualifier = called
      .replace(/\btemplate\s+/g, '')
      .split(/::(?![^<>]*>)/)
      .slice(0, -1)
      .pop();
    const written = qualifier && qualifier.trim().startsWith(`${record.name}<`) ? templateArgumentsOf(qualifier) : null;
    if (written && written.length <= params.length) {
      written.forEach((a, k) =>
        bindings.set(
          params[k].name,
          params[k].kind === 'type' ? { k: 'type-arg', type: this.expandAlias(a, from) } : this.valueArgument(a, from),
        ),
      );
      const inClass: FunctionScope = { file: pf.file, scope: pf.fn.scope, bindings };
      for (const p of params.slice(written.length)) {
        if (p.defaultText === null) break;
        const v: TemplateBinding | null =
          p.kind === 'type'
            ? { k: 'type-arg', type: p.defaultText }
            : this.evaluateText(pf.file, p.defaultText, inClass);
        if (v) bindings.set(p.name, v);
      }
    }
    return bindings;
  }

  /** Each parameter of `pf`'s class template that `bindings` leaves open, as known only per instance. */
  private withClassParameters(
    pf: ProgramFunction,
    bindings: ReadonlyMap<string, TemplateBinding>,
  ): ReadonlyMap<string, TemplateBinding> {
    const record = this.classTemplateOf(pf);
    const open = record?.templateParams!.filter((p) => !bindings.has(p.name)) ?? [];
    if (open.length === 0) return bindings;
    const out = new Map(bindings);
    for (const p of open)
      out.set(
        p.name,
        p.kind === 'type'
          ? {
              k: 'type-arg',
              type: p.name,
              open: { why: perInstantiation(p.name, record!.name), bits: CLASS_TEMPLATE_BIT },
            }
          : top(perInstantiation(p.name, record!.name), CLASS_TEMPLATE_BIT),
      );
    return out;
  }

  /**
   * A call's arguments with the parameters it leaves out bound to the default arguments `pf` (a
   * declaration of the unit) gives them: what another unit's definition of it is called with.
   */
  argumentsWithDefaults(pf: ProgramFunction, args: ReadonlyArray<Val | undefined>): Array<Val | undefined> {
    return args.length < pf.fn.params.length ? this.withDefaults(pf, args, args.length, new Map()) : [...args];
  }

  /** The arguments of a call with the parameters it does not pass bound to their default arguments. */
  private withDefaults(
    pf: ProgramFunction,
    args: ReadonlyArray<Val | undefined>,
    passed: number,
    bindings: ReadonlyMap<string, TemplateBinding>,
  ): Array<Val | undefined> {
    const out = [...args];
    pf.fn.params.forEach((p, k) => {
      if (k < passed || p.variadic) return;
      const e = p.defaultAt ? this.expressionAt(pf.file, p.defaultAt) : null;
      const ir: FunctionIR = { blocks: [], exit: 0, locals: [], params: [], lambdas: [] };
      out[k] = e
        ? new Evaluator(ir, this.resolver({ file: pf.file, scope: pf.fn.scope, bindings }, MAX_CALL_DEPTH)).eval(e, {
            vals: new Map(),
            self: null,
          })
        : top(`\`${p.name ?? 'a parameter'}\` has its default in a declaration out of view`);
    });
    return out;
  }

  /** The IR of a lambda written at `at` in `path` (its own locals; what it captures is read by name). */
  lambdaIR(path: string, at: Range): FunctionIR | null {
    const key = `${path}\u0000lambda@${at[0]}`;
    if (this.irs.has(key)) return this.irs.get(key)!;
    const ir = this.buildIR(path, at, true);
    this.irs.set(key, ir);
    return ir;
  }

  /** A lambda analysed with its arguments and the enclosing function's captured values. */
  analyzeLambda(
    path: string,
    at: Range,
    call: { args: ReadonlyArray<Val | undefined>; scope: FunctionScope },
    depth: number,
    observer?: Observer,
  ): FunctionValues | null {
    if (depth > MAX_CALL_DEPTH) return null;
    const ir = this.lambdaIR(path, at);
    if (!ir) return null;
    const id = `${path}\u0000lambda@${at[0]}`;
    if (this.stack.includes(id)) return null;
    this.stack.push(id);
    try {
      return analyzeFunctionValues({ ir, resolver: this.resolver(call.scope, depth), params: call.args }, observer);
    } finally {
      this.stack.pop();
    }
  }

  /** An expression (of no function's locals) evaluated in `scope`. */
  evaluateIn(e: Expr, scope: FunctionScope): Val {
    const ir: FunctionIR = { blocks: [], exit: 0, locals: [], params: [], lambdas: [] };
    return new Evaluator(ir, this.resolver(scope, MAX_CALL_DEPTH - 1)).eval(e, { vals: new Map(), self: null });
  }

  /**
   * Tokens spelled out (an attribute's argument), evaluated in `scope`; every node placed at `at`.
   * With `expandAt`, the macros in the text are expanded first, as the unit has them at that offset of `path`.
   */
  evaluateSpelled(path: string, written: string, at: Range, scope: FunctionScope, expandAt?: number): Val | null {
    let text = written;
    if (expandAt !== undefined) {
      const macros = this.unit.macrosAt(path, expandAt);
      try {
        text = spell(
          expandTokens(toExpand(tokenize(written)), (name) => {
            const state = macros.state(name);
            return state.options.length === 1 ? state.options[0] : null;
          }),
        );
      } catch (e) {
        if (e instanceof ExpansionLimit) return null;
        throw e;
      }
    }
    const prefix = 'auto __v = (';
    const tree = this.parser.parseApart(`${prefix}${text});`);
    try {
      const value = findFirst(tree.rootNode, 'parenthesized_expression');
      const inner = value?.namedChildren[0];
      if (!inner || inner.hasError) return null;
      const builder = new ExprBuilder(
        { text: `${prefix}${text});`, macros: null },
        { resolve: () => null, lambda: () => undefined, statements: () => undefined },
      );
      const e = builder.withMap(
        () => at,
        null,
        () => builder.build(inner),
      );
      return this.evaluateIn(e, scope);
    } finally {
      tree.delete();
    }
  }

  /** A small expression written in a file (a template parameter's default), evaluated in `scope`. */
  evaluateText(path: string, text: string, scope: FunctionScope): Val | null {
    const f = this.file(path);
    if (!f) return null;
    const at = f.view.indexOf(text);
    const e = at >= 0 ? this.expressionAt(path, [at, at + text.length]) : null;
    if (!e) return null;
    const ir: FunctionIR = { blocks: [], exit: 0, locals: [], params: [], lambdas: [] };
    return new Evaluator(ir, this.resolver(scope, MAX_CALL_DEPTH)).eval(e, { vals: new Map(), self: null });
  }

  /**
   * A function analysed with its arguments (and template parameters and object) bound: what it
   * returns and its locals' values; null past the depth bound or when it has no body.
   */
  analyzeCall(
    pf: ProgramFunction,
    call: {
      args: ReadonlyArray<Val | undefined>;
      bindings: ReadonlyMap<string, TemplateBinding>;
      self: Val | null;
      /** Called with this many arguments: the parameters after them take their defaults. Absent: analysed alone. */
      passed?: number;
    },
    depth: number,
    observer?: (scope: FunctionScope, depth: number) => Observer,
  ): FunctionValues | null {
    if (depth > MAX_CALL_DEPTH) return null;
    const ir = this.functionIR(pf);
    if (!ir) return null;
    call = { ...call, bindings: this.withClassParameters(pf, call.bindings) };
    if (call.passed !== undefined && call.passed < pf.fn.params.length)
      call = { ...call, args: this.withDefaults(pf, call.args, call.passed, call.bindings) };
    const id = functionKey(pf);
    const key = `${id}\u0000${call.args.map((a) => (a ? valKey(a) : '-')).join(',')}\u0000${[...call.bindings].map(([n, b]) => `${n}=${isType(b) ? b.type : valKey(b)}`).join(',')}\u0000${call.self ? valKey(call.self) : ''}`;
    if (!observer && this.calls.has(key)) return this.calls.get(key)!;
    if (this.stack.includes(id)) return null; // recursion
    this.stack.push(id);
    try {
      const scope: FunctionScope = {
        file: pf.file,
        scope: pf.fn.className ? pf.fn.scope : pf.fn.scope,
        bindings: call.bindings,
      };
      const result = analyzeFunctionValues(
        { ir, resolver: this.resolver(scope, depth), params: call.args, self: call.self },
        observer?.(scope, depth),
      );
      if (!observer) this.calls.set(key, result);
      return result;
    } finally {
      this.stack.pop();
    }
  }
}

/** Why a template parameter read with no instance of its template has no value. */
export function perInstantiation(param: string, template: string): string {
  return `\`${param}\` is a template parameter of \`${template}\`, known only per instantiation`;
}

/** A definition that is not a number written with numbers and operators (`512`, `(32 * 8)`). */
function notANumber(def: MacroDef): boolean {
  if (def.params !== null || def.body === null) return true;
  return !def.body.some((t) => t.kind === 'number') || def.body.some((t) => t.kind !== 'number' && t.kind !== 'punct');
}

/**
 * Whether a parameter as written is a reference the callee may write through (`int &threads`,
 * `dim3& block`, `const float *&p`), not one to const (`const Params& p`). Read from the text: the
 * `&` is the declarator's and `const` a qualifier beside the type, neither in the type as the
 * outline keeps it.
 */
export function writableReference(param: string): boolean {
  const text = param.replace(/=[\s\S]*$/, '');
  const amp = text.indexOf('&');
  if (amp < 0) return false;
  const before = text.slice(0, amp);
  // `const T *&p`: the pointer itself is written; `T *const &p` is not.
  const star = before.lastIndexOf('*');
  return !/\bconst\b/.test(star >= 0 ? before.slice(star) : before);
}

/**
 * Of overloads that take this many arguments, those the arguments match best, as C++ ranks them
 * closely enough: a dim3 passed to a dim3 parameter, a number to a number, before conversions.
 */
export function bestOverloads(
  candidates: readonly ProgramFunction[],
  args: ReadonlyArray<Val | undefined>,
): ProgramFunction[] {
  if (candidates.length <= 1) return [...candidates];
  const score = (c: ProgramFunction) =>
    args.reduce((s, a, k) => {
      const p = c.fn.params[k];
      if (!a || !p) return s;
      const isDim3 = /\b(dim3|uint3)\b/.test(p.type);
      if (a.k === 'dim3') return s + (isDim3 ? 2 : /^(auto|[A-Z]\w*)$/.test(p.type.trim()) ? 1 : 0);
      if (a.k === 'num') return s + (isDim3 ? 1 : 2);
      return s + 1;
    }, 0);
  const best = Math.max(...candidates.map(score));
  return candidates.filter((c) => score(c) === best);
}

/** An unknown of a declared type: a dim3 field by field, anything else as it is. */
export function shapeOf(type: string, unknown: Val): Val {
  return /^(const\s+)?(::)?(dim3|uint3)$/.test(type.trim())
    ? { k: 'dim3', x: unknown, y: unknown, z: unknown }
    : unknown;
}

/** A function's identity in the program (two that one macro use writes stand at the same place). */
export function functionKey(pf: ProgramFunction): string {
  return `${pf.file}\u0000${pf.fn.definitionAt[0]}\u0000${pf.fn.expansion?.at[0] ?? ''}`;
}

/** What a header computation read: the unit's macros, and whatever else its table names. */
interface KeptReads<E> {
  reads: MacroReads;
  extra: E | undefined;
}

/** Headers' parse views, kept by path and view (see UnitProgram.reading). */
const headerViews = readsTable<KeptReads<string>, string>('header parse views');

/** Headers' outlines, with the expansions of the macro uses that declare functions (see fileScopeExpansions). */
const headerOutlines = readsTable<
  KeptReads<readonly [string, string | undefined]>,
  { outline: FileOutline; snippets: Array<[string, Snippet]> }
>('header outlines');

/** Header functions' IR, by path, place and text. */
const headerIRs = readsTable<KeptReads<string>, FunctionIR | null>('header function IRs');

/** A header's outline, kept by its view's text: the units that include it read it once. */
const outlineOfText = memoByText(
  'file outlines',
  (view: string, _parser: SnippetParser) => view,
  (view: string, parser: SnippetParser) => {
    const tree = parser.parseApart(view);
    try {
      return outlineOf(tree.rootNode, view);
    } finally {
      tree.delete();
    }
  },
);

/**
 * The namespace a `{` at `k` opens (its name, `` for an anonymous one or `extern "C"`), or null
 * when it opens anything else (a function's body, a class's).
 */
function namespaceOpening(tokens: ReadonlyArray<{ text: string; kind: string }>, k: number): string | null {
  let j = k - 1;
  const name: string[] = [];
  while (j >= 0 && (tokens[j].kind === 'ident' || tokens[j].text === '::') && tokens[j].text !== 'namespace')
    name.unshift(tokens[j--].text);
  if (j >= 0 && tokens[j].text === 'namespace') return name.join('').replace(/^inline/, '');
  if (k >= 2 && tokens[k - 1].kind === 'string' && tokens[k - 2].text === 'extern') return '';
  return null;
}

/** The scope a function is named from: a constructor is named by its class (`dh::LaunchKernel(...)`). */
function nameScope(fn: OutlineFunction): readonly string[] {
  return isConstructor(fn) ? fn.scope.slice(0, -1) : fn.scope;
}

export function isConstructor(fn: OutlineFunction): boolean {
  return fn.className !== null && fn.name === fn.className;
}

function endsWith(scope: readonly string[], qualifier: readonly string[]): boolean {
  if (qualifier.length > scope.length) return false;
  const off = scope.length - qualifier.length;
  return qualifier.every((q, k) => scope[off + k] === q);
}

function argsKey(args: ReadonlyArray<string | null>): string {
  return args.map((x) => (x === null ? '' : normalType(x))).join(',');
}

/** A parameter's type as declared, pointers and references included (`const T* __restrict__`). */
function declaredType(p: OutlineParam): string {
  let text = p.text.replace(/\s*=[^=].*$/s, '');
  if (p.name) {
    const at = text.lastIndexOf(p.name);
    if (at >= 0) text = text.slice(0, at) + text.slice(at + p.name.length);
  }
  return normalType(text);
}

/** A type written with single spaces between words only (`const float *` → `const float*`). */
function normalType(t: string): string {
  return t
    .replace(/\s+/g, ' ')
    .replace(/\s*([*&<>,()[\]])\s*/g, '$1')
    .trim();
}

/**
 * The template parameters `names` that make `pattern` read as `type` (`Param<T1, T2>` against
 * `Param<half, float>`: T1 = half, T2 = float); null when it cannot.
 */
function deduceFrom(pattern: string, type: string, names: readonly string[]): Map<string, string> | null {
  const order: string[] = [];
  const source = normalType(pattern)
    .split(/\b([A-Za-z_]\w*)\b/)
    .map((part, k) => {
      if (k % 2 === 1 && names.includes(part)) {
        const seen = order.indexOf(part);
        if (seen >= 0) return `\\${seen + 1}`;
        order.push(part);
        return '(.+?)';
      }
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  const m = new RegExp(`^${source}$`).exec(normalType(type));
  if (!m) return null;
  return new Map(order.map((name, k) => [name, m[k + 1]]));
}

function onlyOne<T>(items: readonly T[]): T | null {
  return items.length === 1 ? items[0] : null;
}

/**
 * Whether a specialization's arguments (`<float, 128>`, or `<T, 128>` of a partial one) select
 * `args`: its parameters bound when it does, false when some argument provably differs (two
 * integers, two distinct built-in types), 'unknown' when the text cannot tell.
 */
function matchSpecialization(record: OutlineRecord, args: readonly string[]): Map<string, string> | false | 'unknown' {
  const pattern = record.specializationArgs ?? [];
  if (pattern.length !== args.length) return false;
  const names = (record.templateParams ?? []).map((p) => p.name);
  const bound = deduceFrom(pattern.join(','), args.join(','), names);
  if (bound) return bound;
  const dependent = (a: string) => names.some((n) => new RegExp(`\\b${n}\\b`).test(a));
  return pattern.some((p, k) => !dependent(p) && provablyDifferent(p, args[k])) ? false : 'unknown';
}

/** Built-in type names by the type they spell (LP64: `int64_t` is `long`). */
const BUILTIN_TYPES: Readonly<Record<string, string>> = {
  bool: 'bool',
  char: 'char',
  'signed char': 'signed char',
  int8_t: 'signed char',
  'unsigned char': 'unsigned char',
  uint8_t: 'unsigned char',
  short: 'short',
  int16_t: 'short',
  'unsigned short': 'unsigned short',
  uint16_t: 'unsigned short',
  int: 'int',
  int32_t: 'int',
  unsigned: 'unsigned int',
  'unsigned int': 'unsigned int',
  uint32_t: 'unsigned int',
  long: 'long',
  int64_t: 'long',
  'unsigned long': 'unsigned long',
  uint64_t: 'unsigned long',
  'long long': 'long long',
  'unsigned long long': 'unsigned long long',
  float: 'float',
  double: 'double',
  half: '__half',
  __half: '__half',
  half2: '__half2',
  __half2: '__half2',
  nv_bfloat16: '__nv_bfloat16',
  __nv_bfloat16: '__nv_bfloat16',
  nv_bfloat162: '__nv_bfloat162',
  __nv_bfloat162: '__nv_bfloat162',
  __nv_fp8_e4m3: '__nv_fp8_e4m3',
  __nv_fp8_e5m2: '__nv_fp8_e5m2',
  float2: 'float2',
  float4: 'float4',
};

/** Two template arguments that cannot name the same thing: two different integers, or two different built-in types. */
function provablyDifferent(a: string, b: string): boolean {
  const int = /^[+-]?\d+[uUlL]*$/;
  const x = a.trim();
  const y = b.trim();
  if (int.test(x) && int.test(y)) return parseInt(x, 10) !== parseInt(y, 10);
  const tx = BUILTIN_TYPES[normalType(x).replace(/^(?:std)?::/, '')];
  const ty = BUILTIN_TYPES[normalType(y).replace(/^(?:std)?::/, '')];
  return tx !== undefined && ty !== undefined && tx !== ty;
}

function sameScope(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, k) => x === b[k]);
}

function nodeAt(root: SyntaxNode, at: Range, type: string): SyntaxNode | null {
  let n: SyntaxNode | null = root.descendantForIndex(at[0], Math.max(at[0], at[1] - 1));
  while (n && !(n.type === type && n.startIndex === at[0] && n.endIndex === at[1])) n = n.parent;
  return n;
}

/**
 * The code of `[start, end)` is whole statements of one block: none of the block's statements
 * reaches into it from outside. An arm that is the body of an `if` without braces
 * (`if (c)` / `#ifdef A` / `x = 1;` / `#else` / `x = 2;`) is not: with every arm in the text,
 * the second would read as a statement after the `if`.
 */
function wholeStatements(root: SyntaxNode, start: number, end: number): boolean {
  let block: SyntaxNode | null = root.descendantForIndex(start, Math.max(start, end - 1));
  while (block && block.type !== 'compound_statement' && block.type !== 'translation_unit') block = block.parent;
  if (!block) return false;
  return block.namedChildren.every(
    (c) => !c || c.endIndex <= start || c.startIndex >= end || (c.startIndex >= start && c.endIndex <= end),
  );
}

function findFirst(root: SyntaxNode, type: string): SyntaxNode | null {
  const cursor = root.walk();
  try {
    for (;;) {
      if (cursor.nodeType === type) return cursor.currentNode;
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) if (!cursor.gotoParent()) return null;
    }
  } finally {
    cursor.delete();
  }
}

function lambdaParams(node: SyntaxNode): SyntaxNode | null {
  const d = node.childForFieldName('declarator');
  return d?.childForFieldName('parameters') ?? null;
}

export type { Env };

/** A macro whose body holds a `{`: a use may define something. */
function definesBlock(def: MacroDef): boolean {
  return def.body?.some((t) => t.text === '{') ?? false;
}
