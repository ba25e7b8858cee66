/** Parse a `.cu` snippet and analyse it, the way the server does. */
import {
  analyzeDocument,
  type AnalyzeInput,
  type DocumentFacts,
} from '../../server/src/core/incremental/document-analysis';
import { parseCuda } from './grammar';

export async function analyzeSnippet(text: string, extra: Partial<AnalyzeInput> = {}): Promise<DocumentFacts> {
  const tree = await parseCuda(text);
  return analyzeDocument({ uri: 'file:///snippet.cu', version: 1, text, tree, ...extra });
}
