/**
 * ptxas figures for opened and saved documents: which nvcc and flags to use (never from
 * workspace settings or compile_commands.json in an untrusted workspace; a compiler the
 * workspace names only when the user's allow-list has it, see argument-policy.ts), the
 * per-user cache, and the scheduler that debounces, cancels, limits and times out runs.
 * After a successful figures compile, the same run (same slot, same signal)
 * compiles the file to PTX with line information for the divergence costs.
 */
import * as path from 'node:path';
import { CompileScheduler, type DocumentFigures } from './compile-scheduler';
import { type ArchFigures, type CompileResourcesResult } from './compile-resources';
import { compileFindingIncludes, withFoundFolders } from './found-includes';
import { compilePtx, isPtxText, type PtxText } from './compile-ptx';
import { compileVariant } from './compile-variant';
import { keptLifeRanges, locateNvdisasm, noNvdisasmNote } from './nvdisasm';
import {
  findCompileCommandsFile,
  loadCompileCommands,
  resolveCompileFlags,
  type CompileCommand,
  type CompileFlags,
} from './compile-commands';
import { defaultCacheDir, ResourceCache } from './resource-cache';
import { chooseNvcc, expandHome, findOnPath } from './locate-nvcc';
import { droppedLine, type ArgumentPolicy } from './argument-policy';
import { isValidArchFigures } from './cache-validation';
import { toolchainOf } from './toolchain';
import type { Toolchain } from '../core/analyzer';
import type { SettingKey, Settings } from '../settings';

export interface CompileServiceOptions {
  workspaceRoots: string[];
  trusted: boolean;
  isOpen: (uri: string) => boolean;
  log: (message: string) => void;
  /** Where to keep the figures cache; default: the per-user cache directory (defaultCacheDir); null: memory only. */
  cacheDir?: string | null;
  /** Whether a document's PTX is worth compiling (it has divergent branches to price); default: always. */
  wantsPtx?: (uri: string) => boolean;
  /**
   * The variants of a document to compile once its figures are in (the register caps its fixes propose,
   * each a full text and flags to add); the caller has marked them as being checked. Default: none.
   */
  variantsFor?: (uri: string) => ReadonlyArray<{ key: string; text: string; flags: readonly string[] }>;
  /** The folders the workspace found a file's includes in where nothing said where (its `-I`s nobody wrote). */
  inferredIncludeDirs?: (file: string) => readonly string[];
  /** The one workspace folder holding a header nvcc could not find, or null (see found-includes.ts). */
  folderHolding?: (header: string) => string | null;
}

/** A variant's compile finished (cancelled ones are not reported). */
export interface VariantResult {
  readonly uri: string;
  readonly key: string;
  readonly result: CompileResourcesResult;
}

/** The PTX of a saved document (`nvcc -ptx -lineinfo`, first target arch) and the content it was compiled from. */
export interface DocumentPtx {
  readonly uri: string;
  /** The file nvcc compiled: the `.file` paths in the PTX name it. */
  readonly path: string;
  readonly arch: string;
  readonly text: string;
  /** sha256 of the compiled content (`contentHash`): apply the PTX only to a document with this text. */
  readonly sourceHash: string;
  readonly producedAt: number;
  /** nvdisasm's life ranges of the same compile's cubin for `arch`, or null (no nvdisasm, or the figures were cached). */
  readonly sass: string | null;
}

interface ResolvedFlags {
  flags: string[];
  cwd: string | null;
}

/**
 * The caches of compile results the editor and `check` share: ptxas's figures per architecture, and PTX
 * (which runs to megabytes: fewer kept in memory, and a directory of its own). `dir` null: memory only.
 */
export function compileCaches(
  dir: string | null,
  onProblem: (message: string) => void,
): { figures: ResourceCache<ArchFigures>; ptx: ResourceCache<PtxText> } {
  return {
    figures: new ResourceCache<ArchFigures>({
      dir,
      validate: (v): v is ArchFigures => isValidArchFigures(v),
      maxEntryBytes: 8 * 1024 * 1024,
      onProblem,
    }),
    ptx: new ResourceCache<PtxText>({
      dir: dir ? path.join(dir, 'ptx') : null,
      maxEntries: 32,
      validate: isPtxText,
      onProblem,
    }),
  };
}

