/**
 * A demangler for the part of the Itanium C++ ABI that CUDA kernel names use:
 * plain and nested names, namespaces (anonymous ones too), template arguments
 * (types, integer/bool/enum literals, packs, template template arguments, the expressions of
 * dependent signatures: `is_primitive<T>::value`, `sizeof`, `decltype`, operators in array bounds),
 * builtin and qualified types, pointers, references, arrays, function types,
 * substitutions, template parameters, std:: abbreviations and lambdas.
 *
 * Pure: no tool is run. Unsupported or malformed input gives `null`; nothing throws.
 * The output follows GNU c++filt's spelling (`float const*`, `Outer<A<int> >`, `7ul`).
 */

export interface DemangledName {
  /** The function's own name without scope or template arguments: `reduce`. */
  readonly name: string;
  /** Scope and name without the final template arguments: `ns::reduce`. */
  readonly scopedName: string;
  /** Scope, name and template arguments: `ns::reduce<float, 256>`. */
  readonly qualifiedName: string;
  /** The enclosing scopes, outermost first: `['ns']`. Anonymous namespaces read `(anonymous namespace)`. */
  readonly scope: readonly string[];
  /** The function's template arguments, packs flattened: `['float', '256']`. */
  readonly templateArgs: readonly string[];
  /** Parameter types (`[]` for `()`), or null for an `extern "C"` name, whose parameters are not encoded. */
  readonly parameters: readonly string[] | null;
  /** The return type when the mangling encodes it (function templates), else null. */
  readonly returnType: string | null;
  /** Everything c++filt would print: `void ns::reduce<float, 256>(float const*, float*, int)`. */
  readonly signature: string;
  /** True when the input was not mangled (an `extern "C"` kernel). */
  readonly externC: boolean;
}

const MAX_INPUT_LENGTH = 8192;
const MAX_OUTPUT_LENGTH = 65536;
const MAX_DEPTH = 200;

/** nvcc's prefix for file-static kernels compiled with -rdc: `__nv_static_<n>_<file id>_` + mangled name. */
const NV_STATIC_PREFIX = /^__nv_static_\d+_[A-Za-z0-9_]*?_(?=_Z)/;
const C_IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Demangles one symbol as ptxas prints it. Returns null when it cannot (never throws). */
export function demangle(symbol: string): DemangledName | null {
  try {
    if (typeof symbol !== 'string' || symbol.length === 0 || symbol.length > MAX_INPUT_LENGTH) return null;
    const stripped = symbol.replace(NV_STATIC_PREFIX, '');
    if (!stripped.startsWith('_Z')) {
      if (!C_IDENTIFIER.test(stripped)) return null;
      return {
        name: stripped,
        scopedName: stripped,
        qualifiedName: stripped,
        scope: [],
        templateArgs: [],
        parameters: null,
        returnType: null,
        signature: stripped,
        externC: true,
      };
    }
    const { body, suffix } = splitCloneSuffix(stripped.slice(2));
    const parser = new Parser(body);
    const encoding = parser.parseEncoding();
    if (parser.pos !== body.length || encoding.kind !== 'function') return null;
    return describeFunction(encoding, suffix);
  } catch {
    return null;
  }
}

/** Splits GCC/LLVM clone suffixes (`.constprop.0`, `.isra.1`) from the mangled body. */
function splitCloneSuffix(text: string): { body: string; suffix: string } {
  const dot = text.search(/\.[A-Za-z_]/);
  if (dot < 0) return { body: text, suffix: '' };
  const clones = text.slice(dot).match(/\.[A-Za-z_]+(?:\.\d+)*/g) ?? [];
  return { body: text.slice(0, dot), suffix: clones.map((c) => ` [clone ${c}]`).join('') };
}

// ---------------------------------------------------------------------------
// The tree the parser builds.

