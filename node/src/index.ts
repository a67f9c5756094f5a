// Public surface of @gpumesh/node.
export {
  buildTinyModel,
  DEFAULT_TINY_MODEL_CONTEXT_TOKENS,
  DEFAULT_TINY_MODEL_NAME,
  DEFAULT_TINY_MODEL_SEED,
  type TinyModelOptions,
} from './models/build-tiny-model.js';
export { tinyModelPath } from './models/tiny-model-path.js';
export { type WriteTinyModelOptions, writeTinyModel } from './models/write-tiny-model.js';
