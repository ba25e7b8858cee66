/**
 * Syntax nodes whose properties are read from web-tree-sitter once.
 *
 * Each property of a web-tree-sitter node is a call into wasm (its type, its
 * end, its text's end), and a field or a list of children also allocates a new
 * node object per child. The kernel-body passes read the same nodes again and
 * again: a loop's body is read for its assignments, walked once as a probe and
 * once for real, and again for each pass of the loops around it; a device
 * function is walked at each call; each branch's paths are read once more for
 * their cost. A `NodeView` reads a property on first use and keeps it, and the
 * views of one analysis share a table by node id (`SyntaxViews`), so that
 * every way to a node (a field, a list of children, a function table) finds
 * the same view with what it has read.
 *
 * The names are web-tree-sitter's, with the same meanings (children without
 * the nulls web-tree-sitter's types allow). A view is valid while its tree is:
 * keep a `SyntaxViews` for one analysis, not across versions of a document.
 */
import type { Language, Node as SyntaxNode, Point, Tree } from 'web-tree-sitter';
import { memoByObject } from '../incremental/kept-tables';
import { keepAlive } from '../incremental/engine-seams';

export class SyntaxViews {
  private readonly views = new Map<number, NodeView>();
  /** The language's field ids by name: `childForFieldName` looks the name up in an array at each call. */
  private readonly fieldIds: ReadonlyMap<string, number>;

  /**
   * Views of `tree`'s nodes, and of `also`'s: a definition parsed again on its own reads the
   * functions it calls in the file's tree (two live trees never share a node id).
   */
  constructor(
    readonly tree: Tree,
    private readonly also?: Tree,
  ) {
    this.fieldIds = fieldIdsOf(tree.language);
  }

  /** The view of `node`, a node of this tree (or of `also`). */
  view(node: SyntaxNode): NodeView {
    if (node.tree !== this.tree && (this.also === undefined || node.tree !== this.also))
      throw new Error('SyntaxViews: a node of another tree');
    let view = this.views.get(node.id);
    if (!view) {
      view = new NodeView(node, this);
      this.views.set(node.id, view);
    }
    return view;
  }

  viewOrNull(node: SyntaxNode | null | undefined): NodeView | null {
    return node ? this.view(node) : null;
  }

  /** The field's id, -1 for a name the grammar does not have. */
  fieldId(name: string): number {
    return this.fieldIds.get(name) ?? -1;
  }
}

/** Each language's field ids by name, made once (a SyntaxViews is made for each kernel). */
const fieldIdsOf = memoByObject('grammar field ids', (language: Language): ReadonlyMap<string, number> => {
  const byName = new Map<string, number>();
  language.fields.forEach((name, id) => {
    if (name) byName.set(name, id);
  });
  return byName;
});

export class NodeView {
  readonly id: number;
  readonly startIndex: number;
  readonly startPosition: Point;
  private typeRead: string | undefined = undefined;
  private textRead: string | undefined = undefined;
  private endIndexRead = -1;
  private endPositionRead: Point | undefined = undefined;
  private namedChildrenRead: NodeView[] | undefined = undefined;
  /** Field children by field id (null: the node has none). */
  private fieldsRead: Map<number, NodeView | null> | undefined = undefined;
  private fieldListsRead: Map<number, NodeView[]> | undefined = undefined;
  private parentRead: NodeView | null | undefined = undefined;

  constructor(
    /** The web-tree-sitter node, for results that hold syntax nodes. */
    readonly node: SyntaxNode,
    private readonly views: SyntaxViews,
  ) {
    // Plain fields of web-tree-sitter's node object: no call into wasm.
    this.id = node.id;
    this.startIndex = node.startIndex;
    this.startPosition = node.startPosition;
  }

  get type(): string {
    return (this.typeRead ??= this.node.type);
  }

  get text(): string {
    return (this.textRead ??= this.node.text);
  }

  get endIndex(): number {
    if (this.endIndexRead < 0) this.endIndexRead = this.node.endIndex;
    return this.endIndexRead;
  }

  get endPosition(): Point {
    return (this.endPositionRead ??= this.node.endPosition);
  }

  get namedChildren(): readonly NodeView[] {
    if (!this.namedChildrenRead) {
      const children: NodeView[] = [];
      for (const c of this.node.namedChildren) if (c) children.push(this.views.view(c));
      this.namedChildrenRead = children;
    }
    return this.namedChildrenRead;
  }

  childForFieldName(name: string): NodeView | null {
    const id = this.views.fieldId(name);
    if (id < 0) return null;
    this.fieldsRead ??= new Map();
    let child = this.fieldsRead.get(id);
    if (child === undefined) {
      child = this.views.viewOrNull(this.node.childForFieldId(id));
      this.fieldsRead.set(id, child);
    }
    return child;
  }

  childrenForFieldName(name: string): readonly NodeView[] {
    const id = this.views.fieldId(name);
    if (id < 0) return [];
    this.fieldListsRead ??= new Map();
    let children = this.fieldListsRead.get(id);
    if (!children) {
      children = [];
      for (const c of this.node.childrenForFieldId(id)) if (c) children.push(this.views.view(c));
      this.fieldListsRead.set(id, children);
    }
    return children;
  }

  /** Read when asked: the walks ask for these at a few places (an operator token, the statements after an early exit). */
  /** The named descendants of these types, in order (web-tree-sitter's descendantsOfType). */
  descendantsOfType(types: string | readonly string[]): NodeView[] {
    const found: NodeView[] = [];
    for (const n of this.node.descendantsOfType(types as string | string[])) if (n) found.push(this.views.view(n));
    return found;
  }

  child(index: number): NodeView | null {
    return this.views.viewOrNull(this.node.child(index));
  }

  get parent(): NodeView | null {
    if (this.parentRead === undefined) this.parentRead = this.views.viewOrNull(this.node.parent);
    return this.parentRead;
  }

  get nextNamedSibling(): NodeView | null {
    return this.views.viewOrNull(this.node.nextNamedSibling);
  }
}

// Views live for one analysis; one view is kept between analyses so that V8 keeps its hidden class
// (see engine-seams.ts). Of a node of no tree: a real tree would keep its document's text alive.
const standInTree = { language: { fields: [] } } as unknown as Tree;
const standInNode = {
  id: 0,
  startIndex: 0,
  startPosition: { row: 0, column: 0 },
  tree: standInTree,
} as unknown as SyntaxNode;
keepAlive([new NodeView(standInNode, new SyntaxViews(standInTree))]);
