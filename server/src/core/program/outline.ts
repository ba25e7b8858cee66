/**
 * A file's outline: the declarations at namespace and class scope a unit can name from anywhere
 * (functions, constants, enumerators, classes with their static members), each with its scope and
 * where it is written, read from the syntax tree of the unit's view of the file. Bodies and
 * initialisers are kept as ranges: the program (program.ts) builds their IR when an analysis asks.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import type { Range } from '../ir/expr';
import { declaredName, functionDeclaratorOf } from '../ir/function-ir';
import type { TemplateParam } from '../types';
import { memoByText } from '../incremental/kept-tables';
import { detach } from '../incremental/engine-seams';

export interface OutlineParam {
  /** The parameter as written, blanks normalised (`const float* __restrict__ a`). */
  text: string;
  name: string | null;
  type: string;
  /** The default argument's range, if any. */
  defaultAt: Range | null;
  variadic: boolean;
}

export interface OutlineFunction {
  name: string;
  /** Namespaces and classes, then the name: `ns::Launcher::operator()`. */
  qualified: string;
  /** Enclosing namespaces and classes, outermost first. */
  scope: string[];
  /** The class it is a member of (defined in it, or `C::f` outside). */
  className: string | null;
  global: boolean;
  device: boolean;
  host: boolean;
  constexpr: boolean;
  templateParams: TemplateParam[] | null;
  params: OutlineParam[];
  /** The definition (template header included), or the declaration. */
  at: Range;
  /** The function_definition node's own range (without the template header). */
  definitionAt: Range;
  nameAt: Range;
  /** From the first specifier to the parameters' closing parenthesis. */
  headerAt: Range;
  bodyAt: Range | null;
  /** Written by a macro used at file scope: the expansion (the program's key) and the definition's range in it. */
  expansion?: { key: string; at: Range };
  /** Internal linkage: `static` at namespace scope, or in an anonymous namespace (no other unit can call it). */
  internal?: true;
  /** Declared `inline` (or `__forceinline__`): every unit that calls it defines it. */
  inline?: true;
}

export interface OutlineConstant {
  name: string;
  qualified: string;
  scope: string[];
  type: string;
  /** The initialiser (an enumerator's value), or null. */
  initAt: Range | null;
  at: Range;
  kind: 'variable' | 'enumerator' | 'member';
  isConst: boolean;
  /** For an enumerator without a value: the one before it in its enum (its value plus one), null for the first. */
  previous?: string | null;
  /** Declared in a class template: its value may depend on the template's parameters. */
  inTemplate: boolean;
}

export interface OutlineRecord {
  name: string;
  qualified: string;
  scope: string[];
  templateParams: TemplateParam[] | null;
  fields: OutlineField[];
  /** Its layout is the plain C one its fields give: no base class, no alignment attribute. */
  plainLayout?: boolean;
  /** Of a specialization (`template<> struct V<float, 32>`): the arguments as written. */
  specializationArgs?: string[];
  /** Its member types (`using Type = float4;`, `typedef float4 Type;`), as written. */
  memberTypes?: Array<{ name: string; type: string }>;
  at: Range;
}

export interface OutlineField {
  name: string;
  /** The type as written before the declarator (`T1` of `const T1* p`). */
  type: string;
  /** `*`s of its declarator (`const T1* p`: 1). */
  pointers?: number;
  /** Declared as one object of `type` or a pointer to it: not an array, a bit-field, a reference or static. */
  plain?: boolean;
  /** A `static constexpr` or `static const` member: one compile-time value for the class, whatever the object. */
  staticConstant?: boolean;
}

/**
 * An explicit instantiation of a function template (`template void f<float>(float*, int);`): the
 * template arguments as written (null: deduced from the parameter types), and those types.
 */
export interface OutlineInstantiation {
  name: string;
  scope: string[];
  args: string[] | null;
  paramTypes: string[];
  at: Range;
}

export interface FileOutline {
  functions: OutlineFunction[];
  constants: OutlineConstant[];
  records: OutlineRecord[];
  /** Absent where an outline is made by hand (none known). */
  instantiations?: OutlineInstantiation[];
  /** Type aliases outside functions (`typedef Packed128<floatX> x128;`, `using V = float4;`). */
  aliases?: OutlineAlias[];
}

/** A type alias: the name it declares in its scope, and the type as written. */
export interface OutlineAlias {
  name: string;
  scope: string[];
  type: string;
}

