// Staking: the stake, its tier and claimable rewards; staking more and claiming.

import { tx } from './api.js';
import { $, failure, setStatus } from './dom.js';
import { session } from './session.js';

/** "12.5" → "12.5000 SYM"; null unless it is a positive decimal with at most 4 fraction digits. */
function stakeAmount(input) {
  const match = /^(\d+)(?:\.(\d{1,4}))?$/.exec(input.trim());
  if (!match) return null;
  const whole = match[1].replace(/^0+(?=\d)/, '');
  const fraction = (match[2] || '').padEnd(4, '0');
  if (/^0+$/.test(whole + fraction)) return null;
  return `${whole}.${fraction} ${document.body.dataset.nativeSymbol || ''}`;
}

function renderStake(stake) {
  $('stake-quantity').textContent = stake.quantity;
  $('stake-tier').textContent = stake.tier;
  $('stake-claimable').textContent = stake.claimable;
}

export async function loadStake() {
  const data = await tx('chain_getStake', [session().address]);
  renderStake(data.stake);
  // Where to check it without us: the pool's address and the account holding the position there.
  if (data.pool) {
    $('stake-pool').textContent = data.pool.account
      ? `pool ${data.pool.address}, account ${data.pool.account}`
      : `pool ${data.pool.address}`;
  }
}

/** Submit of the stake form. */
export async function stake(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const amount = stakeAmount(form.elements.amount.value);
  if (!amount) {
    setStatus('stake-status', 'Enter a positive amount with at most 4 decimals.', 'error');
    return;
  }
  setStatus('stake-status', `Staking ${amount}…`);
  try {
    const data = await tx('chain_stake', [session().address, amount]);
    renderStake(data.stake);
    setStatus('stake-status', `Staked ${amount}. Transaction ${data.txId}.`, 'ok');
    form.reset();
  } catch (error) {
    failure('stake-status')(error);
  }
}

/** Click on "Claim": claims the rewards earned so far. */
export async function claim() {
  setStatus('stake-status', 'Claiming rewards…');
  try {
    const data = await tx('chain_claim', [session().address]);
    renderStake(data.stake);
    setStatus('stake-status', `Claimed ${data.claimed}. Transaction ${data.txId}.`, 'ok');
  } catch (error) {
    failure('stake-status')(error);
  }
}