type Node =
  | { kind: 'text'; text: string } // builtin, source name, literal
  | { kind: 'qualified'; scope: Node; name: Node } // a::b
  | { kind: 'template'; name: Node; args: Node[] } // a<b, c>
  | { kind: 'pointer'; inner: Node }
  | { kind: 'lref'; inner: Node }
  | { kind: 'rref'; inner: Node }
  | { kind: 'cv'; inner: Node; quals: string } // const, volatile, restrict
  | { kind: 'vendor'; inner: Node; qual: string } // U8__vector
  | { kind: 'vector'; inner: Node; dim: string } // Dv4_f
  | { kind: 'array'; inner: Node; dim: string }
  | { kind: 'ptrmem'; cls: Node; member: Node }
  | { kind: 'fntype'; ret: Node; params: Node[]; quals: string }
  | { kind: 'pack'; elems: Node[] } // a template argument pack
  | { kind: 'expansion'; inner: Node } // Dp <type>
  | { kind: 'function'; name: Node; ret: Node | null; params: Node[]; templateArgs: Node[] | null; quals: string }
  | { kind: 'local'; fn: Node; entity: Node }; // f()::entity

const BUILTINS: Record<string, string> = {
  v: 'void',
  w: 'wchar_t',
  b: 'bool',
  c: 'char',
  a: 'signed char',
  h: 'unsigned char',
  s: 'short',
  t: 'unsigned short',
  i: 'int',
  j: 'unsigned int',
  l: 'long',
  m: 'unsigned long',
  x: 'long long',
  y: 'unsigned long long',
  n: '__int128',
  o: 'unsigned __int128',
  f: 'float',
  d: 'double',
  e: 'long double',
  g: '__float128',
  z: '...',
};

const D_BUILTINS: Record<string, string> = {
  d: 'decimal64',
  e: 'decimal128',
  f: 'decimal32',
  h: 'half',
  i: 'char32_t',
  s: 'char16_t',
  u: 'char8_t',
  a: 'auto',
  c: 'decltype(auto)',
  n: 'decltype(nullptr)',
};

/** Operators of expressions in names (array bounds, decltype, template arguments), by their two-letter codes. */
const UNARY_OPERATORS: Readonly<Record<string, string>> = { ng: '-', ps: '+', nt: '!', co: '~', de: '*' };
const BINARY_OPERATORS: Readonly<Record<string, string>> = {
  pl: '+',
  mi: '-',
  ml: '*',
  dv: '/',
  rm: '%',
  an: '&',
  or: '|',
  eo: '^',
  ls: '<<',
  rs: '>>',
  lt: '<',
  gt: '>',
  le: '<=',
  ge: '>=',
  eq: '==',
  ne: '!=',
  aa: '&&',
  oo: '||',
};

/** Literal suffixes c++filt prints after an integer of this builtin type; absent means `(type)value`. */
const LITERAL_SUFFIX: Record<string, string> = { i: '', j: 'u', l: 'l', m: 'ul', x: 'll', y: 'ull' };

const STD_ABBREVIATIONS: Record<string, string> = {
  a: 'std::allocator',
  b: 'std::basic_string',
  s: 'std::basic_string<char, std::char_traits<char>, std::allocator<char> >',
  i: 'std::basic_istream<char, std::char_traits<char> >',
  o: 'std::basic_ostream<char, std::char_traits<char> >',
  d: 'std::basic_iostream<char, std::char_traits<char> >',
};

class DemangleError extends Error {}

function fail(): never {
  throw new DemangleError('cannot demangle');
}

const text = (t: string): Node => ({ kind: 'text', text: t });

class Parser {
  pos = 0;
  private readonly subs: Node[] = [];
  /** The template arguments that T_, T0_... refer to: those of the function being encoded. */
  private templateParams: Node[] = [];
  private depth = 0;

  constructor(private readonly input: string) {}

  private peek(offset = 0): string {
    return this.input[this.pos + offset] ?? '';
  }

  private eat(expected: string): boolean {
    if (this.input.startsWith(expected, this.pos)) {
      this.pos += expected.length;
      return true;
    }
    return false;
  }

