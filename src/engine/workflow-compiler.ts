import { AppError } from '../common/app-error';
import { WorkflowDefinition } from '../domain/workflow-definition.model';
import { CompiledNode, CompiledWorkflow, CompileOptions, DefinitionProblem, PreparedNode } from './compiler/compiled-plan';
import { checkEdges, checkTriggersAndConnections, executionOrder, loopStructure } from './compiler/graph-checks';
import { prepareNode, resolveType } from './compiler/node-preparation';
import { NodeRegistry } from './node-registry';

export type {
  AiParameter,
  CompiledEdge,
  CompiledNode,
  CompiledWorkflow,
  CompileOptions,
  DefinitionProblem,
  ExpressionParameter,
} from './compiler/compiled-plan';

/**
 * Checks everything the shape validation of the DTO cannot: node types and versions, parameters
 * (expressions and code parse), outputs named by edges, the graph (dangling edges, cycles other
 * than a loop's, one trigger, everything connected, loops that nest) and returns the execution
 * plan. Every problem is collected, so one 400 lists them all.
 *
 * Execution order: topological over the edges without the loops' back edges, ready nodes taken
 * in definition order, and a loop after every node outside it that its body reads from.
 *
 * @throws AppError VALIDATION_FAILED with `details.fields` of DefinitionProblem
 */
export function compileWorkflow(definition: WorkflowDefinition, registry: NodeRegistry, options: CompileOptions = {}): CompiledWorkflow {
  const problems: DefinitionProblem[] = [];
  const specs = definition.nodes;
  const indexById = new Map<string, number>();
  specs.forEach((spec, i) => {
    if (indexById.has(spec.id)) problems.push({ field: `nodes[${i}].id`, reason: `duplicate node id "${spec.id}"`, nodeId: spec.id });
    else indexById.set(spec.id, i);
  });
  const registered = specs.map((spec, i) => resolveType(spec, i, registry, problems));
  const prepared = new Map<string, PreparedNode>();
  specs.forEach((spec, i) => {
    const node = registered[i];
    if (!node || prepared.has(spec.id)) return;
    const built = prepareNode(spec, i, node, problems, options);
    if (built) prepared.set(spec.id, built);
  });

  const declared = new Map(specs.map((spec, i) => [spec.id, registered[i]] as const));
  const edges = checkEdges(definition, indexById, prepared, declared, problems);
  const loops = specs.filter((spec) => declared.get(spec.id)?.definition.loop === true).map((spec) => spec.id);
  const structure = loopStructure(loops, edges, specs, problems);
  checkTriggersAndConnections(specs, registered, edges, structure, problems);
  const order = executionOrder(specs, edges, structure, problems);

  if (problems.length) {
    throw AppError.validation(problems, `The workflow definition has ${problems.length} problem(s)`);
  }
  const nodes = order.map((id, position): CompiledNode => {
    const incoming = edges.filter((e) => e.to === id && !structure.backEdges.has(e));
    return {
      ...prepared.get(id)!,
      position,
      incoming: incoming.map(({ from, output }) => ({ from, output })),
      predecessors: [...new Set(incoming.map((e) => e.from))],
      backEdges: edges.filter((e) => e.to === id && structure.backEdges.has(e)).map(({ from, output }) => ({ from, output })),
      linkedOutputs: [...new Set(edges.filter((e) => e.from === id).map((e) => e.output))],
      loop: structure.innermost.get(id) ?? null,
    };
  });
  const byId = new Map(nodes.map((n) => [n.id, n]));
  return { nodes, trigger: nodes.find((n) => n.node.definition.trigger)!, byId };
}
