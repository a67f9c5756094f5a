/**
 * coordinator/README.md's /v1 parameter table against the code: the coordinator's request schemas
 * (what is validated, what is tolerated, what /v1/responses refuses), the fields it keeps to itself
 * (job-for.ts ROUTER_FIELDS) and the node's request schemas and refusals (openai-shapes.ts). The
 * examples of its `ignored` and `400` cells go to the real daemon in test/clients.test.ts.
 */
import type { TObject } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import { ROUTER_FIELDS } from '../coordinator/src/v1/job-for.js';
import { ResponsesBody } from '../coordinator/src/v1/responses/schemas.js';
import { ChatCompletionBody, CompletionBody, EmbeddingBody } from '../coordinator/src/v1/schemas.js';
import {
  ChatRequest,
  COMPLETION_UNHONOURED,
  CompletionRequest,
  EmbeddingRequest,
  UNHONOURED,
} from '../node/src/runtimes/openai-shapes.js';
import { ENDPOINTS, readParameterTable } from './support/parameter-table.js';

const rows = readParameterTable();
const keys = (schema: TObject) => new Set(Object.keys(schema.properties));
const refused = new Set(UNHONOURED.map(([name]) => name));
const completionRefused = new Set(COMPLETION_UNHONOURED.map(([name]) => name));
const router = new Set(ROUTER_FIELDS);
/** Members the coordinator passes on untouched, which only the node's schema gives a meaning. */
const ACTED_ON_BY_NODE = ['logprobs', 'top_logprobs', 'n', 'seed', 'stop', 'temperature', 'top_p'];
/** Per endpoint of the chat family: the coordinator's schema, and what the node takes. */
const tolerant = {
  chat: { coordinator: ChatCompletionBody, node: keys(ChatRequest), refused },
  completions: { coordinator: CompletionBody, node: keys(CompletionRequest), refused: completionRefused },
  embeddings: { coordinator: EmbeddingBody, node: keys(EmbeddingRequest), refused: new Set<string>() },
} as const;

describe('coordinator/README.md "The /v1 parameters"', () => {
  test('default: one row per parameter', () => {
    const names = rows.map((r) => r.name);
    expect(names.length).toBeGreaterThan(40);
    expect(new Set(names).size).toBe(names.length);
  });

  test.each(Object.entries(tolerant))('behavior: %s as its schemas and the node say', (endpoint, code) => {
    const coordinator = keys(code.coordinator);
    // Unknown members are tolerated here (the table's `—`).
    expect(code.coordinator.additionalProperties).toBe(true);
    const on = (name: string) => rows.find((r) => r.name === name)?.on[endpoint as keyof typeof tolerant];
    for (const name of new Set([...coordinator, ...code.node, ...code.refused])) {
      expect(on(name), `${endpoint}: ${name} has a row`).toBeDefined();
      expect(on(name), `${endpoint}: ${name}`).not.toBe('—');
    }
    for (const row of rows) {
      const t = row.on[endpoint as keyof typeof tolerant];
      const where = `${endpoint}: ${row.name} is ${t}`;
      const known = coordinator.has(row.name) || code.node.has(row.name);
      if (t === 'accepted') {
        expect(known || router.has(row.name), where).toBe(true);
        expect(code.refused.has(row.name), where).toBe(false);
        // Acted on by the node only (unknown members it ignores): a member of its request schema.
        if (ACTED_ON_BY_NODE.includes(row.name)) expect(code.node.has(row.name), where).toBe(true);
      }
      if (t === 'ignored') {
        expect(code.node.has(row.name) || code.refused.has(row.name), where).toBe(false);
      }
      if (t === '400') expect(code.refused.has(row.name), where).toBe(true);
      if (t === '—') expect(known || code.refused.has(row.name), where).toBe(false);
    }
  });

  test('behavior: responses takes exactly its accepted and ignored rows, and refuses the rest', () => {
    expect(ResponsesBody.additionalProperties).toBe(false);
    const schema = keys(ResponsesBody);
    for (const name of schema) {
      expect(['accepted', 'ignored'], name).toContain(rows.find((r) => r.name === name)?.on.responses);
    }
    for (const row of rows) {
      if (row.on.responses === '400' || row.on.responses === '—')
        expect(schema.has(row.name), row.name).toBe(false);
    }
  });

  test('default: every endpoint has rows', () => {
    for (const e of ENDPOINTS)
      expect(
        rows.some((r) => r.on[e] === 'accepted'),
        e,
      ).toBe(true);
  });
});
