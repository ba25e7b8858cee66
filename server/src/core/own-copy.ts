/**
 * A string that holds no reference to the text it was cut from. V8 represents a
 * slice of 13 characters or more as a view into its parent, so a short name kept
 * in a long-lived cache would otherwise keep a whole document's text alive (every
 * version of every file it was read from).
 */
export function ownCopy(text: string): string {
  // Concatenating makes a new string; slicing it flattens that into fresh memory.
  return text.length > 12 ? (text + ' ').slice(0, -1) : text;
}