/** Declarations nest (namespaces in classes in namespaces) at most this deep. */
const MAX_SCOPE_DEPTH = 64;

export function outlineOf(root: SyntaxNode, text: string): FileOutline {
  const out: FileOutline = { functions: [], constants: [], records: [], instantiations: [], aliases: [] };
  const walk = new OutlineWalk(text, out);
  for (const node of root.namedChildren) {
    if (!node) continue;
    // An item that parsed is read from its text alone: the same text anywhere gives the same outline.
    if (node.hasError) walk.item(node, [], null, null, 0, false);
    else {
      const kept = itemOutline(text.slice(node.startIndex, node.endIndex), { node, text });
      const d = node.startIndex;
      for (const f of kept.functions) out.functions.push(movedFunction(f, d));
      for (const c of kept.constants)
        out.constants.push({ ...c, at: moved(c.at, d), initAt: c.initAt && moved(c.initAt, d) });
      for (const r of kept.records) out.records.push({ ...r, at: moved(r.at, d) });
      for (const i of kept.instantiations ?? []) out.instantiations!.push({ ...i, at: moved(i.at, d) });
      out.aliases!.push(...(kept.aliases ?? []));
    }
  }
  return out;
}

/** A top-level item's outline, its places counted from the item's start; kept by the item's text. */
const itemOutline = memoByText(
  'outline items',
  (item: string, _in: { node: SyntaxNode; text: string }) => item,
  (_item: string, { node, text }: { node: SyntaxNode; text: string }): FileOutline => {
    const out: FileOutline = { functions: [], constants: [], records: [], instantiations: [], aliases: [] };
    const d = node.startIndex;
    new OutlineWalk(text, out).item(node, [], null, null, 0, false);
    // Its strings its own: a slice of the text would keep this version's whole text alive.
    return detach({
      functions: out.functions.map((f) => movedFunction(f, -d)),
      constants: out.constants.map((c) => ({ ...c, at: moved(c.at, -d), initAt: c.initAt && moved(c.initAt, -d) })),
      records: out.records.map((r) => ({ ...r, at: moved(r.at, -d) })),
      instantiations: (out.instantiations ?? []).map((i) => ({ ...i, at: moved(i.at, -d) })),
      aliases: out.aliases ?? [],
    });
  },
);

function moved(r: Range, d: number): Range {
  return [r[0] + d, r[1] + d];
}

function movedFunction(f: OutlineFunction, d: number): OutlineFunction {
  return {
    ...f,
    params: f.params.map((p) => (p.defaultAt ? { ...p, defaultAt: moved(p.defaultAt, d) } : p)),
    at: moved(f.at, d),
    definitionAt: moved(f.definitionAt, d),
    nameAt: moved(f.nameAt, d),
    headerAt: moved(f.headerAt, d),
    bodyAt: f.bodyAt && moved(f.bodyAt, d),
    ...(f.expansion ? { expansion: { ...f.expansion, at: moved(f.expansion.at, d) } } : {}),
  };
}

class OutlineWalk {
  /** Anonymous namespaces the walk is in: what is declared there has internal linkage. */
  private anonymous = 0;

  constructor(
    private readonly text: string,
    private readonly out: FileOutline,
  ) {}

  private slice(n: SyntaxNode): string {
    return this.text.slice(n.startIndex, n.endIndex);
  }

  items(
    parent: SyntaxNode,
    scope: string[],
    className: string | null,
    template: { params: TemplateParam[]; at: Range } | null,
    depth: number,
    inTemplate: boolean,
  ): void {
    if (depth > MAX_SCOPE_DEPTH) return;
    for (const node of parent.namedChildren) if (node) this.item(node, scope, className, template, depth, inTemplate);
  }

