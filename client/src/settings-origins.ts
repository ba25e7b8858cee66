/**
 * Tells the server which settings the workspace sets (settings.ts: WORKSPACE_KEYS_FIELD): the answer to its
 * `workspace/configuration` request for `cudaOccupancy` lists the keys whose value comes from workspace or
 * folder settings, so that a compiler path or flags written in a repository's .vscode/settings.json are
 * checked against the user's allow-list. User-only settings (scope "machine") are answered from the user's
 * settings alone, whatever a workspace writes.
 */
import * as vscode from 'vscode';
import type { Middleware } from 'vscode-languageclient/node';
import { SETTINGS_SCHEMA, WORKSPACE_KEYS_FIELD, userOnlyKeys } from '../../server/src/protocol';

export const settingsOrigins: NonNullable<Middleware['workspace']> = {
  configuration: async (params, token, next) => {
    const result = await next(params, token);
    if (!Array.isArray(result)) return result;
    return result.map((value, k) =>
      params.items[k]?.section === 'cudaOccupancy' ? withOrigins(value, params.items[k].scopeUri) : value,
    );
  },
};

function withOrigins(value: unknown, scopeUri: string | undefined): unknown {
  const config = vscode.workspace.getConfiguration('cudaOccupancy', scopeUri ? vscode.Uri.parse(scopeUri) : undefined);
  const answer: Record<string, unknown> =
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? { ...(value as Record<string, unknown>) }
      : {};
  const userOnly = new Set<string>(userOnlyKeys());
  const fromWorkspace: string[] = [];
  for (const key of Object.keys(SETTINGS_SCHEMA)) {
    const seen = config.inspect(key);
    if (!seen) continue;
    if (userOnly.has(key)) {
      // Dotted keys are read after nested ones (settings.ts: flatten): this is the value the server reads.
      answer[key] = seen.globalValue ?? seen.defaultValue;
      continue;
    }
    const inWorkspace = [
      seen.workspaceValue,
      seen.workspaceFolderValue,
      seen.workspaceLanguageValue,
      seen.workspaceFolderLanguageValue,
    ].some((v) => v !== undefined);
    if (inWorkspace) fromWorkspace.push(key);
  }
  answer[WORKSPACE_KEYS_FIELD] = fromWorkspace;
  return answer;
}
