import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module';
import { SearchModule } from '../search/search.module';
import { ServicesBackendFactory } from './services-backend.adapter';
import { McpHttpEndpoints } from './transports/mcp-http-endpoints';

/** The remote MCP server: Streamable HTTP at /mcp and legacy SSE at /sse on the main HTTP server. */
@Module({
  imports: [CollectionsModule, SearchModule],
  providers: [ServicesBackendFactory, McpHttpEndpoints],
  exports: [McpHttpEndpoints],
})
export class McpModule {}
