import type { DynamicModule } from '@nestjs/common';
import type { AppConfig } from './app-config';

type Built = DynamicModule | Promise<DynamicModule>;

const built = new WeakMap<AppConfig, Map<object, Built>>();

/**
 * One dynamic module per configuration and module class, whoever imports it. A module built from
 * the configuration (`forRoot(config)`) is imported by every module whose providers inject what it
 * provides; Nest must see the same module each time, or it would build its providers twice (two
 * queues, two sandbox pools, two node registries). A module that loads its adapter lazily is built
 * as a promise (Nest's `imports` take one), and the same promise is handed to every importer.
 */
export function oncePerConfig<M extends Built>(config: AppConfig, module: object, build: () => M): M {
  let modules = built.get(config);
  if (!modules) built.set(config, (modules = new Map()));
  let dynamic = modules.get(module) as M | undefined;
  if (!dynamic) modules.set(module, (dynamic = build()));
  return dynamic;
}
