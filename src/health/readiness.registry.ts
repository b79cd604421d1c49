import { Injectable } from '@nestjs/common';

export interface ReadinessCheck {
  name: string;
  /** Rejects when the dependency does not answer (readiness fails); may resolve with details to show. */
  check: () => Promise<void | Record<string, unknown>>;
}

/**
 * Modules register what must answer before the process takes traffic (store, queue, index),
 * so the health endpoint does not need to know every adapter.
 */
@Injectable()
export class ReadinessRegistry {
  private readonly checks: ReadinessCheck[] = [];

  register(check: ReadinessCheck): void {
    this.checks.push(check);
  }

  list(): readonly ReadinessCheck[] {
    return this.checks;
  }
}
