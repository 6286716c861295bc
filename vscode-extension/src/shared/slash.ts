/**
 * Qwen Code 0.24.4's isSlashCommand (the server's qwen_lsp/commands/parse.py decides the same):
 * a line starting with `/`, not `//` or `/*`, whose first word holds no `/` or `\`. So
 * `/usr/lib is missing` is a message for the model, `/compress` and `/nosuch` are commands.
 */
export function isSlashCommand(line: string): boolean {
  if (!line.startsWith('/') || line.startsWith('//') || line.startsWith('/*')) return false;
  const first = line.slice(1).trimStart().split(/\s+/u)[0] ?? '';
  return !/[/\\]/.test(first);
}
