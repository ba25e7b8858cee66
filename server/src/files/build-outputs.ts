/**
 * Figures from the build people already run (`check --from-build DIR`, `cudaOccupancy.fromBuild`):
 * a bounded walk of the build directory for what it produced, objects and libraries read with
 * `cuobjdump --dump-resource-usage` when the toolkit has it, build logs read for their
 * `-Xptxas -v` / `--resource-usage` lines. Nothing is compiled. The figures go to the core's
 * BuildFigures with each file's path and mtime.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BuildFigures } from '../core/analyzer';
import { dumpResourceUsage, locateCuobjdump } from '../nvcc/cuobjdump';
import { FileReadError, readBoundedFileSync } from './bounded-read';
import { realPath, walkFolders } from './folder-walk';

/** What cuobjdump reads: relocatable objects, static and shared libraries, cubins, fatbins. */
const OBJECT_FILE = /\.(?:o|obj|a|so(?:\.\d+)*|cubin|fatbin)$/i;
/** Build logs: CMake, Ninja or make output saved to a file (`build.log`, `ptxas.log`). */
const LOG_FILE = /\.log$/i;
/** Folders of a build that hold no build outputs of the project (CMake's compiler checks, VCS, caches). */
const SKIPPED = /^(?:\..*|node_modules|CMakeScratch|CompilerId\w*|CMakeTmp|__pycache__)$/;

export interface BuildOutputLimits {
  /** Stop after this many directories. Default 20000. */
  maxDirectories?: number;
  /** Objects given to cuobjdump, at most. Default 5000. */
  maxObjects?: number;
  /** Objects larger than this are passed over. Default 1 GiB. */
  maxObjectBytes?: number;
  /** A log larger than this is not read. Default 64 MiB. */
  maxLogBytes?: number;
  /** Without cuobjdump, objects are read here up to this size. Default 256 MiB. */
  maxDirectReadBytes?: number;
  /** All logs together, at most. Default 512 MiB. */
  maxTotalLogBytes?: number;
}

export interface BuildFile {
  path: string;
  size: number;
  modifiedAt: number;
}

export interface BuildOutputs {
  objects: BuildFile[];
  logs: BuildFile[];
  /** Files and folders not read, and why (one line each). */
  skipped: string[];
  /** A limit stopped the walk. */
  truncated: boolean;
}

/**
 * The objects and logs under `dirs`, sorted. Folders are walked by their real paths: each is read
 * once however many links lead to it (a link loop ends there), a link out of every given folder is
 * not followed, and only regular files are listed.
 */
export function listBuildOutputs(dirs: readonly string[], limits: BuildOutputLimits = {}): BuildOutputs {
  const maxDirectories = limits.maxDirectories ?? 20_000;
  const maxObjects = limits.maxObjects ?? 5000;
  const maxObjectBytes = limits.maxObjectBytes ?? 1024 * 1024 * 1024;
  const maxLogBytes = limits.maxLogBytes ?? 64 * 1024 * 1024;
  const objects: BuildFile[] = [];
  const logs: BuildFile[] = [];
  const skipped: string[] = [];
  const { truncated } = walkFolders(dirs, {
    skipFolder: (name) => SKIPPED.test(name),
    maxDirectories,
    rootsAre: 'the build folder',
    onSkip: (p, reason) => skipped.push(`${p}: ${reason}`),
    onFile: (p, stat) => {
      const file = { path: p, size: stat.size, modifiedAt: stat.mtimeMs };
      const name = path.basename(p);
      if (OBJECT_FILE.test(name)) {
        if (stat.size > maxObjectBytes) skipped.push(`${p}: larger than ${maxObjectBytes} bytes`);
        else if (objects.length >= maxObjects) return false;
        else objects.push(file);
      } else if (LOG_FILE.test(name)) {
        if (stat.size > maxLogBytes) skipped.push(`${p}: a log larger than ${maxLogBytes} bytes`);
        else logs.push(file);
      }
      return true;
    },
  });
  const byPath = (a: BuildFile, b: BuildFile) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  return { objects: dedupe(objects).sort(byPath), logs: dedupe(logs).sort(byPath), skipped, truncated };
}

export interface ReadBuildOptions {
  dirs: readonly string[];
  /** The nvcc the toolkit is found by (cuobjdump beside it), or null. */
  nvccPath: string | null;
  /** cuobjdump to run; default: located beside nvcc, in $CUDA_HOME/bin, /usr/local/cuda/bin or on PATH. */
  cuobjdumpPath?: string | null;
  /** Per cuobjdump run. Default 60 s. */
  timeoutMs?: number;
  /** cuobjdump runs at once. Default 2. */
  jobs?: number;
  limits?: BuildOutputLimits;
  signal?: AbortSignal;
}

export interface BuildRead {
  build: BuildFigures;
  /** One line each for stderr or the server's log: cuobjdump missing, limits hit, files that failed. */
  notes: string[];
  /** What was read: objects dumped (and with figures), logs with ptxas lines, of those found. */
  counts: { objects: number; objectsWithFigures: number; logs: number; logsWithFigures: number };
}

