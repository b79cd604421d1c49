/**
 * The node contract: the only module a plugin imports. It depends on nothing of the service and
 * nothing of Nest, the store or the queue. class-validator and class-transformer, whose decorators
 * a plugin uses too, it loads only when a shared parameter (shared-parameters.ts) is declared.
 */
export { defineNode } from './node-definition';
export type { NodeDefinition, ParametersClass, TriggerOptions } from './node-definition';
export type {
  ApprovalsFacade,
  ChatMessage,
  ChatRequest,
  ChatResponse,
  ChatTool,
  ChatToolCall,
  CodeSandbox,
  CollectionFile,
  CollectionFileContent,
  CollectionPassage,
  CollectionSearchRerank,
  CollectionSummary,
  CollectionsFacade,
  ConversationMemory,
  HttpMethod,
  InputModeContext,
  ItemModeContext,
  LanguageModels,
  LoopState,
  McpClients,
  McpServerRef,
  McpSession,
  McpToolInfo,
  McpToolResult,
  NodeContext,
  NodeHttpClient,
  NodeHttpRequest,
  NodeHttpResponse,
  NodeInput,
  NodeLogger,
  NodeProgress,
  NodeSubStep,
  RunMode,
  SearchMode,
  VariableValue,
  WorkflowRunResult,
  WorkflowToolInfo,
  WorkflowsFacade,
} from './node-context';
export {
  DURATION_UNITS,
  isRoutedOutput,
  isWaitRequest,
  MAX_PAUSE_MS,
  toOutput,
  toOutputs,
  waitForDecision,
  waitUntil,
} from './node-output';
export type { DurationUnit, RoutedOutput, WaitRequest } from './node-output';
export { isNodeError, NodeConfigurationError, NodeError, NodeStopError, NodeTimeoutError, NodeUpstreamError } from './node-errors';
export type { NodeErrorKind, NodeErrorOptions, NodeUpstreamErrorOptions } from './node-errors';
export { linearJsonSchemaValidator, jsonSchemaRule, schemaDefinitionProblem, schemaParameterProblem, schemaProblems } from './json-schema';
export type { SchemaProblem } from './json-schema';
export { collectionOptions, CREDENTIAL_ID, credentialIdMessage, numeric, Parameter, parameterDocs } from './parameter';
export type { LoadOptions, LoadOptionsContext, ParameterDoc, ParameterOption } from './parameter';
export {
  CollectionParameter,
  CredentialParameter,
  ENDPOINT_CREDENTIAL_TYPES,
  EndpointCredentialParameter,
  EndpointParameter,
  HttpUrlParameter,
  TemperatureParameter,
} from './shared-parameters';
