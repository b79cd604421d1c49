import { DynamicModule, Module } from '@nestjs/common';
import { membersController } from '../auth/members.controller';
import { SecretsModule } from '../common/secrets.module';
import { AppConfig } from '../config/app-config';
import { ChatController } from './chat.controller';
import { ChatService } from './chat.service';
import { EngineModule } from '../engine/engine.module';
import { RunsModule } from '../runs/runs.module';
import { NodeOptionsService } from './node-options.service';
import { NodeTypesController } from './node-types.controller';
import { PublishedWorkflowsCheck } from './published-workflows.check';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { RunsController } from './runs.controller';
import { RunsService } from './runs.service';
import { ApprovalsController } from './approvals.controller';
import { ApprovalsService } from './approvals.service';
import { WorkflowsController } from './workflows.controller';
import { WorkflowToolEvents, WorkflowToolsService } from './workflow-tools.service';
import { WorkflowToolsController } from './workflow-tools.controller';
import { WorkflowsService } from './workflows.service';

const built = new WeakMap<AppConfig, DynamicModule>();

/**
 * Workflows, versions, variables, sharing, the webhook and the runs API, over the engine (node
 * types, compile) and the run-time (admission, events). Exports what the MCP server needs: the
 * published workflows as tools.
 */
@Module({})
export class WorkflowsModule {
  static forRoot(config: AppConfig): DynamicModule {
    let module = built.get(config);
    if (!module) {
      module = {
        module: WorkflowsModule,
        imports: [EngineModule.forRoot(config), RunsModule.forRoot(config), SecretsModule, RateLimitModule],
        controllers: [
          WorkflowsController,
          membersController('workflow', 'api/v1/workflows'),
          RunsController,
          NodeTypesController,
          WorkflowToolsController,
          ChatController,
          ApprovalsController,
        ],
        providers: [
          WorkflowsService,
          RunsService,
          ChatService,
          ApprovalsService,
          NodeOptionsService,
          WorkflowToolEvents,
          WorkflowToolsService,
          PublishedWorkflowsCheck,
        ],
        exports: [WorkflowToolsService, WorkflowToolEvents],
      };
      built.set(config, module);
    }
    return module;
  }
}
