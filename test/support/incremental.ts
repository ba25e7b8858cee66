/** What the incremental-analysis tests read: body passes so far, and a document's facts once complete or fresh. */
import * as assert from 'node:assert/strict';
import { DocumentStore } from '../../server/src/lsp/document-store';
import { keptTables } from '../../server/src/core/incremental/kept-tables';
import type { DocumentFacts } from '../../server/src/core/incremental/document-analysis';
import { getCudaParser } from './grammar';

/** Kernel bodies analysed so far in this process (memory-level parallelism and divergence, one each). */
export function bodyPasses(): number {
  const table = keptTables().find((t) => t.name === 'kernel body passes');
  assert.ok(table, 'document-analysis counts its kernel body passes');
  return table.size!;
}

/** The facts once every kernel body is read, without the source text. */
export function completeFacts(store: DocumentStore, uri: string): Omit<DocumentFacts, 'source'> {
  while (store.complete(uri, 1000));
  const { source: _source, ...facts } = store.facts(uri)!;
  return facts;
}

/** The complete facts of `text` opened afresh. */
export async function freshFacts(uri: string, text: string, version: number): Promise<Omit<DocumentFacts, 'source'>> {
  const store = new DocumentStore({ parser: await getCudaParser() });
  store.open(uri, 'cuda-cpp', version, text);
  try {
    return completeFacts(store, uri);
  } finally {
    store.dispose();
  }
}
