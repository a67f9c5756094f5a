/** What a pick asks of the index (pick-index.ts) and what it answers. */
import type { Entry } from './index-entry.js';

/** How many candidates a pick returns for failover unless the request says otherwise. */
export const DEFAULT_PICK_CANDIDATES = 3;

/** The OpenRouter-style `provider` request option. */
export type ProviderPreferences = {
  /** Node ids (or owner addresses) to try first, in this order. */
  readonly order?: readonly string[];
  /** false: use only the nodes named in `order` (or only the single best node when no order). */
  readonly allowFallbacks?: boolean;
  /** Maximum price per million tokens, in USD nano units. */
  readonly maxPriceInNano?: bigint;
  readonly maxPriceOutNano?: bigint;
  /** Only these nodes (ids or owner addresses, any case). */
  readonly only?: readonly string[];
  /** Never these nodes (ids or owner addresses, any case). */
  readonly ignore?: readonly string[];
  /**
   * How the rest are ordered: `price` (default: cheapest first, then tier, load, latency),
   * `latency` (lowest measured latency first) or `throughput` (least loaded first, then latency —
   * the share of a node's slots in use is what this index knows of its throughput).
   */
  readonly sort?: 'price' | 'latency' | 'throughput';
  /**
   * OpenRouter's require_parameters: a node that refuses an option of the request (invalid_request)
   * is passed over for the next candidate instead of answering 400.
   */
  readonly requireParameters?: boolean;
  /**
   * OpenRouter's data_collection: "deny" keeps the prompt from any third party — a spot check of
   * the answer is then verified by the coordinator itself or not at all (trust/checks/canary-runner.ts).
   */
  readonly dataCollection?: 'allow' | 'deny';
  /**
   * OpenRouter's quantizations: only nodes whose weights file is of one of these — an OpenRouter
   * class (`int4`, `fp16`, …, `unknown` for a file the catalog does not know) or a GGUF type name
   * (quantization.ts). Empty or absent: any.
   */
  readonly quantizations?: readonly string[];
  /**
   * OpenRouter's zdr: nothing of the request is kept once it is answered (route-request.ts: its
   * job is not noted for canaries; spot checks as with dataCollection "deny"). No node is left out.
   */
  readonly zdr?: boolean;
};

export type PickRequest = {
  readonly modelId: string;
  /** The scope the job needs; default: the scope of the model's family (SCOPE_FOR_FAMILY). */
  readonly scope?: string;
  readonly provider?: ProviderPreferences;
  /** How many candidates to return for failover. */
  readonly limit?: number;
  /** Node ids left out (the request already tried them). */
  readonly exclude?: ReadonlySet<string>;
};

export const EXCLUSION_REASONS = {
  draining: 'draining',
  suspended: 'suspended',
  notOnline: 'not_online',
  atCapacity: 'at_capacity',
  scope: 'tier_scope',
  maxPrice: 'max_price',
  order: 'provider_order',
  only: 'provider_only',
  ignore: 'provider_ignore',
  quantization: 'provider_quantizations',
  tried: 'already_tried',
} as const;
export type ExclusionReason = (typeof EXCLUSION_REASONS)[keyof typeof EXCLUSION_REASONS];

export type PickResult =
  | { readonly ok: true; readonly candidates: readonly Entry[] }
  | { readonly ok: false; readonly reason: 'model_not_found' }
  | {
      readonly ok: false;
      readonly reason: 'no_provider_available';
      /** How many of the model's nodes each constraint excluded (first failing constraint wins). */
      readonly excluded: Readonly<Partial<Record<ExclusionReason, number>>>;
    };

/** Whether the client set the candidates' order (`order`, or a sort by latency or throughput): routing keeps it. */
export function clientOrders(provider: ProviderPreferences | undefined): boolean {
  return (
    (provider?.order !== undefined && provider.order.length > 0) ||
    provider?.sort === 'latency' ||
    provider?.sort === 'throughput'
  );
}
