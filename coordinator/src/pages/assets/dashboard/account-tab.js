// The "Credits and keys" tab: credits and top-up, API keys, usage, activity and stake.

import { exportActivity, loadActivity, moreActivity } from './activity.js';
import { loadProxy, loadUser, topUp } from './credits.js';
import { $, failure } from './dom.js';
import { createKey, loadKeys } from './keys.js';
import { claim, loadStake, stake } from './staking.js';
import { loadUsage } from './usage.js';

/** Reloads every section of the tab; each failure shows in its own status line. */
export function loadAccountPane() {
  loadUser().catch(failure('app-status', 'Could not load your credits'));
  loadProxy().catch(failure('topup-status', 'Could not load your proxy wallet'));
  loadKeys().catch(failure('key-status', 'Could not load your keys'));
  loadUsage().catch(failure('usage-status', 'Could not load your usage'));
  loadActivity().catch(failure('activity-status', 'Could not load your activity'));
  loadStake().catch(failure('stake-status', 'Could not load your stake'));
}

/** Connects the tab's forms and buttons. */
export function wireAccountPane() {
  $('topup-form').addEventListener('submit', topUp);
  $('key-form').addEventListener('submit', createKey);
  $('stake-form').addEventListener('submit', stake);
  $('claim').addEventListener('click', claim);
  $('activity-more').addEventListener('click', moreActivity);
  $('activity-export').addEventListener('click', exportActivity);
}
