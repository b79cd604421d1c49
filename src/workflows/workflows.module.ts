import { DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { membersController } from '../auth/members.controller';
import { RunCollectionsModule } from '../collections/run-collections.module';
import { OutboundHttpModule } from '../common/outbound-http.module';
import { SecretsModule } from '../common/secrets.module';
import { AppConfig } from '../config/app-config';
import { oncePerConfig } from '../config/once-per-config';
import { CredentialsModule } from '../credentials/credentials.module';
import { EngineModule } from '../engine/engine.module';
import { HealthModule } from '../health/health.module';
import { RunsModule } from '../runs/runs.module';
import { StorageModule } from '../storage/storage.module';
import { NodeOptionsService } from './node-options.service';
import { NodeTypesController } from './node-types.controller';
import { PublishedWorkflowsCheck } from './published-workflows.check';
import { WorkflowsController } from './workflows.controller';
import { WorkflowToolEvents, WorkflowToolsService } from './workflow-tools.service';
import { WorkflowToolsController } from './workflow-tools.controller';
import { WorkflowsService } from './workflows.service';

/**
 * Workflows, versions, variables, sharing, node types and their options, and published workflows
 * offered as tools, over the engine (node types, compile) and the runs (a tool call starts one).
 * Exports what the MCP server needs: the published workflows as tools.
 */
@Module({})
export class WorkflowsModule {
  static forRoot(config: AppConfig): DynamicModule {
    return oncePerConfig(config, WorkflowsModule, () => ({
      module: WorkflowsModule,
      imports: [
        EngineModule.forRoot(config),
        RunsModule.forRoot(config),
        AuthModule,
        StorageModule,
        SecretsModule,
        OutboundHttpModule,
        CredentialsModule,
        RunCollectionsModule.forRoot(config),
        HealthModule.forRoot(config),
      ],
      controllers: [WorkflowsController, membersController('workflow', 'api/v1/workflows'), NodeTypesController, WorkflowToolsController],
      providers: [WorkflowsService, NodeOptionsService, WorkflowToolEvents, WorkflowToolsService, PublishedWorkflowsCheck],
      exports: [WorkflowToolsService, WorkflowToolEvents],
    }));
  }
}
