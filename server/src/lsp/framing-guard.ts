/**
 * LSP's base protocol checked before vscode-jsonrpc reads it: every message is a header block (ASCII lines
 * `Name: value`, ended by an empty line, at most 8 KiB) with a decimal Content-Length no larger than the
 * limit, then exactly that many bytes. A stream that breaks the framing cannot be read on correctly (the next
 * message's start is lost), and one that announces gigabytes would be waited on for ever: either is a framing
 * error, which the entry point answers by closing the connection and exiting non-zero (the client restarts the
 * server). The bytes pass through unchanged.
 */
import { Transform, type TransformCallback } from 'node:stream';

/** The largest message body accepted: a document of the largest size the limits allow, JSON-escaped, fits. */
export const MAX_CONTENT_LENGTH = 1024 * 1024 * 1024;
const MAX_HEADER_BYTES = 8 * 1024;
const HEADER_END = Buffer.from('\r\n\r\n');

export class FramingError extends Error {}

/** Tracks the framing of a byte stream fed to it in chunks; throws FramingError at the first violation. */
export class FramingChecker {
  private header = Buffer.alloc(0);
  /** Bytes of the current body still to come, or null while a header is read. */
  private remaining: number | null = null;

  constructor(private readonly maxContentLength = MAX_CONTENT_LENGTH) {}

  feed(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.remaining !== null) {
        const take = Math.min(this.remaining, chunk.length - offset);
        this.remaining -= take;
        offset += take;
        if (this.remaining === 0) this.remaining = null;
        continue;
      }
      // In a header: look for its end across chunk boundaries.
      const before = this.header.length;
      this.header = Buffer.concat([
        this.header,
        chunk.subarray(offset, Math.min(chunk.length, offset + MAX_HEADER_BYTES + 4)),
      ]);
      const end = this.header.indexOf(HEADER_END);
      if (end < 0) {
        if (this.header.length > MAX_HEADER_BYTES)
          throw new FramingError(`a message header is longer than ${MAX_HEADER_BYTES} bytes`);
        offset += this.header.length - before;
        continue;
      }
      const length = contentLength(this.header.subarray(0, end).toString('ascii'), this.maxContentLength);
      offset += end + HEADER_END.length - before;
      this.header = Buffer.alloc(0);
      this.remaining = length === 0 ? null : length;
    }
  }
}

function contentLength(header: string, max: number): number {
  let length: number | null = null;
  for (const line of header.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new FramingError(`a message header line has no name: ${JSON.stringify(line.slice(0, 80))}`);
    if (line.slice(0, colon).trim().toLowerCase() !== 'content-length') continue;
    const value = line.slice(colon + 1).trim();
    if (!/^\d{1,15}$/.test(value))
      throw new FramingError(`Content-Length is not a number: ${JSON.stringify(value.slice(0, 40))}`);
    length = Number(value);
  }
  if (length === null) throw new FramingError('a message header has no Content-Length');
  if (length > max) throw new FramingError(`Content-Length ${length} is over the ${max}-byte limit`);
  return length;
}

/** A pass-through stream that fails (`error` with a FramingError) at the first framing error. */
export function framingGuard(maxContentLength = MAX_CONTENT_LENGTH): Transform {
  const checker = new FramingChecker(maxContentLength);
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
      try {
        checker.feed(chunk);
      } catch (error) {
        done(error as Error);
        return;
      }
      done(null, chunk);
    },
  });
}