  private expect(expected: string): void {
    if (!this.eat(expected)) fail();
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) fail();
  }

  private leave(): void {
    this.depth--;
  }

  private number(): number {
    const negative = this.eat('n');
    const start = this.pos;
    while (/[0-9]/.test(this.peek())) this.pos++;
    if (this.pos === start) fail();
    const value = Number(this.input.slice(start, this.pos));
    if (!Number.isSafeInteger(value)) fail();
    return negative ? -value : value;
  }

  /** `<seq-id>_` of a substitution or template parameter: `_` is 0, `0_` is 1, `A_` is 11... */
  private seqId(): number {
    if (this.eat('_')) return 0;
    const start = this.pos;
    while (/[0-9A-Z]/.test(this.peek())) this.pos++;
    if (this.pos === start) fail();
    const value = parseInt(this.input.slice(start, this.pos), 36);
    this.expect('_');
    return value + 1;
  }

  // <encoding> ::= <name> <bare-function-type> | <name>
  parseEncoding(): Node {
    this.enter();
    const savedParams = this.templateParams;
    const { node: name, templateArgs, quals } = this.parseName();
    if (this.pos >= this.input.length || this.peek() === 'E' || this.peek() === '.') {
      this.leave();
      return name; // a data object, or a local name's enclosing function spelled without parameters
    }
    if (templateArgs) this.templateParams = templateArgs;
    // Function templates encode their return type first (kernels are never constructors or conversions).
    const ret = templateArgs ? this.parseType() : null;
    const params = this.parseParamList();
    this.templateParams = savedParams;
    this.leave();
    return { kind: 'function', name, ret, params, templateArgs, quals };
  }

  private parseParamList(): Node[] {
    const params: Node[] = [];
    while (this.pos < this.input.length && this.peek() !== 'E' && this.peek() !== '.') params.push(this.parseType());
    if (params.length === 0) fail();
    if (params.length === 1 && params[0].kind === 'text' && params[0].text === 'void') return [];
    return params;
  }

  // <name> ::= <nested-name> | <local-name> | <unscoped-name> [<template-args>] | <substitution> <template-args>
  private parseName(): { node: Node; templateArgs: Node[] | null; quals: string } {
    this.enter();
    try {
      const c = this.peek();
      if (c === 'N') return this.parseNestedName();
      if (c === 'Z') return { node: this.parseLocalName(), templateArgs: null, quals: '' };
      if (c === 'S' && this.peek(1) !== 't') {
        const sub = this.parseSubstitution();
        if (this.peek() !== 'I') fail();
        const args = this.parseTemplateArgs();
        return { node: { kind: 'template', name: sub, args }, templateArgs: args, quals: '' };
      }
      let node: Node;
      if (this.eat('St')) node = { kind: 'qualified', scope: text('std'), name: this.parseUnqualifiedName() };
      else node = this.parseUnqualifiedName();
      if (this.peek() === 'I') {
        this.subs.push(node);
        const args = this.parseTemplateArgs();
        return { node: { kind: 'template', name: node, args }, templateArgs: args, quals: '' };
      }
      return { node, templateArgs: null, quals: '' };
    } finally {
      this.leave();
    }
  }

  // N [<CV-qualifiers>] [<ref-qualifier>] <prefix> <unqualified-name> E
  private parseNestedName(): { node: Node; templateArgs: Node[] | null; quals: string } {
    this.expect('N');
    const quals = this.parseCvQualifiers();
    let ref = '';
    if (this.eat('R')) ref = ' &';
    else if (this.eat('O')) ref = ' &&';
    let node: Node | null = null;
    let lastArgs: Node[] | null = null;
    while (!this.eat('E')) {
      if (this.pos >= this.input.length) fail();
      const c = this.peek();
      if (c === 'I') {
        if (!node) fail();
        const args = this.parseTemplateArgs();
        node = { kind: 'template', name: node, args };
        lastArgs = args;
        if (this.peek() !== 'E') this.subs.push(node);
        continue;
      }
      lastArgs = null;
      let component: Node;
      if (c === 'S' && this.peek(1) === 't') {
        this.pos += 2;
        component = text('std');
        node = node ? { kind: 'qualified', scope: node, name: component } : component;
        continue; // `St` is not itself a substitution candidate
      } else if (c === 'S') {
        if (node) fail();
        node = this.parseSubstitution();
        continue;
      } else if (c === 'T') {
        if (node) fail();
        node = this.parseTemplateParam();
        this.subs.push(node);
        continue;
      } else {
        component = this.parseUnqualifiedName();
      }
      node = node ? { kind: 'qualified', scope: node, name: component } : component;
      if (this.peek() !== 'E') this.subs.push(node);
    }
    if (!node) fail();
    return { node, templateArgs: lastArgs, quals: (quals ? ` ${quals}` : '') + ref };
  }

  // Z <function encoding> E <entity name> [<discriminator>] | Z <encoding> E s [<discriminator>]
  private parseLocalName(): Node {
    this.expect('Z');
    const savedParams = this.templateParams;
    const fn = this.parseEncoding();
    this.templateParams = savedParams;
    this.expect('E');
    let entity: Node;
    if (this.eat('s')) entity = text('string literal');
    else entity = this.parseName().node;
    this.parseDiscriminator();
    return { kind: 'local', fn, entity };
  }

  private parseDiscriminator(): void {
    if (this.peek() !== '_') return;
    if (this.eat('__')) {
      this.number();
      this.expect('_');
    } else if (/[0-9]/.test(this.peek(1))) {
      this.pos += 2;
    }
  }

  // <source-name> | <unnamed-type-name> (Ut, Ul); operators, constructors and destructors are not kernels.
  private parseUnqualifiedName(): Node {
    const c = this.peek();
    if (/[0-9]/.test(c)) return this.parseSourceName();
    if (c === 'U' && this.peek(1) === 'l') return this.parseLambda();
    if (c === 'U' && this.peek(1) === 't') {
      this.pos += 2;
      const n = this.peek() === '_' ? 1 : this.number() + 2;
      this.expect('_');
      return text(`{unnamed type#${n}}`);
    }
    if (c === 'L') {
      // <local-source-name> ::= L <source-name> [<discriminator>] (internal linkage)
      this.pos++;
      const name = this.parseSourceName();
      this.parseDiscriminator();
      return name;
    }
    return fail();
  }

  private parseSourceName(): Node {
    const length = this.number();
    if (length <= 0 || this.pos + length > this.input.length) fail();
    const id = this.input.slice(this.pos, this.pos + length);
    this.pos += length;
    if (/^_GLOBAL_[._$]N/.test(id)) return text('(anonymous namespace)');
    return text(id);
  }

  // Ul <lambda-sig> E [<number>] _
  private parseLambda(): Node {
    this.expect('Ul');
    const params: Node[] = [];
    while (!this.eat('E')) {
      if (this.pos >= this.input.length) fail();
      params.push(this.parseType());
    }
    const n = this.peek() === '_' ? 1 : this.number() + 2;
    this.expect('_');
    const list = params.length === 1 && params[0].kind === 'text' && params[0].text === 'void' ? [] : params;
    return text(`{lambda(${printList(list)})#${n}}`);
  }

  private parseCvQualifiers(): string {
    const quals: string[] = [];
    if (this.eat('r')) quals.push('restrict');
    if (this.eat('V')) quals.push('volatile');
    if (this.eat('K')) quals.push('const');
    return quals.reverse().join(' ');
  }

  // I <template-arg>+ E
  private parseTemplateArgs(): Node[] {
    this.enter();
    this.expect('I');
    const args: Node[] = [];
    while (!this.eat('E')) {
      if (this.pos >= this.input.length) fail();
      args.push(this.parseTemplateArg());
    }
    this.leave();
    return args;
  }

  private parseTemplateArg(): Node {
    const c = this.peek();
    if (c === 'L') return this.parseExprPrimary();
    if (c === 'J') {
      this.pos++;
      const elems: Node[] = [];
      while (!this.eat('E')) {
        if (this.pos >= this.input.length) fail();
        elems.push(this.parseTemplateArg());
      }
      return { kind: 'pack', elems };
    }
    if (c === 'X') {
      this.pos++;
      const expr = this.parseExpression();
      this.expect('E');
      return expr;
    }
    return this.parseType();
  }

  /**
   * The expressions kernel names carry: literals, template parameters, `&function`, dependent names
   * (`sr`: `is_primitive<T>::value`), `sizeof`, casts and the arithmetic, comparison and logical
   * operators (in array bounds, `decltype` and template arguments), printed as c++filt prints them:
   * `(3)+(1)`, `-(2)`, `sizeof (double)`, `(float)()`.
   */
  private parseExpression(): Node {
    this.enter();
    try {
      return this.parseExpressionInner();
    } finally {
      this.leave();
    }
  }

  private parseExpressionInner(): Node {
    const c = this.peek();
    if (c === 'L') return this.parseExprPrimary();
    if (c === 'T') return this.parseTemplateParam();
    if (this.eat('fp')) {
      this.parseCvQualifiers();
      const n = this.peek() === '_' ? 1 : this.number() + 2;
      this.expect('_');
      return text(`{parm#${n}}`);
    }
    if (this.peek() === 's' && this.peek(1) === 'r') return this.parseUnresolvedName();
    if (this.eat('st')) return text(`sizeof (${printNode(this.parseType())})`);
    if (this.eat('sz')) return text(`sizeof (${printNode(this.parseExpression())})`);
    if (this.eat('at')) return text(`alignof (${printNode(this.parseType())})`);
    if (this.eat('cv')) {
      const type = printNode(this.parseType());
      if (this.eat('_')) {
        const list: Node[] = [];
        while (!this.eat('E')) {
          if (this.pos >= this.input.length) fail();
          list.push(this.parseExpression());
        }
        return text(`(${type})(${list.map(printNode).join(', ')})`);
      }
      return text(`(${type})(${printNode(this.parseExpression())})`);
    }
    const code = this.input.slice(this.pos, this.pos + 2);
    if (code === 'ad') {
      this.pos += 2;
      return text(`&(${printNode(this.parseExpression())})`);
    }
    const unary = UNARY_OPERATORS[code];
    if (unary) {
      this.pos += 2;
      return text(`${unary}(${printNode(this.parseExpression())})`);
    }
    const binary = BINARY_OPERATORS[code];
    if (binary) {
      this.pos += 2;
      const left = printNode(this.parseExpression());
      const right = printNode(this.parseExpression());
      return text(`(${left})${binary}(${right})`);
    }
    if (code === 'qu') {
      this.pos += 2;
      const [a, b, d] = [this.parseExpression(), this.parseExpression(), this.parseExpression()].map(printNode);
      return text(`(${a})?(${b}) : (${d})`);
    }
    return fail();
  }

  /**
   * A dependent name: `sr <unresolved-type> <base-unresolved-name>`,
   * `srN <unresolved-type> <unresolved-qualifier-level>+ E <base-unresolved-name>`,
   * `sr <unresolved-qualifier-level>+ E <base-unresolved-name>`.
   */
  private parseUnresolvedName(): Node {
    this.expect('sr');
    const parts: string[] = [];
    if (this.eat('N')) {
      parts.push(printNode(this.parseUnresolvedType()));
      while (!this.eat('E')) {
        if (this.pos >= this.input.length) fail();
        parts.push(printNode(this.parseSimpleId()));
      }
    } else if (this.peek() === 'T' || this.peek() === 'D' || this.peek() === 'S') {
      parts.push(printNode(this.parseUnresolvedType()));
    } else {
      do parts.push(printNode(this.parseSimpleId()));
      while (!this.eat('E') && this.pos < this.input.length);
    }
    parts.push(printNode(this.parseSimpleId()));
    return text(parts.join('::'));
  }

  /** A template parameter, `decltype` or substitution, with its template arguments (a substitution candidate). */
  private parseUnresolvedType(): Node {
    let node: Node;
    if (this.peek() === 'T') node = this.parseTemplateParam();
    else if (this.peek() === 'D') node = this.parseDType();
    else node = this.parseSubstitution();
    if (this.peek() === 'I') node = { kind: 'template', name: node, args: this.parseTemplateArgs() };
    this.subs.push(node);
    return node;
  }

  /** `<source-name> [<template-args>]`. */
  private parseSimpleId(): Node {
    const name = this.parseSourceName();
    if (this.peek() !== 'I') return name;
    return { kind: 'template', name, args: this.parseTemplateArgs() };
  }

  // L <type> <value> E | L _Z <encoding> E
  private parseExprPrimary(): Node {
    this.expect('L');
    if (this.eat('_Z')) {
      const encoding = this.parseEncoding();
      this.expect('E');
      return text(printNode(encoding.kind === 'function' ? { ...encoding, ret: null } : encoding));
    }
    const typeCode = this.peek();
    if (typeCode === 'b' && (this.peek(1) === '0' || this.peek(1) === '1') && this.peek(2) === 'E') {
      this.pos += 3;
      return text(this.input[this.pos - 2] === '1' ? 'true' : 'false');
    }
    if (typeCode === 'D' && this.peek(1) === 'n') {
      this.pos += 2;
      if (this.peek() === '0') this.pos++;
      this.expect('E');
      return text('nullptr');
    }
    if (BUILTINS[typeCode] && typeCode !== 'v' && typeCode !== 'z') {
      this.pos++;
      const value = this.literalValue();
      this.expect('E');
      if (typeCode in LITERAL_SUFFIX) return text(`${value}${LITERAL_SUFFIX[typeCode]}`);
      if (typeCode === 'f' || typeCode === 'd' || typeCode === 'e') return text(`(${BUILTINS[typeCode]})[${value}]`);
      return text(`(${BUILTINS[typeCode]})${value}`);
    }
    // An enumerator or other class-typed literal: L <type> <value> E, printed as (Type)value.
    const type = this.parseType();
    const value = this.literalValue();
    this.expect('E');
    return text(`(${printNode(type)})${value}`);
  }

  /** A literal's digits, kept as text so 64-bit values stay exact. `n` is a minus sign. */
  private literalValue(): string {
    const negative = this.eat('n');
    const start = this.pos;
    while (/[0-9a-f]/.test(this.peek())) this.pos++;
    if (this.pos === start) fail();
    return (negative ? '-' : '') + this.input.slice(start, this.pos);
  }

  // T_ | T <number> _
  private parseTemplateParam(): Node {
    this.expect('T');
    const index = this.seqId();
    const arg = this.templateParams[index];
    if (!arg) fail();
    return arg;
  }

  // S_ | S <seq-id> _ | Sa | Sb | Ss | Si | So | Sd
  private parseSubstitution(): Node {
    this.expect('S');
    const abbreviation = STD_ABBREVIATIONS[this.peek()];
    if (abbreviation && /[a-z]/.test(this.peek())) {
      this.pos++;
      return text(abbreviation);
    }
    const index = this.seqId();
    const node = this.subs[index];
    if (!node) fail();
    return node;
  }

  private parseType(): Node {
    this.enter();
    try {
      return this.parseTypeInner();
    } finally {
      this.leave();
    }
  }

  private parseTypeInner(): Node {
    const c = this.peek();
    if (BUILTINS[c]) {
      this.pos++;
      return text(BUILTINS[c]);
    }
    switch (c) {
      case 'r':
      case 'V':
      case 'K': {
        const quals = this.parseCvQualifiers();
        const inner = this.parseType();
        const node: Node = inner.kind === 'fntype' ? { ...inner, quals } : { kind: 'cv', inner, quals };
        this.subs.push(node);
        return node;
      }
      case 'P':
        return this.pushSub({ kind: 'pointer', inner: (this.pos++, this.parseType()) });
      case 'R':
        return this.pushSub({ kind: 'lref', inner: (this.pos++, this.parseType()) });
      case 'O':
        return this.pushSub({ kind: 'rref', inner: (this.pos++, this.parseType()) });
      case 'F': {
        this.pos++;
        this.eat('Y');
        const ret = this.parseType();
        const params: Node[] = [];
        while (!this.eat('E')) {
          if (this.pos >= this.input.length) fail();
          if (this.eat('R') || this.eat('O')) continue; // ref-qualifier of a member function type
          params.push(this.parseType());
        }
        const list = params.length === 1 && params[0].kind === 'text' && params[0].text === 'void' ? [] : params;
        return this.pushSub({ kind: 'fntype', ret, params: list, quals: '' });
      }
      case 'A': {
        this.pos++;
        let dim = '';
        if (/[0-9]/.test(this.peek())) dim = String(this.number());
        else if (this.peek() !== '_') dim = printNode(this.parseExpression());
        this.expect('_');
        return this.pushSub({ kind: 'array', inner: this.parseType(), dim });
      }
      case 'M': {
        this.pos++;
        const cls = this.parseType();
        const member = this.parseType();
        return this.pushSub({ kind: 'ptrmem', cls, member });
      }
      case 'T': {
        const param = this.parseTemplateParam();
        this.subs.push(param);
        if (this.peek() === 'I') {
          const node: Node = { kind: 'template', name: param, args: this.parseTemplateArgs() };
          return this.pushSub(node);
        }
        return param;
      }
      case 'S': {
        if (this.peek(1) === 't') {
          const { node } = this.parseName();
          return this.pushSub(node);
        }
        const sub = this.parseSubstitution();
        if (this.peek() === 'I') return this.pushSub({ kind: 'template', name: sub, args: this.parseTemplateArgs() });
        return sub;
      }
      case 'U': {
        this.pos++;
        const qual = printNode(this.parseSourceName());
        if (this.peek() === 'I') fail();
        const inner = this.parseType();
        return this.pushSub({ kind: 'vendor', inner, qual });
      }
      case 'D':
        return this.parseDType();
      case 'N':
      case 'Z':
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9': {
        const { node } = this.parseName();
        return this.pushSub(node);
      }
      default:
        return fail();
    }
  }

  private parseDType(): Node {
    this.expect('D');
    const c = this.peek();
    if (c === 'p') {
      this.pos++;
      return this.pushSub({ kind: 'expansion', inner: this.parseType() });
    }
    if (c === 'v') {
      this.pos++;
      const dim = String(this.number());
      this.expect('_');
      return this.pushSub({ kind: 'vector', inner: this.parseType(), dim });
    }
    if (c === 'F') {
      // DF <number> _ : _FloatN ; DF16b : std::bfloat16_t
      this.pos++;
      if (this.eat('16b')) return text('std::bfloat16_t');
      const bits = this.number();
      const x = this.eat('x') ? 'x' : '';
      this.expect('_');
      return text(`_Float${bits}${x}`);
    }
    if (c === 't' || c === 'T') {
      // Dt / DT <expression> E: decltype (expression)
      this.pos++;
      const expr = this.parseExpression();
      this.expect('E');
      return this.pushSub(text(`decltype (${printNode(expr)})`));
    }
    if (D_BUILTINS[c]) {
      this.pos++;
      return text(D_BUILTINS[c]);
    }
    return fail();
  }

  private pushSub(node: Node): Node {
    this.subs.push(node);
    return node;
  }
}