export class CompileService {
  private scheduler: CompileScheduler | null = null;
  private settings: Settings | null = null;
  private database: CompileCommand[] | null = null;
  /** The nvcc the settings chose, or null when it is switched off. */
  private nvccPath: string | null = null;
  private databaseArchs: string[] = [];
  private readonly cache: ResourceCache<ArchFigures>;
  private readonly ptxCache: ResourceCache<PtxText>;
  private readonly resultListeners: Array<(figures: DocumentFigures) => void> = [];
  private readonly ptxListeners: Array<(ptx: DocumentPtx) => void> = [];
  private readonly variantListeners: Array<(variant: VariantResult) => void> = [];
  private readonly stateListeners: Array<() => void> = [];
  /** Keys whose values the workspace sets (see readSettings), or null when the client did not say. */
  private fromWorkspace: ReadonlySet<SettingKey> | null = null;
  private policy: ArgumentPolicy = { allowedCompilers: [] };
  /** Dropped options already logged (one line each, until the settings change). */
  private readonly loggedDrops = new Set<string>();
  /** Per file, the folders of headers nvcc could not find that the workspace holds (found-includes.ts). */
  private readonly foundFolders = new Map<string, readonly string[]>();
  private readonly startListeners: Array<(uri: string, archs: string[]) => void> = [];
  private readonly endListeners: Array<(uri: string) => void> = [];
  /** Why compiling is off (nvcc missing, switched off), or null. */
  disabledReason: string | null = null;
  /** nvdisasm beside the chosen nvcc or on PATH, found once per configuration (null: none). */
  private nvdisasm: string | null = null;

  constructor(private readonly options: CompileServiceOptions) {
    const dir = options.cacheDir === undefined ? defaultCacheDir() : options.cacheDir;
    const caches = compileCaches(dir, (message) => options.log(`${message} (figures are cached in memory only)`));
    this.cache = caches.figures;
    this.ptxCache = caches.ptx;
  }

  /** Architectures named by compile_commands.json (-arch/-gencode), for the default target list. */
  get archsFromDatabase(): string[] {
    return this.databaseArchs;
  }

  /** Compiles asked for and not finished (in their debounce, queued or running), for the status bar. */
  get running(): number {
    return this.scheduler ? this.scheduler.activeCount + this.scheduler.queuedCount + this.scheduler.waitingCount : 0;
  }

  /** Whether a compile of the document is asked for and not finished. */
  pending(uri: string): boolean {
    return this.scheduler?.isPending(uri) ?? false;
  }

  /** Whether compiles can run: nvcc found (so far), switched on, configured. */
  get compiling(): boolean {
    return this.scheduler !== null && this.disabledReason === null;
  }

  onResult(listener: (figures: DocumentFigures) => void): void {
    this.resultListeners.push(listener);
  }

  /** PTX for a document whose figures compile succeeded; not called when the PTX compile fails or is cancelled. */
  onPtx(listener: (ptx: DocumentPtx) => void): void {
    this.ptxListeners.push(listener);
  }

  /** A variant's figures (after the document's own figures and PTX, in the same slot). */
  onVariant(listener: (variant: VariantResult) => void): void {
    this.variantListeners.push(listener);
  }

  onStateChange(listener: () => void): void {
    this.stateListeners.push(listener);
  }

  /** A document's figures compile starts (ptxas runs for `archs` until its result or its end). */
  onCompileStart(listener: (uri: string, archs: string[]) => void): void {
    this.startListeners.push(listener);
  }

  /** A document's run ends, whatever the outcome (after its result, if one came). */
  onCompileEnd(listener: (uri: string) => void): void {
    this.endListeners.push(listener);
  }

  /** The source files compile_commands.json lists (absolute), for the translation units that include a header. */
  databaseFiles(): string[] {
    return this.database?.map((entry) => entry.file) ?? [];
  }

