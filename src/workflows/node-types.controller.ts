import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '../auth/principal';
import { AppConfig } from '../config/app-config';
import { NodeRegistry, RegisteredNode } from '../engine/node-registry';
import { PARAMETER_MODES, ParameterMode } from '../domain/workflow-definition.model';
import { NodeOptionsService } from './node-options.service';
import { ParameterOptionsDto, ParameterOptionsQueryDto } from './node-parameter-options.dto';
import { NodeTypeListDto } from './workflow-responses.dto';

const nodeTypeView = (node: RegisteredNode) => ({
  type: node.definition.type,
  version: node.definition.version,
  displayName: node.definition.displayName,
  description: node.definition.description,
  // A trigger that also schedules runs or offers a tool is an object: still a trigger.
  trigger: Boolean(node.definition.trigger),
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

  constructor(
    registry: NodeRegistry,
    config: AppConfig,
    private readonly options: NodeOptionsService,
  ) {
    this.items = registry.list().map(nodeTypeView);
    this.parameterModes = PARAMETER_MODES.filter((mode) => mode !== 'ai' || Boolean(config.LLM_URL));
  }

  /** Every loaded node type and version with the JSON Schema of its parameters, and the parameter modes on offer. */
  @Get()
  @ApiOkResponse({ type: NodeTypeListDto })
  list() {
    return { items: this.items, parameterModes: this.parameterModes };
  }

  /**
   * The entries of a parameter's dropdown (its schema property says `"x-dynamic-options": true`),
   * listed for the caller: e.g. the collections they can see.
   */
  @Get(':type/:version/parameters/:name/options')
  @ApiOkResponse({ type: ParameterOptionsDto })
  @ApiResponse({ status: 404, description: 'Unknown node type, version or parameter, or a parameter without dynamic options' })
  @ApiResponse({ status: 502, description: 'A system the plugin asked for the options failed (NodeUpstreamError)' })
  @ApiResponse({ status: 504, description: 'Listing the options took too long' })
  parameterOptions(
    @CurrentPrincipal() principal: Principal,
    @Param('type') type: string,
    @Param('version') version: string,
    @Param('name') name: string,
    @Query() query: ParameterOptionsQueryDto,
  ): Promise<ParameterOptionsDto> {
    return this.options.options(principal, type, version, name, query.parameters);
  }
}
