// My nodes: linking a node to this wallet from the output of `gpumesh-node link --json`.

import { api } from './api.js';
import { setStatus } from './dom.js';
import { formatUsd, shortId } from './format.js';
import { session } from './session.js';
import { personalSign, rejectedInWallet } from './wallet.js';

/** `{ nodeId, nodeSignature }` from the pasted output of `gpumesh-node link --json` (or its text form). */
function parseLinkOutput(text) {
  let nodeId;
  let nodeSignature;
  try {
    const parsed = JSON.parse(text);
    nodeId = parsed?.nodeId;
    nodeSignature = parsed?.nodeSignature;
  } catch {
    nodeId = /node\s+(0x[0-9a-fA-F]{40})/.exec(text)?.[1];
    nodeSignature = /signature\s+(0x[0-9a-fA-F]{130})/.exec(text)?.[1];
  }
  if (!/^0x[0-9a-fA-F]{40}$/.test(nodeId || '') || !/^0x[0-9a-fA-F]{130}$/.test(nodeSignature || '')) {
    return null;
  }
  return { nodeId, nodeSignature };
}

/** Submit of the link form: the wallet signs that the node is its own; true once linked. */
export async function linkNode(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const parsed = parseLinkOutput(form.elements.output.value.trim());
  if (!parsed) {
    setStatus(
      'link-status',
      'Paste the whole output of the command: it holds the node id and its signature.',
      'error',
    );
    return false;
  }
  try {
    setStatus('link-status', 'Sign in your wallet that this node is yours…');
    const text = `gpumesh node owner\nNode: ${parsed.nodeId.toLowerCase()}`;
    const ownerSignature = await personalSign(window.ethereum, text, session().address);
    const { data } = await api('POST', '/api/provider/nodes/link', { ...parsed, ownerSignature });
    setStatus(
      'link-status',
      `Linked ${shortId(data.nodeId)}. ${data.movedEarnings > 0 ? `${formatUsd(data.movedEarnings)} of its earlier earnings moved to you.` : 'It had no earlier earnings.'}`,
      'ok',
    );
    form.reset();
    return true;
  } catch (error) {
    setStatus(
      'link-status',
      rejectedInWallet(error) ? 'Linking was cancelled in the wallet.' : error.message,
      'error',
    );
    return false;
  }
}
