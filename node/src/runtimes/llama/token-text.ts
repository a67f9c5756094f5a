import type { LlamaModel, Token } from 'node-llama-cpp';

/**
 * Tokens of context node-llama-cpp's `detokenize(tokens, false, lastTokens)` uses (its
 * `maxRecentDetokenizerTokens`, not exported; pinned 3.22, token-text.test.ts fails if it moves).
 */
const NODE_LLAMA_CPP_CONTEXT_TOKENS = 3;
/** Longest window re-detokenized per token; past it the window restarts from the last 3 tokens. */
const MAX_WINDOW_TOKENS = 16;
const REPLACEMENT_CHARACTER = '\uFFFD';

/** Per model: whether a token has text of its own (control tokens have none). */
const tokenHasText = new WeakMap<LlamaModel, Map<Token, boolean>>();

/**
 * The text sampled tokens add, exactly as node-llama-cpp's `model.detokenize(pending, false,
 * lastTokens)` gives it (what LlamaCompletion streams), in about one native detokenize call a
 * token instead of two. node-llama-cpp detokenizes the last 3 tokens, then them with the new
 * ones, and cuts the first text off the second; here the window's text is kept from the previous
 * token, so only the window with the new tokens is detokenized. The window grows token by token
 * (restarting from the last 3 tokens past 16), which gives the same cut as node-llama-cpp's 3
 * tokens whenever each of those 3 has text of its own and the window's text ends on a whole
 * character (no open UTF-8 sequence the new bytes could complete): llama.cpp's detokenizer is then
 * local (its space clean-up looks at most 2 bytes back, the first token's leading-space strip stays
 * at the window's start). Otherwise (control tokens, a character cut short) it does what
 * node-llama-cpp does, with the last 3 tokens.
 */
export class TokenText {
  /** Tokens released so far. */
  private readonly released: Token[] = [];
  /** A suffix of `released`, and its text (undefined: not known). */
  private window: Token[] = [];
  private windowText: string | undefined = '';
  /** The text of window + the tokens last passed to `next()`, if known. */
  private nextWindowText: string | undefined;
  private readonly hasText: Map<Token, boolean>;

  constructor(private readonly model: LlamaModel) {
    const hasText = tokenHasText.get(model) ?? new Map<Token, boolean>();
    tokenHasText.set(model, hasText);
    this.hasText = hasText;
  }

  /** The text `pending` (tokens not released yet) adds after the released tokens. */
  next(pending: Token[]): string {
    if (
      this.windowText === undefined ||
      this.window.length > MAX_WINDOW_TOKENS ||
      (this.window.length > NODE_LLAMA_CPP_CONTEXT_TOKENS && !this.windowIsLocal())
    ) {
      this.window = this.released.slice(-NODE_LLAMA_CPP_CONTEXT_TOKENS);
      this.windowText = this.detokenize(this.window);
    }
    if (this.windowText === '') {
      // node-llama-cpp detokenizes the new tokens alone when their context has no text.
      const text = this.detokenize(pending);
      this.nextWindowText = this.window.length === 0 ? text : undefined;
      return text;
    }
    const text = this.detokenize([...this.window, ...pending]);
    this.nextWindowText = text;
    return text.startsWith(this.windowText) ? text.slice(this.windowText.length) : this.detokenize(pending);
  }

  /** Releases `pending`, whose text `next(pending)` just gave. */
  release(pending: Token[]): void {
    this.released.push(...pending);
    this.window.push(...pending);
    this.windowText = this.nextWindowText;
  }

  /** True when the whole window cuts new text as its last 3 tokens would (see the class). */
  private windowIsLocal(): boolean {
    if (this.windowText!.endsWith(REPLACEMENT_CHARACTER)) return false;
    for (const token of this.released.slice(-NODE_LLAMA_CPP_CONTEXT_TOKENS)) {
      let has = this.hasText.get(token);
      if (has === undefined) {
        has = this.detokenize([token]) !== '';
        this.hasText.set(token, has);
      }
      if (!has) return false;
    }
    return true;
  }

  private detokenize(tokens: Token[]): string {
    return tokens.length === 0 ? '' : this.model.detokenize(tokens, false);
  }
}
