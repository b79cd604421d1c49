/** Why a run stopped before its nodes did: the abort reason of the run's signal. */
export type InterruptReason = 'canceled' | 'shutdown' | 'timeout';

export class RunInterrupt extends Error {
  override readonly name = 'RunInterrupt';

  constructor(
    readonly reason: InterruptReason,
    message: string,
  ) {
    super(message);
  }
}

export const isRunInterrupt = (value: unknown): value is RunInterrupt => value instanceof RunInterrupt;
