import { type LlamaModel, type Token, TokenBias } from 'node-llama-cpp';

/**
 * OpenAI logit_bias (token id → -100…100, added to the logit; -100 bans the token) as a TokenBias.
 * TokenBias.set() ignores end-of-generation tokens, yet banning EOS is the standard way to ask for
 * an exact length (llama.cpp's server honours it), so biases go straight into its map (pinned
 * node-llama-cpp 3.22; the runtime tests fail if that map moves).
 *
 * Under a grammar (`grammar`), end-of-generation tokens keep no bias: the grammar allows them only
 * once its JSON is complete, and then nothing else — a banned EOS would leave no token to sample
 * (llama.cpp: "Unexpected empty grammar stack").
 */
export function toTokenBias(
  model: LlamaModel,
  bias: Record<string, number> | undefined,
  grammar = false,
): TokenBias | undefined {
  if (!bias || Object.keys(bias).length === 0) return undefined;
  const tokenBias = new TokenBias(model.tokenizer);
  const biases = (tokenBias as unknown as { _biases: Map<Token, number> })._biases;
  for (const [token, value] of Object.entries(bias)) {
    if (grammar && model.isEogToken(Number(token) as Token)) continue;
    biases.set(Number(token) as Token, value <= -100 ? Number.NEGATIVE_INFINITY : value);
  }
  return tokenBias;
}
