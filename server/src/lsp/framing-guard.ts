/**
 * LSP's base protocol checked before vscode-jsonrpc reads it: every message is a header block (ASCII lines
 * `Name: value`, ended by an empty line, at most 8 KiB) with a decimal Content-Length no larger than the
 * limit, then exactly that many bytes. A stream that breaks the framing cannot be read on correctly (the next
 * message's start is lost), and one that announces gigabytes would be waited on for ever: either is a framing
 * error, which the entry point answers by closing the connection and exiting non-zero (the client restarts the
 * server). The bytes pass through unchanged, but for a body over the size the document limit allows (framingGuard).
 */
import { Transform, type TransformCallback } from 'node:stream';

/** The largest message body accepted: a document of the largest size the limits allow, JSON-escaped, fits. */
export const MAX_CONTENT_LENGTH = 1024 * 1024 * 1024;
const MAX_HEADER_BYTES = 8 * 1024;
const HEADER_END = Buffer.from('\r\n\r\n');

export class FramingError extends Error {}

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

/** The field a stand-in message carries: the byte length of the message it stands for (see framingGuard). */
export const OVERSIZE_FIELD = '$cudaOccupancyOversizeBytes';
/** The bytes of an oversize body read to find its method, document and version; the rest is dropped unread. */
const OVERSIZE_HEAD_BYTES = 64 * 1024;

/**
 * A pass-through stream that fails (`error` with a FramingError) at the first framing error. A body larger than
 * `maxPassedLength()` is not passed on: decoding it alone costs four times its size (a 300 MB `didOpen` took
 * 1.3 GB), and a document that large is not analysed anyway. Its first 64 KiB are read; a `didOpen` or `didChange`
 * whose document they name is passed on as a stand-in without the text, marked with OVERSIZE_FIELD (the
 * document is then reported too large), and anything else is a framing error.
 */
export function framingGuard(
  maxContentLength = MAX_CONTENT_LENGTH,
  maxPassedLength: () => number = () => maxContentLength,
): Transform {
  let header = Buffer.alloc(0);
  /** The body being read: its bytes still to come, and, for an oversize one, what is kept of it. */
  let body: { remaining: number; length: number; head: Buffer[] | null; kept: number } | null = null;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
      try {
        let offset = 0;
        while (offset < chunk.length) {
          if (body) {
            const take = Math.min(body.remaining, chunk.length - offset);
            const piece = chunk.subarray(offset, offset + take);
            if (!body.head) this.push(piece);
            else if (body.kept < OVERSIZE_HEAD_BYTES) {
              body.head.push(piece.subarray(0, OVERSIZE_HEAD_BYTES - body.kept));
              body.kept += Math.min(piece.length, OVERSIZE_HEAD_BYTES - body.kept);
            }
            body.remaining -= take;
            offset += take;
            if (body.remaining === 0) {
              if (body.head) this.push(frame(standIn(Buffer.concat(body.head).toString('utf8'), body.length)));
              body = null;
            }
            continue;
          }
          const before = header.length;
          header = Buffer.concat([
            header,
            chunk.subarray(offset, Math.min(chunk.length, offset + MAX_HEADER_BYTES + 4)),
          ]);
          const end = header.indexOf(HEADER_END);
          if (end < 0) {
            if (header.length > MAX_HEADER_BYTES)
              throw new FramingError(`a message header is longer than ${MAX_HEADER_BYTES} bytes`);
            offset += header.length - before;
            continue;
          }
          const length = contentLength(header.subarray(0, end).toString('ascii'), maxContentLength);
          offset += end + HEADER_END.length - before;
          const passed = length <= maxPassedLength();
          if (passed) this.push(header.subarray(0, end + HEADER_END.length));
          header = Buffer.alloc(0);
          if (length > 0) body = { remaining: length, length, head: passed ? null : [], kept: 0 };
          else if (!passed) this.push(frame(standIn('', 0)));
        }
      } catch (error) {
        done(error as Error);
        return;
      }
      done();
    },
  });
}

/** A message framed as the base protocol frames it. */
function frame(message: object): Buffer {
  const json = Buffer.from(JSON.stringify(message), 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${json.length}\r\n\r\n`, 'ascii'), json]);
}

/**
 * The stand-in for an oversize message, from its first bytes: a `didOpen` without its text, or a `didChange`
 * without its changes, of the document and version named there, with OVERSIZE_FIELD. Throws a FramingError for
 * any other message, or one whose first bytes do not name its document.
 */
export function standIn(head: string, length: number): object {
  const field = (name: string, value: string) => new RegExp(`"${name}"\\s*:\\s*${value}`).exec(head)?.[1];
  const string = (name: string) => {
    const raw = field(name, '"((?:[^"\\\\]|\\\\.)*)"');
    try {
      return raw === undefined ? undefined : (JSON.parse(`"${raw}"`) as string);
    } catch {
      return undefined;
    }
  };
  const method = string('method');
  const uri = string('uri');
  const version = Number(field('version', '(-?\\d+)') ?? NaN);
  const over = `a message of ${length} bytes`;
  if ((method === 'textDocument/didOpen' || method === 'textDocument/didChange') && uri && Number.isInteger(version)) {
    const textDocument =
      method === 'textDocument/didOpen'
        ? { uri, languageId: string('languageId') ?? 'cuda-cpp', version, text: '' }
        : { uri, version };
    const params = method === 'textDocument/didOpen' ? { textDocument } : { textDocument, contentChanges: [] };
    return { jsonrpc: '2.0', method, params: { ...params, [OVERSIZE_FIELD]: length } };
  }
  throw new FramingError(
    method === 'textDocument/didOpen' || method === 'textDocument/didChange'
      ? `${over} does not name its document and version in its first ${OVERSIZE_HEAD_BYTES} bytes`
      : `${over} (${method ?? 'no method in its first bytes'}) is over the size the document limit allows`,
  );
}
