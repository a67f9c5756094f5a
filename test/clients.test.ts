/**
 * Clients no one here wrote, with only their base URL changed, against a coordinator with a real
 * node (the gpumesh-node daemon on the generated model; support/clients-network.ts): the OpenAI
 * Agents SDK (`@openai/agents`, its default Responses model), the official `openai` SDK's Responses
 * helpers, LangChain JS (`@langchain/openai`, chat completions and `useResponsesApi`), the Vercel AI
 * SDK (`ai` with `@ai-sdk/openai`, whose default is the Responses API, and
 * `@ai-sdk/openai-compatible`) and an OpenRouter-style client on `/api/v1`; then the API's edges and
 * JSON Schema keywords (clients/json-schemas.ts).
 * Each client's tests are in clients/; they share this file's one network (a network costs seconds
 * to start).
 */
import { setDefaultOpenAIClient, setTracingDisabled } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll } from 'vitest';
import { agentsSdkTests } from './clients/agents-sdk.js';
import { aiSdkTests } from './clients/ai-sdk.js';
import { apiEdgeTests } from './clients/api-edges.js';
import { hiddenEdgeTests } from './clients/hidden-edges.js';
import { jsonSchemaTests } from './clients/json-schemas.js';
import { langchainTests } from './clients/langchain.js';
import { openaiSdkTests } from './clients/openai-sdk.js';
import { openRouterTests } from './clients/openrouter.js';
import { type ClientsNetwork, startClientsNetwork } from './support/clients-network.js';

/** Filled in before the tests run. */
const net = {} as ClientsNetwork;

beforeAll(async () => {
  Object.assign(net, await startClientsNetwork('clients'));
  // The Agents SDK: our coordinator as its OpenAI client, no tracing export (no network).
  setTracingDisabled(true);
  // (The SDK's types see openai's CommonJS build, this file its ESM one: the same class.)
  type AgentsClient = Parameters<typeof setDefaultOpenAIClient>[0];
  setDefaultOpenAIClient(
    new OpenAI({ baseURL: net.baseURL, apiKey: net.key, maxRetries: 0 }) as unknown as AgentsClient,
  );
}, 120_000);

afterAll(() => net.close?.());

langchainTests(net);
aiSdkTests(net);
agentsSdkTests(net);
openaiSdkTests(net);
openRouterTests(net);
apiEdgeTests(net);
hiddenEdgeTests(net);
jsonSchemaTests(net);
