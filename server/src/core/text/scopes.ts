/**
 * Namespace and `extern "C"` blocks, found on the masked text by brace
 * matching, so that they survive the ERROR regions tree-sitter-cuda leaves in
 * real code.
 */
import { matchingClose, type SourceText } from './source-text';
import { memoByObject } from '../incremental/kept-tables';

export interface Scope {
  kind: 'namespace' | 'externC';
  /** Namespace name (`a::b` for nested definitions), `(anonymous namespace)`, or '' for extern "C". */
  name: string;
  /** Offsets of the opening and closing braces. */
  open: number;
  close: number;
}

/** The text's namespace and extern "C" blocks: found once per text, shared by the scanners that ask. */
export const findScopes: (source: SourceText) => readonly Scope[] = memoByObject('namespace scopes', scanScopes);

function scanScopes(source: SourceText): Scope[] {
  const scopes: Scope[] = [];
  const masked = source.masked;
  const re = /\b(?:inline\s+)?namespace\b\s*([A-Za-z_][\w:]*(?:\s*::\s*[A-Za-z_]\w*)*)?\s*\{|\bextern\s*"\s*"\s*\{/g;
  for (let m = re.exec(masked); m; m = re.exec(masked)) {
    const open = m.index + m[0].length - 1;
    // extern "C" masked as extern " ": check the original says C
    if (m[0].startsWith('extern') && !/^extern\s*"C"/.test(source.text.slice(m.index, open + 1))) continue;
    const close = matchingClose(masked, open);
    scopes.push({
      kind: m[0].startsWith('extern') ? 'externC' : 'namespace',
      name: m[0].startsWith('extern') ? '' : (m[1] ?? '(anonymous namespace)').replace(/\s+/g, ''),
      open,
      close: close < 0 ? masked.length : close,
    });
  }
  return scopes;
}

export function scopesAt(scopes: readonly Scope[], offset: number): Scope[] {
  return scopes.filter((s) => s.open < offset && offset < s.close);
}
