import type { DynamicModule } from '@nestjs/common';
import type { AppConfig } from './app-config';

const built = new WeakMap<AppConfig, Map<object, DynamicModule>>();

/**
 * One dynamic module per configuration and module class, whoever imports it. A module built from
 * the configuration (`forRoot(config)`) is imported by every module whose providers inject what it
 * provides; Nest must see the same module each time, or it would build its providers twice (two
 * queues, two sandbox pools, two node registries).
 */
export function oncePerConfig(config: AppConfig, module: object, build: () => DynamicModule): DynamicModule {
  let modules = built.get(config);
  if (!modules) built.set(config, (modules = new Map()));
  let dynamic = modules.get(module);
  if (!dynamic) modules.set(module, (dynamic = build()));
  return dynamic;
}