  /** `fromWorkspace`: the keys whose values come from workspace settings (null: not told, all the user's). */
  async configure(
    settings: Settings,
    archs: () => string[],
    fromWorkspace: ReadonlySet<SettingKey> | null = null,
  ): Promise<void> {
    this.settings = settings;
    this.fromWorkspace = fromWorkspace;
    this.policy = {
      allowedCompilers: expandHome(settings['nvcc.allowedCompilers']),
      findOnPath: (name) => findOnPath(name),
    };
    this.loggedDrops.clear();
    this.scheduler?.dispose();
    this.scheduler = null;
    this.database = null;
    this.databaseArchs = [];
    this.nvccPath = null;
    if (this.options.trusted) await this.loadDatabase(settings);
    if (!settings['nvcc.enabled']) {
      this.disabledReason = 'nvcc is switched off (cudaOccupancy.nvcc.enabled)';
      this.changed();
      return;
    }
    this.disabledReason = null;
    const chosen = chooseNvcc({
      configured: this.options.trusted ? settings['nvcc.path'] : '',
      fromWorkspace: fromWorkspace?.has('nvcc.path') ?? false,
      allowedCompilers: settings['nvcc.allowedCompilers'],
      cwd: this.options.workspaceRoots[0] ?? null,
    });
    if (chosen.note) this.options.log(chosen.note);
    const nvccPath = chosen.nvccPath;
    this.nvccPath = nvccPath;
    this.nvdisasm = locateNvdisasm(nvccPath);
    // Said once, not per kernel: without nvdisasm the pressure is the PTX estimate.
    this.options.log(
      this.nvdisasm
        ? `register pressure from SASS: ${this.nvdisasm} --print-life-ranges --print-line-info on each compile's cubin`
        : noNvdisasmNote(nvccPath),
    );
    const scheduler = new CompileScheduler({
      maxParallel: settings['nvcc.maxParallel'],
      isOpen: this.options.isOpen,
      compile: (request, signal) => this.compile(nvccPath, request.uri, request.path, archs(), signal),
      afterCompile: async (request, result, signal) => {
        await this.compileDocumentPtx(nvccPath, request.uri, request.path, result, signal);
        await this.compileVariants(nvccPath, request.uri, request.path, archs(), result, signal);
      },
    });
    scheduler.onResult((figures) => {
      for (const l of this.resultListeners) l(figures);
      this.changed();
    });
    scheduler.onCompileStart((request) => {
      for (const l of this.startListeners) l(request.uri, archs());
      this.changed();
    });
    scheduler.onCompileEnd((request) => {
      for (const l of this.endListeners) l(request.uri);
      this.changed();
    });
    scheduler.onNvccMissing(() => {
      this.disabledReason = `nvcc not found (${nvccPath}): register figures come from build logs and annotations only. Set cudaOccupancy.nvcc.path, or install the CUDA toolkit.`;
      this.options.log(this.disabledReason);
      this.changed();
    });
    this.scheduler = scheduler;
    this.changed();
  }

  /** Compile a saved document (debounced; a newer request cancels the older run); false when it will not compile. */
  request(uri: string, file: string): boolean {
    if (!this.scheduler || this.disabledReason) return false;
    return this.scheduler.request(uri, { path: file });
  }

  close(uri: string): void {
    this.scheduler?.close(uri);
  }

  latest(uri: string): DocumentFigures | undefined {
    return this.scheduler?.latest(uri);
  }

  dispose(): void {
    this.scheduler?.dispose();
    this.scheduler = null;
  }

