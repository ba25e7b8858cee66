/**
 * The file's functions as the syntax tree has them: by name (the cost model follows calls into
 * them), the kernels' definitions, and the `__device__` functions nothing in the file calls (read
 * on their own, their parameters unknown).
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import type { Kernel, Span } from '../types';

/** Function definitions by name: what the walks look up when a kernel calls a function. */
export type FunctionTable = Pick<ReadonlyMap<string, SyntaxNode>, 'get'>;

/**
 * collectFunctions, run on the first lookup of a name that `mayDefine` allows (a superset of the
 * file's function names, read from its text): most calls are to built-ins (`__syncthreads`).
 */
export function lazyFunctions(root: SyntaxNode, mayDefine: (name: string) => boolean = () => true): FunctionTable {
  let table: Map<string, SyntaxNode> | null = null;
  return {
    get: (name) =>
      mayDefine(name.startsWith('.') ? name.slice(1).replace(/#\d+$/, '') : name)
        ? (table ??= collectFunctions(root)).get(name)
        : undefined,
  };
}

/**
 * The file's function definitions by name; member functions of its structs and classes (an agent's
 * `Evaluate`, a selector's `add`) under `.name`, which calls through an object look up first.
 */
export function collectFunctions(root: SyntaxNode): Map<string, SyntaxNode> {
  const map = new Map<string, SyntaxNode>();
  forEachFunctionDefinition(root, (definition, member) => {
    const name = functionName(definition);
    if (!name) return;
    if (!member) {
      if (!map.has(name)) map.set(name, definition);
      return;
    }
    let key = `.${name}`;
    for (let k = 2; map.has(key) && k <= 4; k++) key = `.${name}#${k}`;
    if (!map.has(key)) map.set(key, definition);
  });
  return map;
}

/**
 * Where each name is called, by the last component of the callee (`f(...)`, `ns::f<T>(...)`,
 * `obj.f(...)`), and where a macro's body writes it as a call (`name(`, `name<...>(`).
 */
function callSites(root: SyntaxNode): Map<string, number[]> {
  const out = new Map<string, number[]>();
  const add = (name: string, at: number) => {
    const list = out.get(name);
    if (list) list.push(at);
    else out.set(name, [at]);
  };
  const cursor = root.walk();
  let done = false;
  while (!done) {
    const node = cursor.currentNode;
    if (node.type === 'call_expression') {
      const name = calleeName(node.childForFieldName('function'));
      if (name) add(name, node.startIndex);
    } else if (node.type === 'preproc_arg') {
      for (const m of node.text.matchAll(CALL_LIKE)) add(m[1], node.startIndex + m.index);
    }
    if (cursor.gotoFirstChild()) continue;
    while (!cursor.gotoNextSibling())
      if (!cursor.gotoParent()) {
        done = true;
        break;
      }
  }
  cursor.delete();
  return out;
}

function calleeName(fn: SyntaxNode | null): string | null {
  while (fn) {
    switch (fn.type) {
      case 'identifier':
      case 'field_identifier':
        return fn.text;
      case 'qualified_identifier':
        fn = fn.childForFieldName('name');
        break;
      case 'template_function':
      case 'template_method':
        fn = fn.childForFieldName('name');
        break;
      case 'field_expression':
        fn = fn.childForFieldName('field');
        break;
      case 'parenthesized_expression':
        fn = fn.namedChild(0);
        break;
      default:
        return null;
    }
  }
  return null;
}

/** A name written as a call: `name(`, `name<...>(`. */
const CALL_LIKE = /([A-Za-z_]\w*)\s*(?:<[^;{}()<>]*(?:<[^;{}()<>]*>[^;{}()<>]*)*>)?\s*\(/g;

const SCOPES: ReadonlySet<string> = new Set([
  'template_declaration',
  'namespace_definition',
  'declaration_list',
  'linkage_specification',
  'preproc_if',
  'preproc_ifdef',
  'preproc_else',
  'preproc_elif',
]);
const CLASSES: ReadonlySet<string> = new Set(['struct_specifier', 'class_specifier', 'union_specifier']);

/** Every function definition at file scope, in namespaces, templates and class bodies (`member`: in a class). */
function forEachFunctionDefinition(
  root: SyntaxNode,
  visitDefinition: (definition: SyntaxNode, member: boolean) => void,
): void {
  const visit = (node: SyntaxNode, member: boolean) => {
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type === 'function_definition') visitDefinition(child, member);
      else if (SCOPES.has(child.type)) visit(child, member);
      else if (
        CLASSES.has(child.type) ||
        (child.type === 'declaration' && child.namedChildren.some((c) => !!c && CLASSES.has(c.type)))
      ) {
        const specifier = CLASSES.has(child.type)
          ? child
          : child.namedChildren.find((c) => !!c && CLASSES.has(c.type))!;
        const body = specifier.childForFieldName('body');
        if (body) visit(body, true);
      }
    }
  };
  visit(root, false);
}

/**
 * The `__device__` functions (and device lambdas in host code) of a file that nothing in it calls:
 * helpers of a header without a kernel, members called from other files. Their branches are
 * analysed with their parameters unknown.
 */
export function uncalledDeviceFunctions(
  root: SyntaxNode,
  masked: string,
  isDevice: (definition: SyntaxNode) => boolean,
): Array<{ name: string; node: SyntaxNode }> {
  const found: Array<{ name: string; node: SyntaxNode }> = [];
  let calls: Map<string, number[]> | null = null;
  forEachFunctionDefinition(root, (definition) => {
    if (!definition.childForFieldName('body') || !isDevice(definition)) return;
    const name = functionName(definition);
    if (!name || /^operator\b/.test(name)) return;
    calls ??= callSites(root);
    // Called from outside its own body (overloads and recursion do not count as callers).
    if ((calls.get(name) ?? []).some((at) => at < definition.startIndex || at >= definition.endIndex)) return;
    found.push({ name, node: definition });
  });
  // `[=] __device__ (int i) { ... }` passed to a host-side launcher.
  for (const m of masked.matchAll(/\]\s*(?:\([^()]*\)\s*)?(?:mutable\s*)?__device__\b/g)) {
    let node: SyntaxNode | null = root.descendantForIndex(m.index);
    while (node && node.type !== 'lambda_expression') node = node.parent;
    if (node && !found.some((f) => f.node.id === node!.id)) found.push({ name: 'lambda', node });
  }
  return found;
}