// ---------------------------------------------------------------------------
// Printing, in c++filt's style.

function printNode(node: Node): string {
  const out = printDeclarator(node, '');
  if (out.length > MAX_OUTPUT_LENGTH) fail();
  return out;
}

function printList(nodes: readonly Node[]): string {
  return expandPacks(nodes).map(printNode).join(', ');
}

function printTemplateArgs(args: readonly Node[]): string {
  const inner = printList(args);
  return `<${inner}${inner.endsWith('>') ? ' ' : ''}>`;
}

/** Prints a type around a declarator (`*`, `(*)`, ` const*`), the way C spells nested declarators. */
function printDeclarator(node: Node, decl: string): string {
  switch (node.kind) {
    case 'text':
      return node.text + decl;
    case 'qualified':
      return `${printNode(node.scope)}::${printNode(node.name)}${decl}`;
    case 'template':
      return `${printNode(node.name)}${printTemplateArgs(node.args)}${decl}`;
    case 'pack':
      return printList(node.elems) + decl;
    case 'expansion':
      return printList([node]) + decl;
    case 'pointer':
      return wrapDeclarator(node.inner, '*', decl);
    case 'lref':
      return wrapDeclarator(node.inner, '&', decl);
    case 'rref':
      return wrapDeclarator(node.inner, '&&', decl);
    case 'cv':
      return printDeclarator(node.inner, ` ${node.quals}${decl}`);
    case 'vendor':
      return printDeclarator(node.inner, ` ${node.qual}${decl}`);
    case 'vector':
      return printDeclarator(node.inner, ` __vector(${node.dim})${decl}`);
    case 'array':
      return printDeclarator(node.inner, ` ${decl ? `${decl.trimStart()} ` : ''}[${node.dim}]`);
    case 'fntype': {
      const quals = node.quals ? ` ${node.quals}` : '';
      return printDeclarator(node.ret, ` ${decl.trimStart()}(${printList(node.params)})${quals}`);
    }
    case 'ptrmem': {
      const cls = printNode(node.cls);
      if (node.member.kind === 'fntype') return printDeclarator(node.member, `(${cls}::*${decl.trimStart()})`);
      return printDeclarator(node.member, ` ${cls}::*${decl}`);
    }
    case 'function': {
      const ret = node.ret ? `${printNode(node.ret)} ` : '';
      return `${ret}${printNode(node.name)}(${printList(node.params)})${node.quals}${decl}`;
    }
    case 'local':
      return `${printNode(node.fn)}::${printNode(node.entity)}${decl}`;
  }
}

