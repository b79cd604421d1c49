/** As the server reads it (src/engine/expressions/template.ts): `${` with a `}` after it makes a template; otherwise the text is one expression. */
export function isTemplate(source: string): boolean {
  const open = source.indexOf('${');
  return open !== -1 && source.indexOf('}', open + 2) !== -1;
}
