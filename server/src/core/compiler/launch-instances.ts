/**
 * Which compiled instances of a kernel a launch can run. The launch's template arguments, as
 * written (numbers resolved where the source allows), are matched position by position against
 * each instance's, as the demangler spells them: `false` is `0`, `half` is `__half`, `int64_t` is
 * `long`, and the file's own `using`/`typedef` aliases are read through. An argument the launch
 * site cannot know (a parameter of the enclosing template, an alias it cannot see) matches every
 * instance, and so do arguments deduced from the call: then the launch may run any of the matching
 * instances, and says so, rather than picking one. Pure.
 */
import type { KernelInstance } from './kernel-resources';
import { normalizeTemplateArg, splitTemplateArgsText } from './template-args';

/** Names the launch site's file aliases to types (`using scalar_t = float;`). */
export type TypeAliases = ReadonlyMap<string, string>;

export interface InstanceMatch {
  /** The instances the launch can run: one when its arguments pick it, several when some are open, none when none fits. */
  instances: KernelInstance[];
  /** Argument positions the launch site leaves open (a name it cannot resolve), or null when the arguments are deduced. */
  open: number[] | null;
}

/**
 * The typedefs of the CUDA headers and <cstdint> (LP64, as nvcc compiles on Linux) that template
 * arguments are written with: mangled names spell the type they name.
 */
const BUILTIN_ALIASES: ReadonlyMap<string, string> = new Map([
  ['half', '__half'],
  ['half2', '__half2'],
  ['nv_half', '__half'],
  ['nv_half2', '__half2'],
  ['nv_bfloat16', '__nv_bfloat16'],
  ['nv_bfloat162', '__nv_bfloat162'],
  ['int8_t', 'signed char'],
  ['uint8_t', 'unsigned char'],
  ['int16_t', 'short'],
  ['uint16_t', 'unsigned short'],
  ['int32_t', 'int'],
  ['uint32_t', 'unsigned int'],
  ['int64_t', 'long'],
  ['uint64_t', 'unsigned long'],
  ['intptr_t', 'long'],
  ['uintptr_t', 'unsigned long'],
  ['ptrdiff_t', 'long'],
  ['ssize_t', 'long'],
  ['uint', 'unsigned int'],
  ['ushort', 'unsigned short'],
  ['ulong', 'unsigned long'],
]);

const BUILTIN_TYPE_WORDS: ReadonlySet<string> = new Set([
  'void',
  'bool',
  'char',
  'wchar_t',
  'char16_t',
  'char32_t',
  'short',
  'int',
  'long',
  'float',
  'double',
  'signed',
  'unsigned',
  'const',
  'volatile',
  '__half',
  '__half2',
  '__nv_bfloat16',
  '__nv_bfloat162',
  '__int128',
]);
const VECTOR_TYPE = /^(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]$/;

/**
 * The instances among `instances` that a launch with `templateArgs` (the launch finder's list, or
 * the text between `<` and `>`; null when written without) can run; see the module comment.
 * Instances without a mangled name (annotations) count only when no compiled one is known.
 */
export function matchInstances(
  instances: readonly KernelInstance[],
  templateArgs: readonly string[] | string | null | undefined,
  aliases: TypeAliases = new Map(),
): InstanceMatch {
  const compiled = instances.filter((i) => i.mangledName !== null);
  const pool = compiled.length ? compiled : [...instances];
  const wanted = typeof templateArgs === 'string' ? splitTemplateArgsText(templateArgs) : (templateArgs ?? null);
  if (!wanted || wanted.length === 0) {
    if (pool.length <= 1) return { instances: pool, open: null };
    const plain = pool.filter((i) => i.templateArgs.length === 0);
    return { instances: plain.length === 1 ? plain : pool, open: null };
  }
  const args = wanted.map((arg) => canonicalArg(arg, aliases));
  const open: number[] = [];
  args.forEach((arg, k) => {
    if (!isKnown(arg) && !pool.some((i) => k < i.templateArgs.length && sameArg(canonicalArg(i.templateArgs[k]), arg)))
      open.push(k);
  });
  const fits = (i: KernelInstance) =>
    args.every((arg, k) => open.includes(k) || sameArg(canonicalArg(i.templateArgs[k]), arg));
  // All arguments written: instances with exactly as many; else the written ones lead (defaults and deduced ones follow).
  const sameLength = pool.filter((i) => i.templateArgs.length === args.length && fits(i));
  if (sameLength.length) return { instances: sameLength, open };
  return { instances: pool.filter((i) => i.templateArgs.length > args.length && fits(i)), open };
}

