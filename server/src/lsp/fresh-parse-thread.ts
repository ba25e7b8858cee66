/**
 * A worker thread that parses an editor's document from scratch, beside the server's thread, and
 * answers with the tree's shape: the server's incremental parse near an error is kept only once
 * it matches (see FreshParses). Messages: `{ id, text }` in, `{ id, shape }` or `{ id, error }` out.
 */
import { parentPort } from 'node:worker_threads';
import { createFreshParser } from '../core/analyzer';
import { readGrammarBytes } from '../files/grammar-files';

const port = parentPort;
if (port) {
  const ready = createFreshParser(readGrammarBytes());
  port.on('message', (message: { id: number; text: string }) => {
    ready.then(
      (parser) => {
        try {
          port.postMessage({ id: message.id, shape: parser.shapeOf(message.text) });
        } catch (error) {
          port.postMessage({ id: message.id, error: String(error) });
        }
      },
      (error: unknown) => port.postMessage({ id: message.id, error: String(error) }),
    );
  });
}
