import { Module, type OnApplicationShutdown } from '@nestjs/common';
import { OutboundHttpModule } from '../common/outbound-http.module';
import { SafeFetch } from '../common/safe-fetch';
import { AppConfig } from '../config/app-config';
import { Embedder } from '../domain/embedder.port';
import { Reranker } from '../domain/reranker.port';
import { LocalEmbedder } from './local/local-embedder.adapter';
import { OpenAiCompatibleEmbedder } from './openai-compatible/openai-embedder.adapter';
import { HttpReranker } from './reranking/http-reranker.adapter';

/** The remote endpoint when one is configured, else the local sentence encoder. */
export function createEmbedder(config: AppConfig): Embedder {
  if (config.EMBEDDINGS_URL) {
    return new OpenAiCompatibleEmbedder({
      url: config.EMBEDDINGS_URL,
      apiKey: config.EMBEDDINGS_API_KEY,
      model: config.EMBEDDINGS_MODEL,
    });
  }
  return new LocalEmbedder({ threads: config.EMBEDDING_THREADS });
}

/**
 * The `/rerank` endpoint of RERANK_URL, or none. The operator's endpoint is reached through a
 * client of its own that may reach its host even when private (a reranker beside the service);
 * endpoints that searches name go through the process's guarded client.
 */
export function createReranker(config: AppConfig, guardedFetch: SafeFetch): HttpReranker {
  const url = config.RERANK_URL;
  return new HttpReranker({
    configured: url ? { url, kind: config.RERANK_KIND, ...(config.RERANK_MODEL ? { model: config.RERANK_MODEL } : {}) } : null,
    apiKey: config.RERANK_API_KEY,
    configuredFetch: url
      ? new SafeFetch({
          allowedHosts: [...config.FETCH_ALLOWED_HOSTS, new URL(url).hostname.replace(/^\[|\]$/g, '')],
          connectTimeoutMs: config.FETCH_CONNECT_TIMEOUT_MS,
          timeoutMs: config.RERANK_TIMEOUT_MS,
          maxBytes: config.MAX_FILE_BYTES,
        })
      : null,
    guardedFetch,
    timeoutMs: config.RERANK_TIMEOUT_MS,
  });
}

@Module({
  imports: [OutboundHttpModule],
  providers: [
    { provide: Embedder, useFactory: createEmbedder, inject: [AppConfig] },
    { provide: HttpReranker, useFactory: createReranker, inject: [AppConfig, SafeFetch] },
    { provide: Reranker, useExisting: HttpReranker },
  ],
  exports: [Embedder, Reranker],
})
export class EmbeddingsModule implements OnApplicationShutdown {
  constructor(
    private readonly embedder: Embedder,
    private readonly reranker: HttpReranker,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.embedder.close(), this.reranker.close()]);
  }
}
