// The dashboard's tabs (WAI-ARIA tablist): "Credits and keys" and "My nodes" (#nodes).

import { $ } from './dom.js';
import { loadNodesPane } from './nodes-tab.js';

const TABS = ['account', 'nodes'];

/** Shows the tab `name`, loads "My nodes" when it opens, and keeps the choice in the URL. */
export function selectTab(name) {
  for (const tab of TABS) {
    const selected = tab === name;
    const button = $(`tab-${tab}`);
    button.setAttribute('aria-selected', String(selected));
    button.tabIndex = selected ? 0 : -1;
    $(`pane-${tab}`).hidden = !selected;
  }
  if (name === 'nodes') loadNodesPane();
  history.replaceState(null, '', name === 'nodes' ? '#nodes' : location.pathname);
}

/** Connects the tab buttons. */
export function wireTabs() {
  for (const tab of TABS) $(`tab-${tab}`).addEventListener('click', () => selectTab(tab));
}
