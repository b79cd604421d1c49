import { newQueuedRun, NewRun, Run } from '../../src/domain/run.model';

/** What a run queued in a test or a bench holds unless it says otherwise: a test run by webhook, no version, no input. */
const DEFAULTS: NewRun = {
  workflowId: 'wfl_test',
  runType: 'test',
  versionId: null,
  version: null,
  definition: null,
  input: null,
  trigger: 'webhook',
  startedBy: 'usr_a',
  actingUserId: 'usr_a',
  idempotencyKey: null,
};

/** A queued run (`newQueuedRun`) with the given fields over DEFAULTS. */
export const aQueuedRun = (fields: Partial<NewRun> = {}, now?: Date): Run => newQueuedRun({ ...DEFAULTS, ...fields }, now);
