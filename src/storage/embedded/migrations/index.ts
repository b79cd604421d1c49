import { CONTENT_MIGRATIONS } from './content';
import { FOUNDATION_MIGRATIONS } from './foundation';
import { WORKFLOW_MIGRATIONS } from './workflows';
import { JOBS_MIGRATIONS } from './jobs';
import { CREDENTIAL_MIGRATIONS } from './credentials';
import { AGENT_MIGRATIONS } from './agents';
import { OAUTH_MIGRATIONS } from './oauth';
import type { Migration } from './migration';

export const MIGRATIONS: Migration[] = [
  ...FOUNDATION_MIGRATIONS,
  ...CONTENT_MIGRATIONS,
  ...WORKFLOW_MIGRATIONS,
  ...JOBS_MIGRATIONS,
  ...CREDENTIAL_MIGRATIONS,
  ...AGENT_MIGRATIONS,
  ...OAUTH_MIGRATIONS,
];
