/** npm start's defaults, apart from scripts/network.ts so `--help` prints them without loading the network. */
export const DEFAULT_APP_PORT = 8080;
export const DEFAULT_RPC_PORT = 8545;
export const DEFAULT_DATA_DIR = './.gpumesh';
/** The tiny model's ids on the network. */
export const CHAT_MODEL_ID = 'gpumesh/tiny-chat';
export const EMBEDDING_MODEL_ID = 'gpumesh/tiny-embed';
/** The model npm start serves by default: trained in this repository (models/mini-chat). */
export const MINI_CHAT_ID = 'gpumesh/mini-chat';
