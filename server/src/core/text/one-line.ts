/**
 * Source text quoted in a message, on one line: a backslash that continues a line (in a macro,
 * or anywhere) is the preprocessor's, not the code's, so it goes with its line break; then every
 * run of blanks becomes one space.
 */
export function oneLineOfCode(text: string): string {
  return text
    .replace(/\\[ \t]*\r?\n/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}
