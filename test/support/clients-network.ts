/**
 * The network the clients-*.test.ts files run clients no one here wrote against: a tiny node
 * network whose node offers embeddings too (its owner at tier gold), and a user's API key with
 * 10 USD of credits. Structured output and tool calls come from the node's grammar sampling, so
 * they parse and validate even on random weights: those tests check structure, never content.
 */
import { z } from 'zod';
import { newApiClient } from './api-client.js';
import {
  startTinyNodeNetwork,
  type TinyNodeNetwork,
  type TinyNodeNetworkOptions,
} from './tiny-node-network.js';

const USD = 1_000_000_000n;

export type ClientsNetwork = TinyNodeNetwork & {
  /** The user's API key. */
  key: string;
  /** The OpenAI-compatible base URL, `${base}/v1`. */
  baseURL: string;
  embedModel: string;
};

export async function startClientsNetwork(
  label: string,
  options: Pick<TinyNodeNetworkOptions, 'modelFile' | 'backend'> = {},
): Promise<ClientsNetwork> {
  const net = await startTinyNodeNetwork(label, { embeddings: true, tierOf: async () => 'gold', ...options });
  try {
    const { key } = await newApiClient(net.app, {
      keyName: 'clients',
      creditNano: 10n * USD,
      creditRef: `${label}-seed`,
    });
    return { ...net, key, baseURL: `${net.base}/v1`, embedModel: net.embedModel! };
  } catch (error) {
    await net.close();
    throw error;
  }
}

/** The schema of the structured-output and tool-call tests. */
export const Weather = z.object({ city: z.enum(['Paris', 'Rome']), sunny: z.boolean() });

/**
 * The schema of issue 41's structured-output report: a bounded string and bounded number, which
 * node-llama-cpp's grammar let through unbounded (zod then refused the answer).
 */
export const Place = z.object({ name: z.string().max(16), lat: z.number().min(-90).max(60) });
