import { Controller, Get } from '@nestjs/common';
import { ApiSecurity, ApiTags } from '@nestjs/swagger';
import { NodeRegistry, RegisteredNode } from '../engine/node-registry';

const nodeTypeView = (node: RegisteredNode) => ({
  type: node.definition.type,
  version: node.definition.version,
  displayName: node.definition.displayName,
  description: node.definition.description,
  trigger: node.definition.trigger === true,
  defaultRunMode: node.definition.defaultRunMode,
  expressionParameters: [...node.expressionParameters],
  parameters: node.schema,
});

@ApiTags('workflows')
@ApiSecurity('api-key')
@Controller('api/v1/node-types')
export class NodeTypesController {
  private readonly items: ReturnType<typeof nodeTypeView>[];

  constructor(registry: NodeRegistry) {
    this.items = registry.list().map(nodeTypeView);
  }

  /** Every loaded node type and version with the JSON Schema of its parameters. */
  @Get()
  list() {
    return { items: this.items };
  }
}
