import type { Migration } from './migration';

/** AI agents: the sub-steps of a step (model and tool calls), and the conversations agents remember. */
export const AGENT_MIGRATIONS: Migration[] = [
  {
    version: 220,
    name: 'step sub-steps',
    sql: `ALTER TABLE workflow_run_steps ADD COLUMN sub_steps TEXT;`,
  },
  {
    version: 221,
    name: 'agent conversations',
    sql: `
      CREATE TABLE agent_conversations (
        key TEXT PRIMARY KEY,
        messages TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
      );
      CREATE INDEX agent_conversations_expires ON agent_conversations(expires_at);
    `,
  },
];
