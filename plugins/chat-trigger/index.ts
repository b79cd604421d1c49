import { defineNode } from 'workflow-collection-service/sdk';

/** Configured by adding it to a workflow: the chat endpoint is the workflow's own. */
export class ChatTriggerParameters {}

export default defineNode({
  type: 'chat-trigger',
  version: 1,
  displayName: 'Chat Trigger',
  description:
    "Starts a run of the published workflow for each message sent to POST /api/v1/workflows/<id>/chat (or the console's chat panel); outputs {sessionId, message}, so an agent keeps one conversation per sessionId (e.g. sessionKey `input.sessionId`). The answer streams back as Server-Sent Events: the Respond node's input, else the run's output (a string, or its answer, text or content field).",
  parameters: ChatTriggerParameters,
  defaultRunMode: 'input',
  trigger: true,
  execute: (ctx) => (ctx.runMode === 'input' ? ctx.input : ctx.item),
});
