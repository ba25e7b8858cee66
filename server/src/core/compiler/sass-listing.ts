/**
 * SASS listings, as `cuobjdump -sass` prints them (and `nvdisasm`, which can add line information),
 * read for the divergence cost model: each function's instructions, with the source line they were
 * generated for when the listing says (`//## File "k.cu", line 12`). The format, from NVIDIA's
 * CUDA Binary Utilities documentation:
 *
 * ```
 *         code for sm_80
 *                 Function : _Z6kernelPfi
 *         .headerflags    @"EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"
 *         /*0000*\/                   MOV R1, c[0x0][0x28] ;          /* 0x00000a0000017a02 *\/
 *                                                                     /* 0x000fe40000000f00 *\/
 *         /*0090*\/              @!P0 BRA 0xb0 ;                      /* ... *\/
 *         /*00b0*\/                   EXIT ;
 * ```
 *
 * A divergent branch compiles to a predicated `BRA` (Volta and later bracket it with `BSSY` /
 * `BSYNC`); a branch ptxas if-converted has none: its paths are predicated instructions (`@P0 STG`)
 * or selects (`SEL`, `FSEL`). A pure parser: the caller runs the tool.
 */

export interface SassInstruction {
  /** The instruction as printed, without its address and encoding: `@!P0 BRA 0xb0`. */
  text: string;
  /** The opcode without its predicate and modifiers: `BRA`, `STG`, `FSEL`. */
  opcode: string;
  /** Whether a predicate guards it (`@P0`, `@!P2`). */
  predicated: boolean;
  /** The source file and 1-based line the listing gives for it, when it gives one. */
  location: { file: string; line: number } | null;
}

export interface SassFunction {
  /** The mangled name (`_Z6kernelPfi`). */
  name: string;
  /** `sm_80`, from the `code for` line above it, when there is one. */
  arch: string | null;
  instructions: SassInstruction[];
}

const CODE_FOR = /^\s*code for (sm_\d+[a-z]?)\b/;
const FUNCTION = /^\s*Function\s*:\s*(\S+)/;
/** `/*0090*\/  @!P0 BRA 0xb0 ;  /* 0x... *\/` (the encoding may sit on the next line alone). */
const INSTRUCTION = /^\s*\/\*([0-9a-fA-F]{4,})\*\/\s*(.*?)\s*;/;
/** nvdisasm's line information: `//## File "/path/k.cu", line 12` (optionally `inlined at ...`). */
const LINE_INFO = /^\s*\/\/##\s*File\s*"([^"]*)"\s*,\s*line\s*(\d+)/;
/** nvdisasm's section headers for a function's code: `.text._Z6kernelPfi:` */
const TEXT_SECTION = /^\s*\.text\.(\S+?):?\s*$/;

export function parseSass(text: string): SassFunction[] {
  const functions: SassFunction[] = [];
  let arch: string | null = null;
  let current: SassFunction | null = null;
  let location: SassInstruction['location'] = null;
  for (const raw of text.split(/\r?\n/)) {
    const code = CODE_FOR.exec(raw);
    if (code) {
      arch = code[1];
      continue;
    }
    const fn = FUNCTION.exec(raw) ?? TEXT_SECTION.exec(raw);
    if (fn) {
      current = { name: fn[1], arch, instructions: [] };
      functions.push(current);
      location = null;
      continue;
    }
    const line = LINE_INFO.exec(raw);
    if (line) {
      location = { file: line[1], line: Number(line[2]) };
      continue;
    }
    const ins = INSTRUCTION.exec(raw);
    if (!ins || !current) continue;
    const body = ins[2].replace(/^\{\s*|\s*\}$/g, '').trim();
    if (!body) continue;
    const predicate = /^@!?U?P[T\d]+\s+/.exec(body);
    const rest = predicate ? body.slice(predicate[0].length) : body;
    const opcode = rest.split(/[\s.]/)[0];
    current.instructions.push({
      text: body,
      opcode,
      predicated: predicate !== null && !/^@!?PT\s/.test(body),
      location,
    });
  }
  return functions;
}

/** Opcodes that transfer control within a function (a divergent `if` compiles to a predicated one). */
const BRANCHES: ReadonlySet<string> = new Set(['BRA', 'BRX', 'JMP', 'JMX', 'BREAK', 'BRK']);

/** The instructions of `fn` that branch on a predicate (what a divergent `if` compiles to). */
export function conditionalBranches(fn: SassFunction): SassInstruction[] {
  return fn.instructions.filter((i) => i.predicated && BRANCHES.has(i.opcode));
}

/** The functions whose name is a kernel's (plain or mangled, as ptxEntriesFor matches them). */
export function sassFunctionsFor(functions: readonly SassFunction[], kernelName: string): SassFunction[] {
  const mangled = `${kernelName.length}${kernelName}`;
  return functions.filter(
    (f) =>
      f.name === kernelName ||
      new RegExp(`^_Z(?:N.*?)?(?:I.*?)?${mangled}(?![A-Za-z_])`).test(f.name) ||
      f.name.includes(mangled),
  );
}
