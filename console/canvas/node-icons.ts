/**
 * A node's icon: a short glyph on the colour of its kind, drawn as text so that it needs no image
 * (the console's Content-Security-Policy loads nothing from elsewhere) and stays sharp at any zoom.
 * Symbols of the common text fonts only, never emoji (which a machine without an emoji font draws
 * as empty boxes).
 */
const GLYPHS: Record<string, string> = {
  'webhook-trigger': '⚡',
  'schedule-trigger': '◷',
  'mcp-trigger': '⚡',
  'chat-trigger': '✉',
  if: '⋔',
  switch: '⇶',
  filter: '⊻',
  merge: '⋈',
  loop: '↻',
  wait: '‖',
  approval: '✔',
  'execute-workflow': '↪',
  respond: '↩',
  'stop-and-error': '✖',
  set: '✎',
  code: '{}',
  'http-request': '⇄',
  'list-files': '☰',
  'get-file-contents': '▤',
  'search-collection': '⊙',
  'add-file': '+',
  'chat-completion': '✦',
  'ai-agent': '✦',
  'mcp-client': '⚙',
};

/** The glyph of `type`, or its first two letters for a type the table does not know (a plugin's). */
export function glyphOf(type: string): string {
  return (
    GLYPHS[type] ??
    (type
      .replace(/[^A-Za-z0-9]/g, '')
      .slice(0, 2)
      .toUpperCase() ||
      '?')
  );
}
