import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AppConfig } from '../config/app-config';
import { NodeRegistry, RegisteredNode } from '../engine/node-registry';
import { PARAMETER_MODES, ParameterMode } from '../storage/ports/workflow-definition';
import { NodeTypeListDto } from './workflow-responses.dto';

const nodeTypeView = (node: RegisteredNode) => ({
  type: node.definition.type,
  version: node.definition.version,
  displayName: node.definition.displayName,
  description: node.definition.description,
  trigger: node.definition.trigger === true,
  defaultRunMode: node.definition.defaultRunMode,
  parameters: node.schema,
});

@ApiTags('workflows')
@ApiSecurity('api-key')
@Controller('api/v1/node-types')
export class NodeTypesController {
  private readonly items: ReturnType<typeof nodeTypeView>[];
  /** The same for every parameter; `ai` only where a language model is configured. */
  private readonly parameterModes: ParameterMode[];

  constructor(registry: NodeRegistry, config: AppConfig) {
    this.items = registry.list().map(nodeTypeView);
    this.parameterModes = PARAMETER_MODES.filter((mode) => mode !== 'ai' || Boolean(config.LLM_URL));
  }

  /** Every loaded node type and version with the JSON Schema of its parameters, and the parameter modes on offer. */
  @Get()
  @ApiOkResponse({ type: NodeTypeListDto })
  list() {
    return { items: this.items, parameterModes: this.parameterModes };
  }
}