function functionName(definition: SyntaxNode): string | null {
  let d: SyntaxNode | null = definition.childForFieldName('declarator');
  while (d && d.type !== 'function_declarator') d = d.childForFieldName('declarator');
  const name = d?.childForFieldName('declarator');
  if (!name) return null;
  const text = name.text;
  return text.slice(text.lastIndexOf(':') + 1);
}

/**
 * The definition node of each kernel: from the node at its body's first character up to the
 * function definition whose body starts there (no walk over the file's other definitions).
 */
export function findKernelDefinitions(root: SyntaxNode, kernels: readonly Kernel[]): Map<Kernel, SyntaxNode> {
  const found = new Map<Kernel, SyntaxNode>();
  for (const k of kernels) {
    if (!k.isDefinition || !k.bodySpan) continue;
    const { line: row, character: column } = k.bodySpan.start;
    for (let node: SyntaxNode | null = root.descendantForPosition({ row, column }); node; node = node.parent) {
      if (node.type !== 'function_definition') continue;
      const body = node.childForFieldName('body');
      if (body && body.startPosition.row === row && body.startPosition.column === column) {
        found.set(k, node);
        break;
      }
    }
  }
  return found;
}

export function spanOfNode(node: Pick<SyntaxNode, 'startPosition' | 'endPosition'>): Span {
  const { startPosition: start, endPosition: end } = node;
  return { start: { line: start.row, character: start.column }, end: { line: end.row, character: end.column } };
}