function wrapDeclarator(inner: Node, symbol: string, decl: string): string {
  const target = inner.kind === 'cv' && inner.inner.kind === 'fntype' ? inner.inner : inner;
  if (target.kind === 'fntype' || target.kind === 'array')
    return printDeclarator(inner, `(${symbol}${decl.trimStart()})`);
  return printDeclarator(inner, symbol + decl);
}

/** Flattens template argument packs and expands `Dp` pack expansions element by element. */
function expandPacks(nodes: readonly Node[]): Node[] {
  const out: Node[] = [];
  for (const node of nodes) {
    if (node.kind === 'pack') out.push(...expandPacks(node.elems));
    else if (node.kind === 'expansion') {
      const pack = findPack(node.inner);
      if (!pack) out.push(node.inner);
      else for (const elem of pack.elems) out.push(replacePack(node.inner, pack, elem));
    } else out.push(node);
  }
  return out;
}

function findPack(node: Node): (Node & { kind: 'pack' }) | null {
  switch (node.kind) {
    case 'pack':
      return node;
    case 'pointer':
    case 'lref':
    case 'rref':
    case 'cv':
    case 'vendor':
    case 'vector':
    case 'array':
      return findPack(node.inner);
    case 'template':
      return node.args.map(findPack).find((p) => p) ?? null;
    default:
      return null;
  }
}