  item(
    node: SyntaxNode,
    scope: string[],
    className: string | null,
    template: { params: TemplateParam[]; at: Range } | null,
    depth: number,
    inTemplate: boolean,
  ): void {
    switch (node.type) {
      case 'namespace_definition': {
        const name = node.childForFieldName('name');
        const body = node.childForFieldName('body');
        // An anonymous namespace adds nothing to names; `a::b` nests two.
        const parts = name ? this.slice(name).replace(/\s+/g, '').split('::') : [];
        if (!name) this.anonymous++;
        try {
          if (body) this.items(body, [...scope, ...parts], null, null, depth + 1, inTemplate);
        } finally {
          if (!name) this.anonymous--;
        }
        return;
      }
      case 'linkage_specification': {
        const body = node.childForFieldName('body');
        if (body?.type === 'declaration_list') this.items(body, scope, className, null, depth + 1, inTemplate);
        else if (body) this.item(body, scope, className, null, depth + 1, inTemplate);
        return;
      }
      case 'declaration_list':
      case 'field_declaration_list':
      case 'ERROR':
        this.items(node, scope, className, template, depth + 1, inTemplate);
        return;
      case 'template_declaration': {
        const params = templateParams(node.childForFieldName('parameters'), (n) => this.slice(n));
        const inner = node.namedChildren.find((c) => c && c.type !== 'template_parameter_list' && c.type !== 'comment');
        if (inner)
          this.item(
            inner,
            scope,
            className,
            { params, at: [node.startIndex, node.endIndex] },
            depth + 1,
            inTemplate || true,
          );
        return;
      }
      case 'function_definition':
        this.function(node, scope, className, template, true);
        return;
      case 'template_instantiation':
        this.instantiation(node, scope);
        return;
      case 'declaration':
      case 'field_declaration':
        this.declaration(node, scope, className, template, inTemplate);
        return;
      case 'struct_specifier':
      case 'class_specifier':
      case 'union_specifier':
        this.record(node, scope, template, depth, inTemplate || !!template);
        return;
      case 'enum_specifier':
        this.enumeration(node, scope, inTemplate);
        return;
      case 'type_definition': {
        const type = node.childForFieldName('type');
        const names = node.childrenForFieldName('declarator').filter((d) => d?.type === 'type_identifier');
        // C's `typedef struct { … } Point;` names an anonymous record by the typedef; `typedef struct
        // node { … } Node;` makes `Node` another name of `node`.
        if (type && /struct_specifier|class_specifier/.test(type.type)) {
          const tag = type.childForFieldName('name');
          if (!tag && names[0] && type.childForFieldName('body'))
            this.record(type, scope, template, depth + 1, inTemplate || !!template, this.slice(names[0]));
          else this.item(type, scope, className, template, depth + 1, inTemplate);
          const target = tag ? this.slice(tag) : names[0] ? this.slice(names[0]) : null;
          if (target && !template)
            for (const d of names)
              if (d && this.slice(d) !== target) this.alias(this.slice(d), target, scope, className);
        } else if (type && type.type === 'enum_specifier')
          this.item(type, scope, className, template, depth + 1, inTemplate);
        // `typedef T NAME;`: a plain name declared (not a pointer, array or function type).
        else if (type && !template)
          for (const d of node.childrenForFieldName('declarator'))
            if (d?.type === 'type_identifier') this.alias(this.slice(d), this.slice(type), scope, className);
        return;
      }
      case 'alias_declaration': {
        const name = node.childForFieldName('name');
        const type = node.childForFieldName('type');
        if (name && type && !template) this.alias(this.slice(name), this.slice(type), scope, className);
        return;
      }
      case 'access_specifier':
      case 'comment':
        return;
    }
  }

  /** A file's or namespace's alias (a class's member types may depend on its parameters: not kept here). */
  private alias(name: string, type: string, scope: string[], className: string | null): void {
    if (className !== null) return;
    (this.out.aliases ??= []).push({ name, scope, type: type.replace(/\s+/g, ' ').trim() });
  }