/** A template argument in a comparable form: bools as 0/1, numbers normalised, aliases read through, types normalised. */
export function canonicalArg(arg: string, aliases: TypeAliases = new Map()): string {
  const trimmed = arg.trim();
  if (trimmed === 'true') return '1';
  if (trimmed === 'false') return '0';
  return normalizeTemplateArg(resolveAliases(trimmed, aliases));
}

/** Two canonical arguments name the same thing: equal, or one is the other with more scope (`Pair`, `ns::Pair`). */
function sameArg(a: string, b: string): boolean {
  return a === b || a.endsWith(`::${b}`) || b.endsWith(`::${a}`);
}

/** Known without the instances: a number, or a type made of builtin words (`unsigned int const*`, `__half`, `float4`). */
function isKnown(canonical: string): boolean {
  if (/^-?\d+$/.test(canonical)) return true;
  const words = canonical.replace(/[*&]/g, ' ').split(/\s+/).filter(Boolean);
  return words.length > 0 && words.every((w) => BUILTIN_TYPE_WORDS.has(w) || VECTOR_TYPE.test(w));
}

/** Replaces alias names (the file's, then the CUDA and <cstdint> ones) by the types they name, a few levels deep. */
function resolveAliases(text: string, aliases: TypeAliases): string {
  let out = text.replace(/\bstd::(?=u?int\d+_t\b|u?intptr_t\b|ptrdiff_t\b)/g, '');
  for (let depth = 0; depth < 4; depth++) {
    const next = out.replace(
      /(?<![\w:.])[A-Za-z_]\w*(?![\w(])/g,
      (word) => aliases.get(word) ?? BUILTIN_ALIASES.get(word) ?? word,
    );
    if (next === out) break;
    out = next;
  }
  return out;
}

/**
 * The type aliases a file writes (`using NAME = TYPE;`, `typedef TYPE NAME;`, at any scope), for
 * launches' template arguments. A name written with two different types, or also used as a
 * template parameter somewhere in the file, is left out: which one a launch sees depends on scope.
 */
export function findTypeAliases(text: string): Map<string, string> {
  const found = new Map<string, Set<string>>();
  const add = (name: string, type: string) => {
    const t = type.replace(/\s+/g, ' ').trim();
    if (!t || t === name) return;
    const set = found.get(name) ?? new Set<string>();
    set.add(t);
    found.set(name, set);
  };
  for (const m of text.matchAll(/(^|[;{}>)\s])using\s+([A-Za-z_]\w*)\s*=\s*([^;{}]+);/g)) {
    // `template <typename T> using V = vec<T, 4>;` is an alias template: left out.
    const before = text.slice(0, m.index + m[1].length).trimEnd();
    if (before.endsWith('>')) continue;
    add(m[2], m[3]);
  }
  for (const m of text.matchAll(/\btypedef\s+([^;{}()[\]]+?)\s+([A-Za-z_]\w*)\s*;/g)) add(m[2], m[1]);
  const templateParams = new Set<string>();
  for (const head of text.matchAll(/\btemplate\s*<([^<>]*(?:<[^<>]*>[^<>]*)*)>/g)) {
    for (const p of head[1].split(',')) {
      const name = /([A-Za-z_]\w*)\s*(?:=.*)?$/s.exec(p.trim());
      if (name) templateParams.add(name[1]);
    }
  }
  const aliases = new Map<string, string>();
  for (const [name, types] of found)
    if (types.size === 1 && !templateParams.has(name)) aliases.set(name, [...types][0]);
  return aliases;
}
