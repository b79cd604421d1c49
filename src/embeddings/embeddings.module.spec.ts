import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AppConfig, loadConfig } from '../config/app-config';
import { Embedder } from '../domain/embedder.port';
import { EmbeddingsModule } from './embeddings.module';
import { LocalEmbedder } from './local/local-embedder.adapter';
import { OpenAiCompatibleEmbedder } from './openai-compatible/openai-embedder.adapter';

@Module({})
class ConfigStubModule {}

async function boot(env: NodeJS.ProcessEnv) {
  const config = loadConfig(env);
  const moduleRef = await Test.createTestingModule({
    imports: [
      { module: ConfigStubModule, global: true, providers: [{ provide: AppConfig, useValue: config }], exports: [AppConfig] },
      EmbeddingsModule,
    ],
  }).compile();
  return moduleRef;
}

describe('EmbeddingsModule', () => {
  it('provides the local encoder when no endpoint is configured, and closes it on shutdown', async () => {
    const moduleRef = await boot({ EMBEDDING_THREADS: '3' });
    const embedder = moduleRef.get(Embedder);
    expect(embedder).toBeInstanceOf(LocalEmbedder);
    expect(embedder).toMatchObject({ model: 'use-lite-512', dimension: 512 });
    const close = jest.spyOn(embedder, 'close');
    await moduleRef.close();
    expect(close).toHaveBeenCalledTimes(1);
  });

  it('provides the OpenAI-compatible client when EMBEDDINGS_URL is set', async () => {
    const moduleRef = await boot({ EMBEDDINGS_URL: 'http://127.0.0.1:9/v1', EMBEDDINGS_MODEL: 'nomic-embed-text' });
    const embedder = moduleRef.get(Embedder);
    expect(embedder).toBeInstanceOf(OpenAiCompatibleEmbedder);
    expect(embedder.model).toBe('nomic-embed-text');
    await moduleRef.close();
  });
});
