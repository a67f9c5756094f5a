import type { Skills } from './skills-schema.js';

const AUTH_LABEL = { none: 'none', jwt: 'Bearer JWT', apiKey: 'Bearer sk- key' } as const;

/** /SKILLS.md: the full integration guide, rendered from the same document as skills.json. */
export function renderSkillsMd(s: Skills): string {
  const fence = '```';
  const tokens = s.chain.tokens.map((t) => `${t.symbol} (${t.address ?? 'not deployed here'})`).join(', ');
  return `# gpumesh — integration guide

${s.description}

| | |
| --- | --- |
| App API | ${s.urls.app} |
| Inference (OpenAI-compatible) | ${s.urls.router}/v1 |
| Chain endpoint | ${s.urls.tx} |
| Chain RPC | ${s.urls.rpc ?? 'not configured'} |
| Explorer | ${s.urls.explorer ?? 'not configured'} |
| OpenAPI | ${s.urls.openapi} |
| Machine-readable | ${s.urls.app}/api/skills.json (schema: ${s.urls.schema}) |

## 1. Sign in with your wallet

There are no passwords: the wallet is the credential.

${s.auth.signIn.map((st) => `${st.step}. \`${st.method} ${st.path}\` — ${st.description}`).join('\n')}

The message begins "${s.auth.messagePrefix}" and names the domain, your checksummed address, the URI,
chain id ${s.chain.chainId}, a single-use nonce and its expiry (${s.auth.nonceTtlS} s). Signature:
${s.auth.signature}. The JWT lasts ${s.auth.jwtTtlS} s (7 days); \`POST /api/auth/logout\` revokes it.

${fence}sh
MSG=$(curl -s "${s.urls.app}/api/auth/nonce?address=$ADDR" | jq -r .message)
SIG=$(cast wallet sign --private-key $PK "$MSG")
TOKEN=$(curl -s -X POST ${s.urls.app}/api/auth/verify -H 'content-type: application/json' \\
  -d "{\\"address\\":\\"$ADDR\\",\\"message\\":$(jq -Rs . <<<"$MSG"),\\"signature\\":\\"$SIG\\"}" | jq -r .token)
${fence}

## 2. Create an inference key

\`POST /api/router/keys {"name":"…"}\` with the JWT returns \`{key, id}\` once; only a hash is kept.
Format: ${s.keys.format}. At most ${s.keys.maxActive} active keys per wallet (the next is 409
key_limit_reached). List: \`GET /api/router/keys\`; revoke: \`DELETE /api/router/keys/:id\`.

## 3. Fund credits

Every account has a server-managed proxy wallet (\`GET /api/keys/proxy\`) on chain ${s.chain.chainId} and a
native account (\`GET /api/keys/native\`). Send ${s.chain.nativeSymbol} or a stable token — ${tokens} — to the
proxy wallet, then \`POST /api/user/topup {paymentId, source, amountUsd}\` with source one of
${s.chain.topUpSources.map((t) => `\`${t}\``).join(', ')}. Transactions must be legacy (type 0) with gasPrice
${s.chain.gasPriceWei} wei; EIP-1559 is refused. Credits are USD (\`GET /api/user\` → credits.balance).

## 4. Call models

Point any OpenAI SDK at \`${s.urls.router}/v1\` with \`${s.keys.header}\`:

${fence}python
from openai import OpenAI
client = OpenAI(base_url="${s.urls.router}/v1", api_key="sk-…")
print(client.chat.completions.create(model="…", messages=[{"role": "user", "content": "hi"}]).choices[0].message.content)
${fence}

Model families: ${s.modelFamilies.join(', ')}. The live catalog: \`GET /api/router/models\`. Each request goes
to the cheapest live provider serving the model; a platform fee of ${s.platformFeeBps / 100}% is added.

Vision and voice, with the same SDK calls:

${fence}python
# An image (a data: URL, or an http(s) URL the coordinator fetches) in a chat, to a vision model
client.chat.completions.create(model="<vision model>", messages=[{"role": "user", "content": [
    {"type": "text", "text": "What is this?"},
    {"type": "image_url", "image_url": {"url": "data:image/png;base64,…"}}]}])
# Speech (streamed audio, billed per character) and transcription (billed per second of audio)
client.audio.speech.create(model="espeak-ng", voice="alloy", input="hello world", response_format="wav").write_to_file("hello.wav")
client.audio.transcriptions.create(model="pocketsphinx-en-us", file=open("hello.wav", "rb")).text
${fence}

\`/v1/models\` gives each model's \`family\` and its price \`unit\` (per_million_tokens, per_second,
per_million_characters). Limits: audio files ${s.limits.maxAudioBytes} bytes, images ${s.limits.maxImages} per
request and ${s.limits.maxImageBytes} bytes together.

OpenRouter's clients (its official SDK, \`@openrouter/sdk\`, included) take \`${s.urls.router}/api/v1\` as their
base URL: every /v1 route answers there, and OpenRouter's own — \`GET /api/v1/models\` (with \`/count\`,
\`/user\`, \`/api/v1/model/{author}/{slug}\` and \`/api/v1/embeddings/models\`) and
\`GET /api/v1/models/{author}/{slug}/endpoints\` (public: each node serving a model, its price, context,
quantization, uptime and verified status), \`/api/v1/key\`, \`/api/v1/credits\`, \`/api/v1/generation?id=\` — in
OpenRouter's shapes; errors there carry OpenRouter's numeric \`code\` (the HTTP status). \`transforms:
["middle-out"]\` fits an over-long chat by dropping messages from its middle (OpenRouter's default on /api/v1 for
models of ≤ 8,192 tokens of context; \`transforms: []\` turns it off). \`GET /v1/responses/{id}/input_items\` lists
a stored response's input.

## 5. Staking

\`POST /tx {"method":"chain_stake","params":[address, "12.3400 ${s.chain.nativeSymbol}"]}\` (JWT of that
wallet), \`chain_getStake\` (public), \`chain_claim\`, \`chain_unstake\`. Stake is held by the staking pool contract
(\`pool\` in \`chain_getStake\`: its address and the account holding the position), so anyone can check a position
on chain (\`positionOf(account)\`); a slash's evidence is served at \`GET /api/evidence/<sha256>\`, the hash its
\`Slashed\` event names. Amounts: ${s.staking.amountFormat}. Base APY
${s.staking.baseApyBps / 100}%, times the tier multiplier:

| Tier | Min stake (${s.chain.nativeSymbol}) | Multiplier |
| --- | --- | --- |
${s.staking.tiers.map((t) => `| ${t.name} | ${t.minStake} | ${(t.multiplierBps / 10_000).toFixed(2)}× |`).join('\n')}

## Limits

Body ≤ ${s.limits.bodyLimitBytes} bytes. Per ${s.limits.rateLimitWindowS} s: ${s.limits.signInPerIp} sign-in calls per IP,
${s.limits.perUser} calls per user or key, ${s.limits.anonymousPerIp} unauthenticated calls per IP, ${s.limits.failedCredentialsPerIp} failed
credentials per IP (then every credentialed call from that IP until the window ends); 429 with Retry-After.

## Errors

Every error is \`${s.errors.shape}\` (on /api/v1, \`code\` is the HTTP status and our code is in
\`metadata.error_type\`).

| Code | Status | Retry |
| --- | --- | --- |
${s.errors.codes.map((c) => `| ${c.code} | ${c.status} | ${c.retryable ? 'yes' : 'no'} |`).join('\n')}

## Every endpoint

| Method | Path | Auth | What |
| --- | --- | --- | --- |
${s.endpoints.map((e) => `| ${e.method} | \`${e.path}\` | ${AUTH_LABEL[e.auth]} | ${e.summary} |`).join('\n')}
`;
}

/** /api/skills: the quick start (the four steps and where to read more). */
export function renderQuickstartMd(s: Skills): string {
  return `# gpumesh quick start

1. \`GET ${s.urls.app}/api/auth/nonce?address=<WALLET_ADDRESS>\` → \`{message}\`
2. Sign \`message\` with the wallet (EIP-191), then \`POST ${s.urls.app}/api/auth/verify {address, message, signature}\` → \`{token}\`
3. \`POST ${s.urls.app}/api/router/keys {"name":"my-app"}\` with \`Authorization: Bearer <token>\` → \`{key}\`
4. Fund credits: send tokens to \`GET /api/keys/proxy\`'s address (chain ${s.chain.chainId}, legacy tx, gasPrice ${s.chain.gasPriceWei} wei), then \`POST /api/user/topup\`
5. Use any OpenAI SDK with base URL \`${s.urls.router}/v1\` and \`api_key=<key>\`

Full guide: ${s.urls.skillsMd} · machine-readable: ${s.urls.app}/api/skills.json · OpenAPI: ${s.urls.openapi}
`;
}