  private function(
    node: SyntaxNode,
    scope: string[],
    className: string | null,
    template: { params: TemplateParam[]; at: Range } | null,
    isDefinition: boolean,
  ): void {
    const declarator =
      functionDeclaratorOf(node) ??
      (node.childForFieldName('declarator')?.type === 'function_declarator'
        ? node.childForFieldName('declarator')
        : null);
    if (!declarator) return;
    let nameNode = declarator.childForFieldName('declarator');
    if (!nameNode) return;
    // `KERNEL_ATTRS k(...)` with a macro not in view reads as a qualified name without its `::`: the
    // word before the name is an unknown specifier, the name is the last identifier.
    if (nameNode.type === 'qualified_identifier' && !this.slice(nameNode).includes('::')) {
      let inner: SyntaxNode | null = nameNode;
      while (inner?.type === 'qualified_identifier') inner = inner.childForFieldName('name');
      if (inner) nameNode = inner;
    }
    const written = this.slice(nameNode).replace(/\s+/g, '');
    // `C::f` defined outside its class: a member of C.
    const parts = written.split('::');
    const name = parts[parts.length - 1];
    const qualifier = parts.slice(0, -1).filter((p) => p !== '');
    const owner = qualifier.length ? qualifier[qualifier.length - 1].replace(/<.*$/, '') : className;
    const fullScope = [...scope, ...qualifier.map((q) => q.replace(/<.*$/, ''))];
    const specifiers = this.text.slice(node.startIndex, declarator.startIndex);
    const global = /\b__global__\b/.test(specifiers);
    const device = /\b__device__\b/.test(specifiers);
    const host = /\b__host__\b/.test(specifiers) || (!global && !device);
    const body = isDefinition ? node.childForFieldName('body') : null;
    // A static member function keeps the class's linkage; a static free function is the unit's own.
    const internal =
      this.anonymous > 0 ||
      (className === null &&
        qualifier.length === 0 &&
        node.namedChildren.some((c) => c?.type === 'storage_class_specifier' && this.slice(c) === 'static'));
    const inline = /\b(?:inline|__forceinline__|__inline__)\b/.test(specifiers);
    const params: OutlineParam[] = [];
    for (const p of declarator.childForFieldName('parameters')?.namedChildren ?? []) {
      if (!p || !/parameter_declaration/.test(p.type)) continue;
      const pname = declaredName(p.childForFieldName('declarator'));
      const type = p.childForFieldName('type');
      const dflt = p.childForFieldName('default_value');
      params.push({
        text: this.slice(p).replace(/\s+/g, ' ').trim(),
        name: pname ? this.slice(pname) : null,
        type: type ? this.slice(type).replace(/\s+/g, ' ') : '',
        defaultAt: dflt ? [dflt.startIndex, dflt.endIndex] : null,
        variadic: p.type === 'variadic_parameter_declaration',
      });
    }
    this.out.functions.push({
      name,
      qualified: [...fullScope, name].join('::'),
      scope: fullScope,
      className: owner,
      global,
      device,
      host,
      constexpr: /\bconstexpr\b/.test(specifiers),
      templateParams: template?.params ?? null,
      params,
      at: template ? template.at : [node.startIndex, node.endIndex],
      definitionAt: [node.startIndex, node.endIndex],
      nameAt: [nameNode.startIndex, nameNode.endIndex],
      headerAt: [
        template ? template.at[0] : node.startIndex,
        declarator.childForFieldName('parameters')?.endIndex ?? declarator.endIndex,
      ],
      bodyAt: body ? [body.startIndex, body.endIndex] : null,
      ...(internal ? { internal: true as const } : {}),
      ...(inline ? { inline: true as const } : {}),
    });
  }

  private instantiation(node: SyntaxNode, scope: string[]): void {
    const declarator = node.childForFieldName('declarator');
    if (declarator?.type !== 'function_declarator') return;
    const callee = declarator.childForFieldName('declarator');
    if (!callee) return;
    const nameNode = callee.type === 'template_function' ? callee.childForFieldName('name') : callee;
    if (!nameNode) return;
    const parts = this.slice(nameNode).replace(/\s+/g, '').split('::');
    const argList = callee.type === 'template_function' ? callee.childForFieldName('arguments') : null;
    const args = argList
      ? argList.namedChildren
          .filter((a): a is SyntaxNode => !!a && a.type !== 'comment')
          .map((a) => this.slice(a).replace(/\s+/g, ' ').trim())
      : null;
    const paramTypes: string[] = [];
    for (const p of declarator.childForFieldName('parameters')?.namedChildren ?? []) {
      if (!p || p.type !== 'parameter_declaration') continue;
      // The type with the declarator's pointers and references, without the parameter's name.
      const name = declaredName(p.childForFieldName('declarator'));
      const text =
        this.text.slice(p.startIndex, name ? name.startIndex : p.endIndex) +
        (name ? this.text.slice(name.endIndex, p.endIndex) : '');
      paramTypes.push(text.replace(/\s+/g, ' ').trim());
    }
    (this.out.instantiations ??= []).push({
      name: parts[parts.length - 1],
      scope: [...scope, ...parts.slice(0, -1).filter((x) => x !== '')],
      args,
      paramTypes,
      at: [node.startIndex, node.endIndex],
    });
  }

