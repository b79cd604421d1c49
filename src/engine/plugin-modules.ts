import Module from 'node:module';
import { realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';

/** The service's package name (package.json), under which outside plugins import the SDK. */
export const SERVICE_PACKAGE = 'workflow-collection-service';

/** What `<package>/sdk...` means inside this process: the SDK the engine itself runs on. */
const SDK_ENTRIES: Readonly<Record<string, string>> = {
  [`${SERVICE_PACKAGE}/sdk`]: require.resolve('../sdk'),
  [`${SERVICE_PACKAGE}/sdk/testing`]: require.resolve('../sdk/testing'),
};

/**
 * Packages whose state must be the service's: class-validator and class-transformer keep the
 * decorators' metadata in module-level storage the engine reads to validate parameters and derive
 * their schema, and reflect-metadata patches the global Reflect once.
 */
const SHARED_PACKAGES = ['class-validator', 'class-transformer', 'reflect-metadata'];

type ResolveFilename = (
  request: string,
  parent: { filename?: string | null } | null | undefined,
  isMain: boolean,
  options?: unknown,
) => string;
const loader = Module as unknown as { _resolveFilename: ResolveFilename };

const pluginRoots = new Set<string>();
let installed = false;

/**
 * Makes code under `root` get the running service's SDK and shared packages when it requires them
 * by name, whatever its own node_modules holds (a `file:` link to the service, a copy installed
 * from a registry, or nothing). Without it an outside plugin would register its decorators in a
 * metadata storage the engine never reads. Node offers no public hook for CommonJS resolution
 * before 22.15 (`module.registerHooks`); `Module._resolveFilename` is the one tools such as
 * tsconfig-paths and module-alias wrap. Only requests of the names above, from files under a
 * plugin root, are redirected: the rest of the process resolves as before.
 */
export function shareServiceModules(root: string): void {
  // Module filenames are real paths; a root given through a symbolic link must compare as one.
  pluginRoots.add(realpathSync(resolve(root)) + sep);
  if (installed) return;
  installed = true;
  const original = loader._resolveFilename;
  loader._resolveFilename = function (this: unknown, request, parent, isMain, options) {
    const shared = parent?.filename && underPluginRoot(parent.filename) ? serviceModule(request) : undefined;
    return original.call(this, shared ?? request, parent, isMain, options);
  };
}

function underPluginRoot(file: string): boolean {
  for (const root of pluginRoots) if (file.startsWith(root)) return true;
  return false;
}

/** The service's own file for a request it shares, or undefined to resolve as Node would. */
export function serviceModule(request: string): string | undefined {
  const sdk = SDK_ENTRIES[request];
  if (sdk) return sdk;
  return SHARED_PACKAGES.some((name) => request === name || request.startsWith(`${name}/`)) ? require.resolve(request) : undefined;
}
