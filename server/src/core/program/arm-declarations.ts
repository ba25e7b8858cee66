/**
 * A constant declared in an arm of an `#if` the unit cannot decide (`#ifdef USE_ROCM` / `constexpr
 * int kThreads = 64;` / `#else` / `... = 128;`) has another value in another build: the same name
 * declared in the other arms, read from the arms' own text (build-choices.ts).
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import type { BuildArm } from '../preprocess/build-choices';
import { stateAt } from '../preprocess/build-choices';
import type { Region } from '../preprocess/unit';

/**
 * The arms the view leaves out of the group whose arm (in the view) holds `at`, innermost group
 * first; null when `at` is in no such arm.
 */
export function otherArms(
  arms: readonly BuildArm[],
  regions: readonly Region[],
  at: readonly [number, number],
): BuildArm[] | null {
  let holder: BuildArm | null = null;
  for (const a of arms)
    if (a.start <= at[0] && at[1] <= a.end && (!holder || a.end - a.start < holder.end - holder.start)) holder = a;
  if (!holder || stateAt(regions, holder.start) === 'alternative') return null;
  const others = arms.filter(
    (a) => a.group === holder.group && a !== holder && stateAt(regions, a.start) === 'alternative',
  );
  return others.length ? others : null;
}

/** The initialisers of the declarations of `name` at the top of a piece of code (not in a function body). */
export function initialisersOf(root: SyntaxNode, name: string): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  const visit = (n: SyntaxNode, depth: number) => {
    if (depth > 8) return;
    for (const c of n.namedChildren) {
      if (!c) continue;
      if (c.type === 'declaration')
        for (const d of c.childrenForFieldName('declarator')) {
          if (d?.type !== 'init_declarator') continue;
          const declared = d.childForFieldName('declarator');
          const value = d.childForFieldName('value');
          if (declared?.type === 'identifier' && declared.text === name && value) out.push(value);
        }
      else if (c.type === 'namespace_definition' || c.type === 'declaration_list' || c.type === 'linkage_specification')
        visit(c, depth + 1);
    }
  };
  visit(root, 0);
  return out;
}