  private declaration(
    node: SyntaxNode,
    scope: string[],
    className: string | null,
    template: { params: TemplateParam[]; at: Range } | null,
    inTemplate: boolean,
  ): void {
    const type = node.childForFieldName('type');
    if (
      type &&
      /struct_specifier|class_specifier|enum_specifier|union_specifier/.test(type.type) &&
      type.childForFieldName('body')
    )
      this.item(type, scope, className, null, 1, inTemplate);
    const declarators = node.childrenForFieldName('declarator').filter((d): d is SyntaxNode => !!d);
    for (const d of declarators) {
      if (d.type === 'function_declarator' || functionDeclaratorOf(node) === d) {
        this.function(node, scope, className, template, false);
        continue;
      }
      const name = declaredName(d);
      if (!name) continue;
      const specifiers = this.text.slice(node.startIndex, (declarators[0] ?? d).startIndex);
      // `int x = 5;` or a field `static constexpr int k = 5;` (the value a child of the declaration).
      const value =
        d.type === 'init_declarator'
          ? d.childForFieldName('value')
          : node.type === 'field_declaration'
            ? node.childForFieldName('default_value')
            : null;
      const n = this.slice(name);
      const isMember = node.type === 'field_declaration';
      // A non-static field is per object, not a constant of the class.
      if (isMember && !/\bstatic\b/.test(specifiers)) continue;
      this.out.constants.push({
        name: n,
        qualified: [...scope, n].join('::'),
        scope,
        type: type ? this.slice(type).replace(/\s+/g, ' ') : '',
        initAt:
          value && value.type !== 'argument_list' && value.type !== 'initializer_list'
            ? [value.startIndex, value.endIndex]
            : value?.type === 'initializer_list' && value.namedChildren.length === 1
              ? [value.namedChildren[0]!.startIndex, value.namedChildren[0]!.endIndex]
              : null,
        at: [node.startIndex, node.endIndex],
        kind: isMember ? 'member' : 'variable',
        isConst: /\b(const|constexpr)\b/.test(specifiers) || /\bconst\b/.test(this.slice(d)),
        inTemplate,
      });
    }
  }

  private record(
    node: SyntaxNode,
    scope: string[],
    template: { params: TemplateParam[]; at: Range } | null,
    depth: number,
    inTemplate: boolean,
    typedefName: string | null = null,
  ): void {
    const nameNode = node.childForFieldName('name');
    const body = node.childForFieldName('body');
    if (!nameNode && typedefName === null) {
      // An anonymous struct's static members are unreachable by name; its nested enums still count.
      if (body)
        for (const c of body.namedChildren) if (c?.type === 'enum_specifier') this.enumeration(c, scope, inTemplate);
      return;
    }
    const written = nameNode ? this.slice(nameNode).replace(/\s+/g, ' ') : typedefName!;
    const name = written.replace(/\s+/g, '').replace(/<.*$/, '');
    const inner = [...scope, name];
    const fields: OutlineField[] = [];
    const memberTypes: Array<{ name: string; type: string }> = [];
    for (const f of body?.namedChildren ?? []) {
      if (f?.type === 'alias_declaration' || f?.type === 'type_definition') {
        memberTypes.push(...memberTypesOf(f, (n) => this.slice(n)));
        continue;
      }
      if (f?.type !== 'field_declaration') continue;
      const type = f.childForFieldName('type');
      const isStatic = f.namedChildren.some((c) => c?.type === 'storage_class_specifier');
      const isConstant =
        f.namedChildren.some((c) => c?.type === 'storage_class_specifier' && this.slice(c) === 'static') &&
        f.namedChildren.some(
          (c) => c?.type === 'type_qualifier' && (this.slice(c) === 'const' || this.slice(c) === 'constexpr'),
        );
      const bitfield = f.namedChildren.some((c) => c?.type === 'bitfield_clause');
      for (const d of f.childrenForFieldName('declarator')) {
        const n = d && d.type !== 'function_declarator' ? declaredName(d) : null;
        if (!n) continue;
        let pointers = 0;
        let x: SyntaxNode | null = d;
        while (x && x.type === 'pointer_declarator') {
          pointers++;
          x = x.childForFieldName('declarator');
        }
        fields.push({
          name: this.slice(n),
          type: type ? this.slice(type).replace(/\s+/g, ' ') : '',
          pointers,
          plain: !isStatic && !bitfield && x?.type === 'field_identifier',
          ...(isConstant ? { staticConstant: true } : {}),
        });
      }
    }
    // The words before the body: a base class (`: B`) or an alignment (`__align__(16)`, `alignas`) change the layout.
    const head = this.text.slice(node.startIndex, body ? body.startIndex : node.endIndex);
    const plainLayout = !/\b(?:__align__|alignas|__attribute__|__declspec)\b/.test(head) && !/[^:]:[^:]/.test(head);
    this.out.records.push({
      name,
      qualified: inner.join('::'),
      scope,
      templateParams: template?.params ?? null,
      fields,
      plainLayout,
      ...(written.includes('<') ? { specializationArgs: templateArgumentsOf(written) } : {}),
      ...(memberTypes.length ? { memberTypes } : {}),
      at: [node.startIndex, node.endIndex],
    });
    if (body) this.items(body, inner, name, null, depth + 1, inTemplate);
  }

