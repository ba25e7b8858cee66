/**
 * The other translation units a document's unit calls into. A function the unit declares but does
 * not define (external linkage) is defined in another unit, and joined to it by the linker: this
 * finds that definition as the build would, among the workspace files that include the header
 * declaring it (a launcher's `.cu` includes its own header), and, where none of them defines it,
 * the one file of the workspace that launches from a function of that name. Several definitions,
 * or none, give none: a same-named function of a file the declaration does not lead to is never
 * taken while a file it leads to defines one.
 */
import type { WorkspaceIndex } from '../facts/workspace-index';
import type { LaunchCollector, LinkedDefinition, Linker } from '../facts/launch-sites';
import type { ProgramFunction } from '../program/program';
import type { OutlineFunction, OutlineParam } from '../program/outline';

/** A workspace file read as its own translation unit. */
export interface OtherUnit {
  path: string;
  /** The functions written in the file, as its unit reads them. */
  functions: readonly OutlineFunction[];
  collector: LaunchCollector;
}

export interface OtherUnitsInput {
  workspace: WorkspaceIndex;
  /** The files of the calling unit: a definition there is the unit's own, not another's. */
  own: ReadonlySet<string>;
  /** Reads a workspace file as its own unit, or null when it cannot be read. */
  read(path: string): OtherUnit | null;
}

/** The linker of a unit: calls of functions it declares only, joined to the one definition in another unit. */
export function linkerOf({ workspace, own, read }: OtherUnitsInput): Linker {
  const found = new Map<string, LinkedDefinition | null>();
  const units = new Map<string, OtherUnit | null>();
  const unit = (path: string) => {
    if (!units.has(path)) units.set(path, read(path));
    return units.get(path)!;
  };
  const definitionsIn = (paths: readonly string[], declared: readonly ProgramFunction[]): LinkedDefinition[] => {
    const out: LinkedDefinition[] = [];
    for (const path of paths) {
      const u = unit(path);
      if (!u) continue;
      for (const fn of u.functions)
        if (declared.some((d) => defines(fn, d.fn)))
          out.push({ collector: u.collector, pf: { file: path, fn }, unit: path });
    }
    // Types written two ways (`uint` and `unsigned int`, a typedef) name one function: the types as
    // written only tell overloads of the same arity apart.
    if (out.length < 2) return out;
    const signatures = new Set(declared.map((d) => signature(d.fn.params)));
    return out.filter((d) => signatures.has(signature(d.pf.fn.params)));
  };
  return (declared) => {
    if (declared.length === 0) return null;
    const { name, qualified } = declared[0].fn;
    const headers = [...new Set(declared.map((d) => d.file))];
    const key = `${qualified}\u0000${headers.join('\u0001')}\u0000${declared.map((d) => signature(d.fn.params)).join('\u0001')}`;
    if (found.has(key)) return found.get(key)!;
    const including = [...new Set(headers.flatMap((h) => workspace.includersNaming(h, name)))].filter(
      (p) => !own.has(p),
    );
    let definitions = definitionsIn(including, declared);
    if (definitions.length === 0)
      definitions = definitionsIn(
        workspace.launchersNamed(name).filter((p) => !own.has(p) && !including.includes(p)),
        declared,
      );
    const result = definitions.length === 1 ? definitions[0] : null;
    found.set(key, result);
    return result;
  };
}

/**
 * Whether `fn` may be a definition with external linkage of the function `decl` declares: the same
 * qualified name, as many parameters, as many template parameters. A host
 * function only: a kernel's launch is not a call.
 */
function defines(fn: OutlineFunction, decl: OutlineFunction): boolean {
  if (fn.name !== decl.name || !fn.bodyAt || fn.internal || fn.inline || fn.global) return false;
  if (fn.qualified !== decl.qualified) return false;
  if ((fn.templateParams?.length ?? 0) !== (decl.templateParams?.length ?? 0)) return false;
  return arity(fn.params) === arity(decl.params);
}

function arity(params: readonly OutlineParam[]): number {
  return params.length === 1 && params[0].type.trim() === 'void' && !params[0].name ? 0 : params.length;
}

/** The parameters' types, blanks and names left out (`float *p` and `float*` are one type); `(void)` is `()`. */
function signature(params: readonly OutlineParam[]): string {
  const types = params.map((p) => {
    const dflt = p.text.indexOf('=');
    const text = dflt >= 0 ? p.text.slice(0, dflt) : p.text;
    const named = p.name ? text.replace(new RegExp(`\\b${p.name}\\b(?![\\s\\S]*\\b${p.name}\\b)`), '') : text;
    // `__restrict__` and a value's own `const` do not change which function it is.
    const plain = named.replace(/\b__restrict(?:__)?\b/g, ' ');
    return (/[*&]/.test(plain) ? plain : plain.replace(/\bconst\b/g, ' ')).replace(/\s+/g, '');
  });
  return types.length === 1 && types[0] === 'void' ? '' : types.join(',');
}
