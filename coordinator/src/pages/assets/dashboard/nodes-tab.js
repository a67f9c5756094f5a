// The "My nodes" tab: the owner's nodes, earnings, linking a node, payouts.

import { $, failure } from './dom.js';
import { loadEarnings } from './earnings.js';
import { linkNode } from './link-node.js';
import { loadNodes } from './nodes.js';
import { loadPayouts, payout } from './payouts.js';
import { session } from './session.js';

/** Reloads every section of the tab (nothing while signed out). */
export function loadNodesPane() {
  if (!session()) return;
  $('link-command').textContent = `gpumesh-node link --owner ${session().address} --json`;
  loadNodes().catch(failure('nodes-status', 'Could not load your nodes'));
  loadEarnings().catch(failure('nodes-status', 'Could not load your earnings'));
  loadPayouts().catch(failure('payout-status', 'Could not load your payouts'));
}

/** Connects the tab's forms; after a link or a payout the tab reloads. */
export function wireNodesPane() {
  $('link-form').addEventListener('submit', async (event) => {
    if (await linkNode(event)) loadNodesPane();
  });
  $('payout-form').addEventListener('submit', async (event) => {
    await payout(event);
    loadNodesPane();
  });
}