  private async compile(
    nvccPath: string,
    uri: string,
    file: string,
    archs: string[],
    signal: AbortSignal,
  ): Promise<CompileResourcesResult> {
    const settings = this.settings!;
    const flags = this.flagsFor(file);
    // A header nvcc cannot find is looked for in the workspace, and the compile run again with its folder.
    const { result, added } = await compileFindingIncludes(
      {
        // The PTX (and cubin) for the pressure pass come from this compile (compileDocumentPtx takes them).
        keep: !this.options.wantsPtx || this.options.wantsPtx(uri),
        nvccPath,
        filePath: file,
        archs,
        flags: flags.flags,
        cwd: flags.cwd ?? path.dirname(file),
        timeoutMs: settings['nvcc.timeoutSeconds'] * 1000,
        signal,
        cache: this.cache,
        memoryLimitBytes: settings['nvcc.memoryLimitMB'] * 1024 * 1024,
        maxFileBytes: settings['limits.fileMB'] * 1024 * 1024,
      },
      (header) => (this.options.trusted ? (this.options.folderHolding?.(header) ?? null) : null),
    );
    // The file's later compiles (its PTX, its quick fixes' variants) search them too.
    if (added.length) this.foundFolders.set(file, [...(this.foundFolders.get(file) ?? []), ...added]);
    this.options.log(
      `nvcc ${result.status} for ${file} (${archs.join(', ')}): ${result.durationMs} ms, ${result.cacheHits.length} cached${result.firstError ? `; ${result.firstError.text}` : ''}`,
    );
    return result;
  }

  /**
   * The PTX of the first target arch, after the figures compile succeeded: the one that compile kept, or (its
   * figures came from the cache) `nvcc -ptx -lineinfo` with the same flags, unless the PTX cache has it.
   */
  private async compileDocumentPtx(
    nvccPath: string,
    uri: string,
    file: string,
    figures: CompileResourcesResult,
    signal: AbortSignal,
  ): Promise<void> {
    const arch = figures.perArch[0]?.arch;
    if (figures.status !== 'ok' || !arch || !this.settings || (this.options.wantsPtx && !this.options.wantsPtx(uri)))
      return;
    const flags = this.flagsFor(file);
    const kept = figures.kept.find((k) => k.arch === arch)?.ptx ?? null;
    if (!kept) this.changed(); // nvcc is running again (the run's end is announced by the scheduler)
    const result = await compilePtx({
      kept,
      nvccPath,
      filePath: file,
      arch,
      flags: flags.flags,
      cwd: flags.cwd ?? path.dirname(file),
      timeoutMs: this.settings['nvcc.timeoutSeconds'] * 1000,
      signal,
      cache: this.ptxCache,
      memoryLimitBytes: this.settings['nvcc.memoryLimitMB'] * 1024 * 1024,
      maxFileBytes: this.settings['limits.fileMB'] * 1024 * 1024,
    });
    this.options.log(
      `${kept ? 'PTX kept from the figures compile' : 'nvcc -ptx'} ${result.status} for ${file} (${arch}): ${result.durationMs} ms${result.status === 'ok' ? (result.cacheHit ? ', cached' : '') : `; ${result.error.text}`}`,
    );
    if (result.status !== 'ok' || signal.aborted || !result.sourceHash) return;
    const sass = await keptLifeRanges({
      nvdisasmPath: this.nvdisasm,
      cubin: figures.kept.find((k) => k.arch === arch)?.cubin,
      names: figures.kept.find((k) => k.arch === arch)?.names,
      timeoutMs: this.settings['nvcc.timeoutSeconds'] * 1000,
      signal,
      label: `${file} (${arch})`,
      log: this.options.log,
    });
    if (signal.aborted) return;
    const ptx: DocumentPtx = {
      uri,
      path: file,
      arch,
      text: result.ptx.text,
      sourceHash: result.sourceHash,
      producedAt: result.ptx.producedAt,
      sass,
    };
    for (const l of this.ptxListeners) l(ptx);
  }

  /**
   * The document's variants, one after another in its slot and under its signal (a newer save cancels
   * them), with the figures compile's flags and cache, once its own figures are in.
   */
  private async compileVariants(
    nvccPath: string,
    uri: string,
    file: string,
    archs: string[],
    figures: CompileResourcesResult,
    signal: AbortSignal,
  ): Promise<void> {
    if (figures.status !== 'ok' || !this.settings || !this.options.variantsFor) return;
    const variants = this.options.variantsFor(uri);
    if (variants.length === 0) return;
    const flags = this.flagsFor(file);
    this.changed();
    for (const variant of variants) {
      if (signal.aborted) return;
      const result = await compileVariant({
        nvccPath,
        filePath: file,
        text: variant.text,
        extraFlags: variant.flags,
        archs,
        flags: flags.flags,
        cwd: flags.cwd ?? path.dirname(file),
        timeoutMs: this.settings['nvcc.timeoutSeconds'] * 1000,
        signal,
        cache: this.cache,
        memoryLimitBytes: this.settings['nvcc.memoryLimitMB'] * 1024 * 1024,
      });
      this.options.log(
        `nvcc ${result.status} for a variant of ${file} (${variant.key}): ${result.durationMs} ms, ${result.cacheHits.length} cached${result.firstError ? `; ${result.firstError.text}` : ''}`,
      );
      if (signal.aborted || result.status === 'cancelled') return;
      for (const l of this.variantListeners) l({ uri, key: variant.key, result });
    }
  }