  private enumeration(node: SyntaxNode, scope: string[], inTemplate: boolean): void {
    const nameNode = node.childForFieldName('name');
    const body = node.childForFieldName('body');
    if (!body) return;
    const enumName = nameNode ? this.slice(nameNode) : null;
    const scoped = /^\s*enum\s+(class|struct)\b/.test(this.text.slice(node.startIndex, node.endIndex));
    // A plain enum's enumerators are named in the enclosing scope (and, since C++11, as `E::A` too).
    const scopes = scoped ? [[...scope, enumName!]] : enumName ? [scope, [...scope, enumName]] : [scope];
    let previous: string | null = null;
    for (const e of body.namedChildren) {
      if (e?.type !== 'enumerator') continue;
      const n = e.childForFieldName('name');
      const v = e.childForFieldName('value');
      if (!n) continue;
      const name = this.slice(n);
      for (const s of scopes)
        this.out.constants.push({
          name,
          qualified: [...s, name].join('::'),
          scope: s,
          type: 'int',
          initAt: v ? [v.startIndex, v.endIndex] : null,
          at: [e.startIndex, e.endIndex],
          kind: 'enumerator',
          isConst: true,
          previous: v ? undefined : previous,
          inTemplate,
        });
      previous = [...scopes[0], name].join('::');
    }
  }
}

/** `using Type = float4;` or `typedef float4 Type, *Ptr;`: the plain names it declares and their type. */
function memberTypesOf(node: SyntaxNode, slice: (n: SyntaxNode) => string): Array<{ name: string; type: string }> {
  const type = node.childForFieldName('type');
  if (!type) return [];
  const text = slice(type).replace(/\s+/g, ' ').trim();
  if (node.type === 'alias_declaration') {
    const name = node.childForFieldName('name');
    return name ? [{ name: slice(name), type: text }] : [];
  }
  return node
    .childrenForFieldName('declarator')
    .filter((d): d is SyntaxNode => d?.type === 'type_identifier')
    .map((d) => ({ name: slice(d), type: text }));
}

/** The arguments of `Name<A, B<C, D>, 4>`, split at its top-level commas. */
export function templateArgumentsOf(written: string): string[] {
  const open = written.indexOf('<');
  const close = written.lastIndexOf('>');
  if (open < 0 || close < open) return [];
  const args: string[] = [];
  let level = 0;
  let from = open + 1;
  for (let k = open + 1; k < close; k++) {
    const c = written[k];
    if (c === '<' || c === '(') level++;
    else if (c === '>' || c === ')') level--;
    else if (c === ',' && level === 0) {
      args.push(written.slice(from, k).trim());
      from = k + 1;
    }
  }
  args.push(written.slice(from, close).trim());
  return args.filter((a) => a !== '');
}

export function templateParams(list: SyntaxNode | null, slice: (n: SyntaxNode) => string): TemplateParam[] {
  const out: TemplateParam[] = [];
  for (const p of list?.namedChildren ?? []) {
    if (!p) continue;
    const isType = /type_parameter_declaration|template_template_parameter/.test(p.type);
    const name =
      p.childForFieldName('name') ??
      declaredName(p.childForFieldName('declarator')) ??
      p.namedChildren.find((c) => c?.type === 'type_identifier' || c?.type === 'identifier') ??
      null;
    if (!name) continue;
    const dflt = p.childForFieldName('default_value') ?? p.childForFieldName('default_type');
    out.push({ name: slice(name), kind: isType ? 'type' : 'value', defaultText: dflt ? slice(dflt) : null });
  }
  return out;
}
