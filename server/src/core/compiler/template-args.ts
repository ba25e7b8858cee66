/** Template arguments and C++ types as text: split at top-level commas, compared in a spelling-insensitive form. Pure. */

/** `k<float, A<int, 2>>`, `<float, 256>` or `float, 256` -> `['float', 'A<int, 2>']`, split at top-level commas. */
export function splitTemplateArgsText(text: string): string[] {
  let body = text.trim();
  const open = body.indexOf('<');
  if (open >= 0 && body.endsWith('>')) body = body.slice(open + 1, -1);
  const args: string[] = [];
  let angles = 0;
  let brackets = 0; // (), [], {}: inside them `<` and `>` are operators
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '(' || c === '[' || c === '{') brackets++;
    else if (c === ')' || c === ']' || c === '}') brackets--;
    else if (brackets === 0 && c === '<') angles++;
    else if (brackets === 0 && c === '>') angles--;
    else if (c === ',' && angles === 0 && brackets === 0) {
      args.push(body.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = body.slice(start).trim();
  if (last || args.length) args.push(last);
  return args.filter((a) => a.length > 0);
}

/** A comparable form of a template argument: integer suffixes and casts dropped, types normalised. */
export function normalizeTemplateArg(arg: string): string {
  let a = arg.trim().replace(/\s+/g, ' ');
  const cast = /^\(([^()]+)\)\s*(-?\d+)$/.exec(a); // (char)65, (Op)1
  if (cast) a = cast[2];
  const integer = /^([-+]?)\s*(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)(?:[uU](?:ll|LL|l|L)?|(?:ll|LL|l|L)[uU]?)?$/.exec(a);
  if (integer) {
    const digits = integer[2].replace(/^0[bB]/, '');
    const value = /^0[xX]/.test(integer[2])
      ? BigInt(integer[2])
      : /^0[bB]/.test(integer[2])
        ? BigInt(`0b${digits}`)
        : BigInt(integer[2]);
    return (integer[1] === '-' ? -value : value).toString();
  }
  if (/^'.'$/.test(a)) return String(a.charCodeAt(1));
  return normalizeType(a.replace(/^::/, '').replace(/> >/g, '>>'));
}

/** A spelling-insensitive form of a C++ type: `const float *` and `float const*` agree. */
export function normalizeType(type: string): string {
  let t = ` ${type.replace(/\s+/g, ' ').trim()} `;
  t = t
    .replace(/\bstd::size_t\b|\bsize_t\b/g, 'unsigned long')
    .replace(/\bunsigned\s*(?=[*&,>)]|\s*$)/g, 'unsigned int ')
    .replace(/\bsigned int\b/g, 'int')
    .replace(/\blong int\b/g, 'long')
    .replace(/\bshort int\b/g, 'short');
  // Move a leading const/volatile after the first type name: `const T*` -> `T const*`.
  t = t.replace(/^ (const|volatile) ([\w:]+(?:<[^>]*>)?)/, ' $2 $1');
  return t.replace(/\s+/g, '').replace(/^\bconst\b/, '');
}