/** The figures of every object (through cuobjdump) and log under `dirs`. */
export async function readBuildFigures(options: ReadBuildOptions): Promise<BuildRead> {
  const notes: string[] = [];
  for (const dir of options.dirs) {
    if (!isDirectory(dir)) notes.push(`--from-build ${dir}: not a directory`);
  }
  const found = listBuildOutputs(options.dirs, options.limits);
  const build = new BuildFigures();
  const counts = { objects: 0, objectsWithFigures: 0, logs: found.logs.length, logsWithFigures: 0 };
  if (found.truncated)
    notes.push(`the build folder holds more than the walk reads: some objects or folders were not read`);
  if (found.skipped.length) notes.push(`${found.skipped.length} build file(s) not read, e.g. ${found.skipped[0]}`);

  let logBytes = 0;
  const maxTotal = options.limits?.maxTotalLogBytes ?? 512 * 1024 * 1024;
  for (const log of found.logs) {
    if (logBytes + log.size > maxTotal) {
      notes.push(`build logs past ${maxTotal} bytes in all were not read (from ${log.path} on)`);
      break;
    }
    logBytes += log.size;
    try {
      const text = readBoundedFileSync(log.path, {
        maxBytes: options.limits?.maxLogBytes ?? 64 * 1024 * 1024,
        what: 'build log',
      }).text;
      // A log without ptxas lines (configure output, test logs) is passed over quietly.
      if (build.addLog({ path: log.path, modifiedAt: log.modifiedAt }, text) > 0) counts.logsWithFigures++;
    } catch (error) {
      if (error instanceof FileReadError) notes.push(error.message);
    }
  }

  const cuobjdump = options.cuobjdumpPath === undefined ? locateCuobjdump(options.nvccPath) : options.cuobjdumpPath;
  if (found.objects.length && !cuobjdump) {
    const direct = readDeviceCodeOf(found.objects, build, counts, options.limits?.maxDirectReadBytes);
    notes.push(
      `cuobjdump not found (beside nvcc, in $CUDA_HOME/bin, /usr/local/cuda/bin or on PATH): read the device code of the build's ${found.objects.length} object(s) directly (registers, shared memory, stack, barriers; no spills), ${counts.objectsWithFigures} with kernels${direct}`,
    );
    return { build, notes, counts };
  }
  if (!cuobjdump) return { build, notes, counts };
  const queue = [...found.objects];
  const failures: string[] = [];
  let missing: string | null = null;
  let truncatedDumps = 0;
  const results = new Map<string, string>();
  const worker = async () => {
    for (let file = queue.shift(); file && !missing; file = queue.shift()) {
      const dump = await dumpResourceUsage({
        cuobjdumpPath: cuobjdump,
        file: file.path,
        timeoutMs: options.timeoutMs ?? 60_000,
        signal: options.signal,
      });
      counts.objects++;
      if (dump.status === 'missing') missing = dump.message;
      else if (dump.status === 'failed') failures.push(`${file.path}: ${dump.message}`);
      else {
        if (dump.truncated) truncatedDumps++;
        results.set(file.path, dump.text);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.jobs ?? 2, found.objects.length)) }, worker));
  if (missing) {
    notes.push(`cuobjdump could not run (${cuobjdump}: ${missing}): figures come from the build's logs only`);
    return { build, notes, counts };
  }
  // In path order, whatever order the runs finished in.
  for (const file of found.objects) {
    const text = results.get(file.path);
    if (text !== undefined && build.addObjectDump({ path: file.path, modifiedAt: file.modifiedAt }, text) > 0)
      counts.objectsWithFigures++;
  }
  if (truncatedDumps) notes.push(`${truncatedDumps} cuobjdump output(s) were cut at the output limit`);
  // Most failures are host-only objects ("does not contain device code"): said only when nothing else was read.
  if (failures.length && counts.objectsWithFigures === 0)
    notes.push(`cuobjdump read no figures from ${failures.length} object(s), e.g. ${failures[0]}`);
  return { build, notes, counts };
}

/**
 * Without cuobjdump: the kernels of each object's device code, read from its bytes (cubins, and the
 * fatbins objects embed); returns what to add to the note (compressed entries, files too large).
 */
function readDeviceCodeOf(
  objects: readonly BuildFile[],
  build: BuildFigures,
  counts: BuildRead['counts'],
  maxBytes = 256 * 1024 * 1024,
): string {
  let compressed = 0;
  let uncertain = 0;
  let tooLarge = 0;
  for (const file of objects) {
    if (file.size > maxBytes) {
      tooLarge++;
      continue;
    }
    let bytes: Buffer;
    try {
      bytes = readBoundedFileSync(file.path, { maxBytes, what: 'object' }).bytes;
    } catch {
      continue;
    }
    counts.objects++;
    const read = build.addDeviceCodeBytes({ path: file.path, modifiedAt: file.modifiedAt }, bytes);
    compressed += read.compressed;
    uncertain += read.uncertain;
    if (read.kernels > 0) counts.objectsWithFigures++;
  }
  return [
    compressed
      ? `; ${compressed} compressed device code entr${compressed === 1 ? 'y' : 'ies'} not read (cuobjdump reads them)`
      : '',
    uncertain
      ? `; ${uncertain} kernel(s) whose shared memory the device code mixes with reserved shared memory (sm_90 objects) not read`
      : '',
    tooLarge ? `; ${tooLarge} object(s) over ${maxBytes} bytes not read` : '',
  ].join('');
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** One entry per real file: a file reached by two links is read once. */
function dedupe(files: BuildFile[]): BuildFile[] {
  const seen = new Set<string>();
  return files.filter((f) => {
    const real = realPath(f.path) ?? f.path;
    if (seen.has(real)) return false;
    seen.add(real);
    return true;
  });
}
