/**
 * A model of StakingPool.sol in exact integers, for the property test: it predicts whether each call
 * succeeds and what every position, the pool and the contract's balance are afterwards, so the test
 * can compare the chain with it to the wei after every transaction.
 */

export const BPS = 10_000n;
export const REWARD_SCALE = BPS * BPS * 31_536_000n;
export const MAX_UNBONDINGS = 32;

export type PoolParameters = {
  unbondingPeriodS: bigint;
  slashBps: bigint;
  baseApyBps: bigint;
  tierMinStake: readonly bigint[];
  tierMultiplierBps: readonly bigint[];
};

type Position = {
  staked: bigint;
  queue: { amount: bigint; releaseAt: bigint }[];
  indexSnapshot: bigint;
  accruedScaled: bigint;
  multiplierBps: bigint;
};

export type ModelCall =
  | { kind: 'stake'; owner: number; value: bigint }
  | { kind: 'unbond'; owner: number; amount: bigint }
  | { kind: 'withdraw'; owner: number }
  | { kind: 'slash'; byOwner: number | null; owner: number; bps: bigint; conviction: number }
  | { kind: 'fund'; owner: number; value: bigint }
  | { kind: 'claim'; owner: number; amount: bigint };

/** The pool as the contract keeps it; `apply` runs one call at block time `nowS`. */
export class PoolModel {
  readonly positions: Position[];
  pool = 0n;
  readonly convictions = new Set<number>();

  constructor(
    readonly parameters: PoolParameters,
    readonly startS: bigint,
    owners: number,
  ) {
    this.positions = Array.from({ length: owners }, () => ({
      staked: 0n,
      queue: [],
      indexSnapshot: 0n,
      accruedScaled: 0n,
      multiplierBps: 0n,
    }));
  }

  /** An independent copy (each sequence starts from the same state). */
  clone(): PoolModel {
    const copy = new PoolModel(this.parameters, this.startS, 0);
    copy.positions.push(...this.positions.map((p) => ({ ...p, queue: p.queue.map((u) => ({ ...u })) })));
    copy.pool = this.pool;
    for (const c of this.convictions) copy.convictions.add(c);
    return copy;
  }

  /** Whether the contract refuses the call; if not, the wei it pays out (withdraw, claim). */
  apply(call: ModelCall, nowS: bigint): { refused: boolean; paidOut: bigint } {
    const p = this.positions[call.owner]!;
    const refuse = { refused: true, paidOut: 0n };
    switch (call.kind) {
      case 'stake': {
        if (call.value === 0n) return refuse;
        this.settle(p, nowS);
        p.staked += call.value;
        p.multiplierBps = this.multiplierFor(p.staked);
        return { refused: false, paidOut: 0n };
      }
      case 'unbond': {
        if (call.amount === 0n) return refuse;
        if (call.amount > p.staked || p.queue.length >= MAX_UNBONDINGS) return refuse;
        this.settle(p, nowS);
        p.staked -= call.amount;
        p.multiplierBps = this.multiplierFor(p.staked);
        p.queue.push({ amount: call.amount, releaseAt: nowS + this.parameters.unbondingPeriodS });
        return { refused: false, paidOut: 0n };
      }
      case 'withdraw': {
        let matured = 0;
        let amount = 0n;
        while (matured < p.queue.length && p.queue[matured]!.releaseAt <= nowS)
          amount += p.queue[matured++]!.amount;
        if (amount === 0n) return refuse;
        p.queue.splice(0, matured);
        return { refused: false, paidOut: amount };
      }
      case 'slash': {
        if (call.byOwner !== null) return refuse;
        if (call.bps === 0n || call.bps > this.parameters.slashBps) return refuse;
        if (this.convictions.has(call.conviction)) return refuse;
        this.convictions.add(call.conviction);
        this.settle(p, nowS);
        const fromStaked = (p.staked * call.bps) / BPS;
        p.staked -= fromStaked;
        p.multiplierBps = this.multiplierFor(p.staked);
        let fromUnbonding = 0n;
        for (const u of p.queue) {
          const cut = (u.amount * call.bps) / BPS;
          u.amount -= cut;
          fromUnbonding += cut;
        }
        this.pool += fromStaked + fromUnbonding;
        return { refused: false, paidOut: 0n };
      }
      case 'fund': {
        if (call.value === 0n) return refuse;
        this.pool += call.value;
        return { refused: false, paidOut: 0n };
      }
      case 'claim': {
        if (call.amount === 0n) return refuse;
        const claimable = (p.accruedScaled + this.pending(p, nowS)) / REWARD_SCALE;
        if (call.amount > claimable || call.amount > this.pool) return refuse;
        this.settle(p, nowS);
        p.accruedScaled -= call.amount * REWARD_SCALE;
        this.pool -= call.amount;
        return { refused: false, paidOut: call.amount };
      }
    }
  }

  /** The owner's position as positionOf answers it at `nowS`. */
  view(owner: number, nowS: bigint) {
    const p = this.positions[owner]!;
    return {
      staked: p.staked,
      unbonding: p.queue.reduce((sum, u) => sum + u.amount, 0n),
      withdrawable: p.queue.filter((u) => u.releaseAt <= nowS).reduce((sum, u) => sum + u.amount, 0n),
      claimable: (p.accruedScaled + this.pending(p, nowS)) / REWARD_SCALE,
    };
  }

  claimable(owner: number, nowS: bigint): bigint {
    return this.view(owner, nowS).claimable;
  }

  private index(nowS: bigint): bigint {
    return nowS > this.startS ? this.parameters.baseApyBps * (nowS - this.startS) : 0n;
  }

  private pending(p: Position, nowS: bigint): bigint {
    const index = this.index(nowS);
    return index > p.indexSnapshot ? p.staked * (index - p.indexSnapshot) * p.multiplierBps : 0n;
  }

  private settle(p: Position, nowS: bigint): void {
    p.accruedScaled += this.pending(p, nowS);
    const index = this.index(nowS);
    if (index > p.indexSnapshot) p.indexSnapshot = index;
  }

  private multiplierFor(staked: bigint): bigint {
    const { tierMinStake, tierMultiplierBps } = this.parameters;
    let reached = 0;
    for (let i = 1; i < tierMinStake.length && staked >= tierMinStake[i]!; i++) reached = i;
    return tierMultiplierBps[reached]!;
  }
}