function replacePack(node: Node, pack: Node, elem: Node): Node {
  if (node === pack) return elem;
  switch (node.kind) {
    case 'pointer':
    case 'lref':
    case 'rref':
    case 'cv':
    case 'vendor':
    case 'vector':
    case 'array':
      return { ...node, inner: replacePack(node.inner, pack, elem) };
    case 'template':
      return { ...node, args: node.args.map((a) => replacePack(a, pack, elem)) };
    default:
      return node;
  }
}

function describeFunction(fn: Node & { kind: 'function' }, cloneSuffix: string): DemangledName {
  let nameNode = fn.name;
  if (nameNode.kind === 'template') nameNode = nameNode.name;
  const scope: string[] = [];
  let name: string;
  if (nameNode.kind === 'qualified') {
    name = printNode(nameNode.name);
    collectScope(nameNode.scope, scope);
  } else if (nameNode.kind === 'local') {
    name = printNode(nameNode.entity);
    scope.push(printNode(nameNode.fn));
  } else {
    name = printNode(nameNode);
  }
  const scopedName = [...scope, name].join('::');
  const templateArgs = fn.templateArgs ? expandPacks(fn.templateArgs).map(printNode) : [];
  const qualifiedName = fn.templateArgs ? scopedName + printTemplateArgs(fn.templateArgs) : scopedName;
  const parameters = expandPacks(fn.params).map(printNode);
  const returnType = fn.ret ? printNode(fn.ret) : null;
  const signature = `${returnType ? `${returnType} ` : ''}${qualifiedName}(${parameters.join(', ')})${fn.quals}${cloneSuffix}`;
  if (signature.length > MAX_OUTPUT_LENGTH) fail();
  return { name, scopedName, qualifiedName, scope, templateArgs, parameters, returnType, signature, externC: false };
}

function collectScope(node: Node, out: string[]): void {
  if (node.kind === 'qualified') {
    collectScope(node.scope, out);
    out.push(printNode(node.name));
  } else {
    out.push(printNode(node));
  }
}
