/**
 * Every file the server and the CLI read from disk is read here: only a regular file (a FIFO, a device such as
 * /dev/zero, a socket or a directory is refused before a byte is read, symbolic links followed to what they
 * name), and never more than a size cap. The file is opened non-blocking, so that opening a FIFO with no writer
 * returns at once, and checked with fstat on the open descriptor, so that what is checked is what is read.
 */
import { closeSync, constants, fstatSync, openSync, readSync, promises as fsp, type Stats } from 'node:fs';

export interface BoundedReadOptions {
  /** The most bytes read; a larger file is refused (the error says so). */
  readonly maxBytes: number;
  /** What the file is, for messages (`ptxas log`, `baseline`). */
  readonly what?: string;
}

export interface BoundedFile {
  readonly text: string;
  readonly bytes: Buffer;
  /** The open file's status (mtime for "how fresh"). */
  readonly stat: Stats;
}

/** Why a file was not read: `code` is `not-regular`, `too-large`, or the system's (`ENOENT`, `EACCES`). */
export class FileReadError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

function describe(file: string, options: BoundedReadOptions): string {
  return options.what ? `${options.what} ${file}` : file;
}

function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'not a regular file';
}

function checkStat(file: string, stat: Stats, options: BoundedReadOptions): void {
  if (!stat.isFile())
    throw new FileReadError(
      `cannot read ${describe(file, options)}: ${kindOf(stat)}, not a regular file`,
      'not-regular',
    );
  if (stat.size > options.maxBytes) throw tooLarge(file, options);
}

function tooLarge(file: string, options: BoundedReadOptions): FileReadError {
  return new FileReadError(
    `${describe(file, options)} is larger than ${formatBytes(options.maxBytes)}: not read`,
    'too-large',
  );
}

function systemError(file: string, options: BoundedReadOptions, error: unknown): FileReadError {
  if (error instanceof FileReadError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
  return new FileReadError(`cannot read ${describe(file, options)}: ${code}`, code);
}

/** `1 MB`, `64 MB`, `512 KB`. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

/** The bytes read so far, in buffers of the expected size then of 1 MiB; throws once past the cap. */
class Chunks {
  private readonly full: Buffer[] = [];
  private current: Buffer;
  private used = 0;
  private total = 0;

  constructor(
    private readonly file: string,
    private readonly options: BoundedReadOptions,
    expected: number,
  ) {
    this.current = Buffer.allocUnsafe(Math.min(options.maxBytes + 1, Math.max(expected + 1, 64 * 1024)));
  }

  room(): { buffer: Buffer; offset: number; length: number } {
    if (this.used === this.current.length) {
      this.full.push(this.current);
      this.current = Buffer.allocUnsafe(Math.min(this.options.maxBytes + 1 - this.total, 1024 * 1024) || 1);
      this.used = 0;
    }
    return { buffer: this.current, offset: this.used, length: this.current.length - this.used };
  }

  took(n: number): void {
    this.used += n;
    this.total += n;
    if (this.total > this.options.maxBytes) throw tooLarge(this.file, this.options);
  }

  bytes(): Buffer {
    return this.full.length === 0
      ? this.current.subarray(0, this.used)
      : Buffer.concat([...this.full, this.current.subarray(0, this.used)]);
  }
}

/** Reads a regular file of at most `maxBytes`, synchronously. Throws FileReadError. */
export function readBoundedFileSync(file: string, options: BoundedReadOptions): BoundedFile {
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (error) {
    throw systemError(file, options, error);
  }
  try {
    const stat = fstatSync(fd);
    checkStat(file, stat, options);
    // The file may grow (or, like /proc files, say size 0): read until its end, or one byte past the cap.
    const chunks = new Chunks(file, options, stat.size);
    for (;;) {
      const into = chunks.room();
      const n = readSync(fd, into.buffer, into.offset, into.length, null);
      if (n === 0) break;
      chunks.took(n);
    }
    const bytes = chunks.bytes();
    return { bytes, text: bytes.toString('utf8'), stat };
  } catch (error) {
    throw systemError(file, options, error);
  } finally {
    closeSync(fd);
  }
}

/** Reads a regular file of at most `maxBytes`. Rejects with FileReadError. */
export async function readBoundedFile(file: string, options: BoundedReadOptions): Promise<BoundedFile> {
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(file, OPEN_FLAGS);
  } catch (error) {
    throw systemError(file, options, error);
  }
  try {
    const stat = await handle.stat();
    checkStat(file, stat, options);
    const chunks = new Chunks(file, options, stat.size);
    for (;;) {
      const into = chunks.room();
      const { bytesRead } = await handle.read(into.buffer, into.offset, into.length, null);
      if (bytesRead === 0) break;
      chunks.took(bytesRead);
    }
    const bytes = chunks.bytes();
    return { bytes, text: bytes.toString('utf8'), stat };
  } catch (error) {
    throw systemError(file, options, error);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** The status of a regular file (following links), or null when there is none: for stamps, without opening it. */
export async function regularFileStat(file: string): Promise<Stats | null> {
  try {
    const stat = await fsp.stat(file);
    return stat.isFile() ? stat : null;
  } catch {
    return null;
  }
}
