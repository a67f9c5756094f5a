/**
 * The OpenAI Agents SDK (`@openai/agents`, its default Responses model).
 * Registered by clients.test.ts, on its network.
 */
import { Agent, tool as agentTool, run } from '@openai/agents';
import { describe, expect, test } from 'vitest';
import { type ClientsNetwork, Weather } from '../support/clients-network.js';

export function agentsSdkTests(net: ClientsNetwork): void {
  const weatherTool = () =>
    agentTool({
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: Weather.pick({ city: true }),
      execute: async ({ city }) => `${city}: 21 °C, sunny`,
    });

  describe('OpenAI Agents SDK (@openai/agents, its default Responses model)', () => {
    test('default: a forced function tool is called with arguments of its schema and run', async () => {
      const agent = new Agent({
        name: 'weather',
        instructions: 'Answer with the weather tool.',
        model: net.model,
        tools: [weatherTool()],
        modelSettings: { toolChoice: 'get_weather', maxTokens: 128 },
        toolUseBehavior: 'stop_on_first_tool',
      });
      const result = await run(agent, 'What is the weather in Paris?');
      const call = result.newItems.find((i) => i.type === 'tool_call_item')!.rawItem as {
        name: string;
        arguments: string;
      };
      expect(call.name).toBe('get_weather');
      const { city } = Weather.pick({ city: true }).parse(JSON.parse(call.arguments));
      expect(result.finalOutput).toBe(`${city}: 21 °C, sunny`);
    });

    test('default: a zod outputType gives a parsed final output', async () => {
      const agent = new Agent({
        name: 'structured',
        instructions: 'Report the weather.',
        model: net.model,
        outputType: Weather,
        modelSettings: { maxTokens: 128 },
      });
      const result = await run(agent, 'Weather in Rome?');
      expect(Weather.parse(result.finalOutput)).toEqual(result.finalOutput);
    });

    test('default: a streamed run with a tool streams its events and ends with the tool output', async () => {
      const agent = new Agent({
        name: 'weather',
        model: net.model,
        tools: [weatherTool()],
        modelSettings: { toolChoice: 'required', maxTokens: 128 },
        toolUseBehavior: 'stop_on_first_tool',
      });
      const stream = await run(agent, 'Weather in Rome?', { stream: true });
      const kinds = new Set<string>();
      for await (const event of stream) {
        kinds.add(event.type === 'run_item_stream_event' ? event.name : event.type);
        if (event.type === 'raw_model_stream_event') kinds.add(`raw:${event.data.type}`);
      }
      await stream.completed;
      expect(stream.error).toBeNull();
      expect(kinds).toContain('tool_called');
      expect(kinds).toContain('tool_output');
      expect(kinds).toContain('raw:response_done');
      expect(stream.finalOutput).toMatch(/^(Paris|Rome): 21 °C, sunny$/);
    });

    test('default: a tool and an outputType together: the tool runs, then the final output parses', async () => {
      const agent = new Agent({
        name: 'both',
        model: net.model,
        tools: [weatherTool()],
        outputType: Weather,
        // Forced on the first turn; the SDK resets tool_choice after a call, so the second turn
        // answers with the output type.
        modelSettings: { toolChoice: 'get_weather', maxTokens: 128 },
      });
      const result = await run(agent, 'Weather in Paris?', { maxTurns: 3 });
      expect(result.newItems.map((i) => i.type)).toEqual(
        expect.arrayContaining(['tool_call_item', 'tool_call_output_item']),
      );
      expect(Weather.parse(result.finalOutput)).toEqual(result.finalOutput);
    });
  });
}
