import { parseEmbeddingsBody } from './embeddings-body';

const b64 = (values: number[]) => Buffer.from(Float32Array.from(values).buffer).toString('base64');
const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('parseEmbeddingsBody', () => {
  it('reads base64 embeddings as JSON.parse does, whatever the spacing and key order', () => {
    const text =
      `{"object":"list","data":[{"object":"embedding","index":0,"embedding":"${b64([1, 2])}"},` +
      `{ "embedding" :\n "${b64([3, 4])}", "index": 1, "object": "embedding" }],"model":"m","usage":{"prompt_tokens":3}}`;
    expect(parseEmbeddingsBody(bytes(text))).toEqual(JSON.parse(text));
  });

  it('reads numbers, escapes, non-ASCII text and a byte-order mark as JSON.parse does', () => {
    for (const text of [
      '{"data":[{"index":0,"embedding":[0.5,0.25]}]}',
      `{"data":[{"index":0,"embedding":"${b64([1])}\\u0041"}],"model":"modèle"}`,
      `\uFEFF{"data":[{"index":0,"embedding":"${b64([1])}"}],"model":"modèle ✓"}`,
    ]) {
      expect(parseEmbeddingsBody(bytes(text))).toEqual(JSON.parse(text.replace(/^\uFEFF/, '')));
    }
  });

  it('leaves a value of that key outside the data items as it is', () => {
    const text = `{"data":[{"index":0,"embedding":"${b64([1])}"}],"usage":{"embedding":"${b64([2])}"},"note":"\\"embedding\\": \\"x\\""}`;
    expect(parseEmbeddingsBody(bytes(text))).toEqual(JSON.parse(text));
  });

  it('does not take a number the server sent for one of its values', () => {
    const text = `{"data":[{"index":0,"embedding":0},{"index":1,"embedding":"${b64([1])}"}]}`;
    expect(parseEmbeddingsBody(bytes(text))).toEqual(JSON.parse(text));
  });

  it('throws on invalid JSON as JSON.parse does', () => {
    expect(() => parseEmbeddingsBody(bytes(`{"data":[{"index":0,"embedding":"${b64([1])}"}]`))).toThrow(SyntaxError);
    expect(() => parseEmbeddingsBody(bytes(`{"data":[{"index":0,"embedding":"${b64([1])}`))).toThrow(SyntaxError);
  });
});
