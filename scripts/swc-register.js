// Lets benchmark and tool scripts run from TypeScript sources without a build step,
// with the same decorator settings as jest.config.js.
const { transformSync } = require('@swc/core');
const fs = require('node:fs');

require.extensions['.ts'] = function compileTs(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { code } = transformSync(source, {
    filename,
    sourceMaps: 'inline',
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};

// Plugins import the SDK by the package's name, as outside plugins do. From compiled code Node
// resolves that name through package.json "exports" (dist/src/sdk); from sources it must be the
// sources' SDK, or a plugin would load a second copy of it beside the one the engine runs on.
const Module = require('node:module');
const path = require('node:path');
const SDK_SOURCES = {
  'workflow-collection-service/sdk': path.join(__dirname, '..', 'src', 'sdk', 'index.ts'),
  'workflow-collection-service/sdk/testing': path.join(__dirname, '..', 'src', 'sdk', 'testing.ts'),
};
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return resolveFilename.call(this, SDK_SOURCES[request] ?? request, ...rest);
};
