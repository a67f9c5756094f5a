import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NODE_ERRORS, toNodeError } from '../errors.js';
import type { JobKind, JsonObject, Runtime } from '../runtimes/runtime.js';

export type OpenAiCompatibleServer = {
  /** The OpenAI base URL, ending in `/v1`. */
  baseUrl: string;
  close(): Promise<void>;
};

const KIND_BY_PATH: Record<string, JobKind> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completion',
  '/v1/embeddings': 'embedding',
};

/**
 * A small real HTTP server that speaks the OpenAI convention (models, chat, completions,
 * embeddings; SSE streams with `stream_options.include_usage`) on 127.0.0.1, backed by any runtime.
 * Tests use it in place of a vLLM or Ollama server, which cannot run on these machines.
 */
export async function startOpenAiCompatibleServer(runtime: Runtime): Promise<OpenAiCompatibleServer> {
  const server = createServer((req, res) => {
    handle(runtime, req, res).catch((error: unknown) => {
      const nodeError = toNodeError(error, 'runtime_error');
      if (res.headersSent) return res.end();
      const status =
        nodeError.code === 'model_not_found' ? 404 : NODE_ERRORS[nodeError.code].retryable ? 500 : 400;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: nodeError.message, type: 'error', code: nodeError.code, param: null },
        }),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function handle(runtime: Runtime, req: IncomingMessage, res: ServerResponse) {
  if (req.method === 'GET' && req.url === '/v1/models') {
    const data = runtime
      .models()
      .map((m) => ({ id: m.id, object: 'model', owned_by: 'local', max_model_len: m.contextLength }));
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ object: 'list', data }));
  }
  const kind = req.method === 'POST' ? KIND_BY_PATH[req.url ?? ''] : undefined;
  if (!kind) {
    res.writeHead(404);
    return res.end();
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonObject & {
    model: string;
    stream?: boolean;
    stream_options?: { include_usage?: boolean };
  };
  const stream = request.stream === true;
  const controller = new AbortController();
  res.on('close', () => controller.abort());
  const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
  const result = await runtime.run({
    kind,
    model: request.model,
    request,
    stream,
    signal: controller.signal,
    onChunk: (chunk) => {
      if (!res.headersSent)
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      send(chunk);
    },
  });
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify(result));
  }
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (request.stream_options?.include_usage) {
    send({
      id: result.id,
      object: 'chat.completion.chunk',
      created: result.created,
      model: request.model,
      choices: [],
      usage: result.usage,
    });
  }
  res.end('data: [DONE]\n\n');
}
