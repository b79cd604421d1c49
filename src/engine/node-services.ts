import { ApprovalsFacade, CodeSandbox, ConversationMemory, LanguageModels, NodeConfigurationError, WorkflowsFacade } from '../sdk';

/**
 * What `ctx.models`, `ctx.sandbox` and `ctx.workflows` are where the deployment (or a unit test of
 * the executor) provides none: every call fails with a configuration error that says what is missing.
 */
export const NO_LANGUAGE_MODEL: LanguageModels = {
  chat: () =>
    Promise.reject(
      new NodeConfigurationError(
        'No language model is configured: set LLM_URL (and LLM_API_KEY, LLM_MODEL) to an OpenAI-compatible chat completions endpoint',
      ),
    ),
};

export const NO_SANDBOX: CodeSandbox = {
  run: () => Promise.reject(new NodeConfigurationError('The code sandbox is not available in this process')),
};

export const NO_WORKFLOWS: WorkflowsFacade = {
  execute: () => Promise.reject(new NodeConfigurationError('Running other workflows is not available in this process')),
  describeTool: () => Promise.reject(new NodeConfigurationError('Other workflows are not available in this process')),
};

export const NO_MEMORY: ConversationMemory = {
  load: () => Promise.reject(new NodeConfigurationError('Conversation memory is not available in this process')),
  append: () => Promise.reject(new NodeConfigurationError('Conversation memory is not available in this process')),
};

export const NO_APPROVALS: ApprovalsFacade = {
  link: () => {
    throw new NodeConfigurationError('Approval links are not available in this process');
  },
};
