import { Module, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { Embedder } from '../domain/embedder.port';
import { LocalEmbedder } from './local/local-embedder.adapter';
import { OpenAiCompatibleEmbedder } from './openai-compatible/openai-embedder.adapter';

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

@Module({
  providers: [{ provide: Embedder, useFactory: createEmbedder, inject: [AppConfig] }],
  exports: [Embedder],
})
export class EmbeddingsModule implements OnApplicationShutdown {
  constructor(private readonly embedder: Embedder) {}

  async onApplicationShutdown(): Promise<void> {
    await this.embedder.close();
  }
}
