/** `${...}` anywhere makes the text a template, as on the server; otherwise it is one expression. */
export const isTemplate = (source: string) => /\$\{/.test(source);
