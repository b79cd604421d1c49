import { ChatRequest, LanguageModels, NodeConfigurationError, NodeHttpClient } from '../../sdk';
import { OpenAiLanguageModels } from './openai-language-models.adapter';

/**
 * `ctx.models` of one node try: the service's configured model, or, for a request that names its
 * own `endpoint`, that OpenAI-compatible server reached through the node's guarded HTTP client,
 * so the outbound guard applies and the endpoint's credential is injected at send time.
 */
export function nodeLanguageModels(configured: LanguageModels, http: NodeHttpClient): LanguageModels {
  return {
    chat(request: ChatRequest, signal: AbortSignal) {
      const { endpoint } = request;
      if (!endpoint) return configured.chat(request, signal);
      if (!request.model) throw new NodeConfigurationError('A chat request to an endpoint of its own must name its model');
      const models = new OpenAiLanguageModels({
        url: endpoint.url,
        model: request.model,
        fetch: async (url, init) => {
          const answer = await http.fetch(url, {
            method: init.method,
            headers: init.headers,
            body: init.body,
            signal: init.signal,
            credential: endpoint.credential,
            ...(init.onChunk ? { onChunk: init.onChunk } : {}),
          });
          // A web Response refuses a body on these statuses, and any status outside 200-599.
          const bodiless = [204, 205, 304].includes(answer.status);
          return new Response(bodiless ? null : answer.body, {
            status: Math.min(599, Math.max(200, answer.status)),
            headers: answer.headers,
          });
        },
      });
      return models.chat(request, signal);
    },
  };
}