  /** The platform, and the CUDA version of the nvcc chosen (none when switched off or missing): see toolchain.ts. */
  toolchain(): Promise<Toolchain> {
    return toolchainOf(this.nvccPath);
  }

  /**
   * The flags the preprocessor of `file`'s unit reads (`-D`, `-U`, `-I`, `-include`, `-std`): its
   * compile_commands.json entry or the settings, as nvcc gets them, without the folders a compile
   * found (they change after it, and the analysis finds its includes itself). None in an untrusted
   * workspace, where neither is read.
   */
  preprocessorFlags(file: string): ResolvedFlags {
    if (!this.settings || !this.options.trusted) return { flags: [], cwd: null };
    return this.resolveFlags(file, []);
  }

  private flagsFor(file: string): ResolvedFlags {
    if (!this.options.trusted) return { flags: [], cwd: null };
    const resolved = this.resolveFlags(file, this.options.inferredIncludeDirs?.(file) ?? []);
    this.logDropped(resolved);
    return { ...resolved, flags: withFoundFolders(resolved.flags, this.foundFolders.get(file)) };
  }

  /** The file's compile_commands.json entry or the settings, through the argument policy. */
  private resolveFlags(file: string, inferredIncludeDirs: readonly string[]): CompileFlags {
    const settings = this.settings!;
    return resolveCompileFlags({
      database: this.database,
      filePath: file,
      settings: {
        includePaths: settings['nvcc.includePaths'],
        defines: settings['nvcc.defines'],
        nvccArgs: settings['nvcc.args'],
        std: settings['nvcc.std'],
      },
      workspaceRoot: this.options.workspaceRoots[0] ?? null,
      policy: this.policy,
      inferredIncludeDirs,
      nvccArgsOrigin: this.fromWorkspace?.has('nvcc.args') ? 'workspace settings' : 'user settings',
      settingsOrigin: (['nvcc.includePaths', 'nvcc.defines', 'nvcc.std'] as const).some((key) =>
        this.fromWorkspace?.has(key),
      )
        ? 'workspace settings'
        : 'user settings',
    });
  }

  /** One log line per dropped option (and not again for the next compile). */
  private logDropped(flags: CompileFlags): void {
    for (const dropped of flags.dropped ?? []) {
      const line = droppedLine(dropped);
      if (this.loggedDrops.has(line)) continue;
      this.loggedDrops.add(line);
      this.options.log(line);
    }
  }

  private async loadDatabase(settings: Settings): Promise<void> {
    try {
      const file = await findCompileCommandsFile({
        workspaceRoots: this.options.workspaceRoots,
        configuredDir: settings.compileCommandsDir || null,
      });
      if (!file) return;
      this.database = await loadCompileCommands(file, settings['limits.fileMB'] * 1024 * 1024);
      this.databaseArchs = [
        ...new Set(
          this.database.flatMap(
            (entry) => resolveCompileFlags({ database: [entry], filePath: entry.file, settings: {} }).archs,
          ),
        ),
      ];
      this.options.log(
        `using ${file} (${this.database.length} entries${this.databaseArchs.length ? `, archs ${this.databaseArchs.join(', ')}` : ''})`,
      );
    } catch (error) {
      this.options.log(`cannot read compile_commands.json: ${(error as Error).message}`);
    }
  }

  private changed(): void {
    for (const l of this.stateListeners) l();
  }
}
