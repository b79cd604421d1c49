import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An answer as written: a status and body, a dropped socket, or silence. */
export type WrittenAnswer =
  { status: number; headers?: Record<string, string>; body?: unknown } | { dropConnection: true } | { hang: true };

export interface ReceivedJsonRequest<Body> {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Undefined when the body was not JSON. */
  body: Body | undefined;
}

/**
 * A JSON API on 127.0.0.1 standing in for an upstream server in tests: it records every request
 * and answers from a script first (`answerNext`), then with `answer`. `Answer` may be richer than
 * a written answer (a chat completion's text, say); `write` turns it into one.
 */
export abstract class ScriptedJsonServer<Body, Answer = WrittenAnswer> {
  readonly requests: ReceivedJsonRequest<Body>[] = [];
  private readonly script: Answer[] = [];
  private readonly server = createServer((req, res) => this.handle(req, res));

  /** Base URL without `/v1`. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The next requests get these answers, in order, before `answer` takes over again. */
  answerNext(...answers: Answer[]): void {
    this.script.push(...answers);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve, reject) => this.server.close((error) => (error ? reject(error) : resolve())));
  }

  protected async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** The answer to a request the script has nothing left for. */
  protected abstract answer(request: ReceivedJsonRequest<Body>): Answer;

  protected write(answer: Answer, _request: ReceivedJsonRequest<Body>): WrittenAnswer {
    return answer as WrittenAnswer;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: Body | undefined;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      this.requests.push(request);
      const answer = this.write(this.script.shift() ?? this.answer(request), request);
      if ('dropConnection' in answer) return req.socket.destroy();
      if ('hang' in answer) return;
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
    });
  }
}
