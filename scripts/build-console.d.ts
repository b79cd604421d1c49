/** Bundles console/ into `outDir` (default dist/console); answers the hashed asset names. */
export function buildConsole(options?: { outDir?: string; minify?: boolean }): Promise<{ outDir: string; script: string; style: string }>;
