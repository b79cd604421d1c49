/**
 * The node contract: the only module a plugin imports. It depends on nothing of the service and
 * nothing of Nest, the store or the queue (class-validator decorators are the plugin's own import).
 */
export { defineNode } from './node-definition';
export type { NodeDefinition, ParametersClass } from './node-definition';
export type {
  CollectionFile,
  CollectionFileContent,
  CollectionsFacade,
  HttpMethod,
  InputModeContext,
  ItemModeContext,
  NodeContext,
  NodeHttpClient,
  NodeHttpRequest,
  NodeHttpResponse,
  NodeLogger,
  RunMode,
  VariableValue,
} from './node-context';
export { isNodeError, NodeConfigurationError, NodeError, NodeTimeoutError, NodeUpstreamError } from './node-errors';
export type { NodeErrorKind, NodeErrorOptions, NodeUpstreamErrorOptions } from './node-errors';
export { Parameter, parameterDocs } from './parameter';
export type { ParameterDoc } from './parameter';
