// Module hooks for a source checkout (registered by load-entry.js): every package is resolved with
// the `gpumesh-source` export condition too, so @gpumesh/* load from their src/*.ts, not dist/.
export async function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier, { ...context, conditions: [...context.conditions, 'gpumesh-source'] });
}
