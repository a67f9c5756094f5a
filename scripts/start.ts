/**
 * `npm start`: the whole local network — devnet chain, coordinator, local CPU node(s) — then prints
 * the URLs, the funded dev wallet and an example that works as printed. Ctrl-C stops everything.
 *
 * Flags: --port N (coordinator, default 8080), --data-dir DIR (default ./.gpumesh), --nodes N
 * (default 1, each at a different price), --no-node, --rpc-url URL (an external chain), --rpc-port N
 * (the devnet's port, default 8545), --model REF (default gpumesh/mini-chat, the small model
 * trained here; gpumesh/tiny-chat for the generated random-weight one; or pull and serve another:
 * a catalog id, hf:<user>/<repo>/<file>.gguf, hf:<user>/<repo>:<quant> or https://…),
 * --wait-timeout S (a bound on waiting for the nodes; by default npm start waits while they make
 * progress, printing each node's stages).
 */
import { parseArgs } from 'node:util';
import {
  CHAT_MODEL_ID,
  DEFAULT_APP_PORT,
  DEFAULT_DATA_DIR,
  DEFAULT_RPC_PORT,
  MINI_CHAT_ID,
} from './network-defaults.js';

const USAGE = `usage: npm start -- [--port N] [--data-dir DIR] [--nodes N | --no-node] [--rpc-url URL | --rpc-port N] [--model REF] [--wait-timeout S]
  --port N        the coordinator's port (default ${DEFAULT_APP_PORT})
  --data-dir DIR  chain state, database, node keys, network.json (default ${DEFAULT_DATA_DIR})
  --nodes N       local CPU nodes, each at a different price (default 1); --no-node for none
  --rpc-url URL   an external chain instead of the devnet; --rpc-port N the devnet's port (default ${DEFAULT_RPC_PORT})
  --model REF     the model the nodes serve (default gpumesh/mini-chat, trained in this repository;
                  gpumesh/tiny-chat: random weights, fast), or pull one: a catalog id
                  (qwen/qwen2.5-0.5b-instruct), hf:<user>/<repo>/<file>.gguf, hf:<user>/<repo>:<quant>, https://…
  --wait-timeout S  the most seconds to wait for the nodes to come online (default: as long as they
                  make progress; a node silent for 5 minutes, or dying at start 5 times, stops the start)
`;

