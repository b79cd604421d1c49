import { CONTENT_MIGRATIONS } from './content';
import { FOUNDATION_MIGRATIONS } from './foundation';
import { WORKFLOW_MIGRATIONS } from './workflows';
import { JOBS_MIGRATIONS } from './jobs';

export interface Migration {
  /** Globally unique and ordered. Ranges by area: 1-99 foundation, 100-199 collections content, 200-299 workflows, 300-399 jobs. */
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [...FOUNDATION_MIGRATIONS, ...CONTENT_MIGRATIONS, ...WORKFLOW_MIGRATIONS, ...JOBS_MIGRATIONS];