let values: {
  port: string;
  'data-dir': string;
  nodes: string;
  'no-node': boolean;
  'rpc-url'?: string;
  'rpc-port': string;
  model?: string;
  'wait-timeout'?: string;
  help: boolean;
};
try {
  ({ values } = parseArgs({
    options: {
      port: { type: 'string', default: String(DEFAULT_APP_PORT) },
      'data-dir': { type: 'string', default: DEFAULT_DATA_DIR },
      nodes: { type: 'string', default: '1' },
      'no-node': { type: 'boolean', default: false },
      'rpc-url': { type: 'string' },
      'rpc-port': { type: 'string', default: String(DEFAULT_RPC_PORT) },
      model: { type: 'string' },
      'wait-timeout': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }));
} catch (error) {
  process.stderr.write(`npm start: ${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const port = Number(values.port);
const rpcPort = Number(values['rpc-port']);
const nodes = values['no-node'] ? 0 : Number(values.nodes);
const waitTimeoutS = values['wait-timeout'] === undefined ? undefined : Number(values['wait-timeout']);
if (
  ![port, rpcPort].every((p) => Number.isInteger(p) && p >= 0 && p <= 65535) ||
  !Number.isInteger(nodes) ||
  nodes < 0 ||
  (waitTimeoutS !== undefined && !(waitTimeoutS > 0))
) {
  process.stderr.write(USAGE);
  process.exit(2);
}

console.log('gpumesh: starting the local network…');
// Loaded once the flags are read: `--help` and a bad flag answer at once.
const { startNetwork } = await import('./network.js');
const network = await startNetwork({
  dataDir: values['data-dir'],
  port,
  rpcPort,
  nodes,
  rpcUrl: values['rpc-url'],
  ...(values.model ? { model: values.model } : {}),
  ...(waitTimeoutS !== undefined ? { waitTimeoutMs: waitTimeoutS * 1000 } : {}),
  env: process.env,
  log: (line) => console.log(`  ${line}`),
}).catch((error: unknown) => {
  console.error(`gpumesh: could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

const key = network.apiKey ?? '<API_KEY>';
console.log(`
gpumesh is running.
  App API      ${network.appUrl}/api      (dashboard: ${network.appUrl}/dashboard, network: ${network.appUrl}/network)
  Router       ${network.routerUrl}/v1
  Model        ${network.models.chat}${
    network.models.chat === CHAT_MODEL_ID
      ? ' (generated, random weights: its replies are noise; npm start -- --model <ref> serves a real one)'
      : network.models.chat === MINI_CHAT_ID
        ? ' (3.1M parameters, trained here: arithmetic, conversions, dates, lookups in your text, JSON, tool calls)'
        : ''
  }
  Voice        ${
    network.models.speech
      ? `${network.models.speech} (speech: POST /v1/audio/speech), ${network.models.transcription} (POST /v1/audio/transcriptions)`
      : 'none (apt-get install espeak-ng pocketsphinx pocketsphinx-en-us sox, then restart)'
  }
  Chain RPC    ${network.rpcUrl}      (chain id ${network.chainId})
  Node hub     ${network.nodeWsUrl}
  Network file ${values['data-dir']}/network.json${
    network.devWallet
      ? `
  Dev wallet   ${network.devWallet.address}  (devnet only) private key ${network.devWallet.privateKey}
  API key      ${key}  (funded with devnet USDC.s)`
      : ''
  }

Try it (curl):
  curl -s ${network.routerUrl}/v1/chat/completions \\
    -H "Authorization: Bearer ${key}" -H "Content-Type: application/json" \\
    -d '{"model":"${network.models.chat}","messages":[{"role":"user","content":"What is 12 + 30?"}],"temperature":0,"max_tokens":64}'

${
  network.models.speech
    ? `Say it, then hear it back (curl):
  curl -s ${network.routerUrl}/v1/audio/speech -H "Authorization: Bearer ${key}" -H "Content-Type: application/json" \\
    -d '{"model":"${network.models.speech}","input":"hello world","voice":"alloy","response_format":"wav"}' -o hello.wav
  curl -s ${network.routerUrl}/v1/audio/transcriptions -H "Authorization: Bearer ${key}" \\
    -F model=${network.models.transcription} -F file=@hello.wav

`
    : ''
}Try it (openai SDK, node --input-type=module):
  import OpenAI from 'openai';
  const client = new OpenAI({ apiKey: '${key}', baseURL: '${network.routerUrl}/v1' });
  const reply = await client.chat.completions.create({ model: '${network.models.chat}', messages: [{ role: 'user', content: 'Convert 3 kilometers to meters.' }], temperature: 0, max_tokens: 64 });
  console.log(reply.choices[0].message.content, reply.usage);

Press Ctrl-C to stop.`);

let stopping = false;
const shutdown = (code: number) => () => {
  if (stopping) return;
  stopping = true;
  console.log('\ngpumesh: stopping…');
  network.stop().then(
    () => process.exit(code),
    () => process.exit(1),
  );
};
process.once('SIGINT', shutdown(130));
process.once('SIGTERM', shutdown(143));

// The install command is announced only once the coordinator serves the package it installs.
network.packageServed.then((served) => {
  if (stopping) return;
  if (served.ok) {
    console.log(`
Add a provider node (this machine or another that reaches ${network.appUrl}):
  curl -fsSL ${served.installUrl} | sh -s -- --role cpu --coordinator ${network.appUrl}
  (--role gpu on a machine with a GPU; ${network.appUrl}/network lists every kind)`);
  } else {
    console.error(
      `gpumesh: the node package is not served, so install.sh cannot install from here: ${served.reason}\n  (install from this checkout instead: sh install.sh --from . --coordinator ${network.appUrl})`,
    );
  }
});
