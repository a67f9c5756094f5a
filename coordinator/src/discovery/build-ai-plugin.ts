import type { CoordinatorConfig } from '../config.js';

/**
 * /.well-known/ai-plugin.json: the agent-plugin manifest (schema_version v1), pointing agents at
 * the OpenAPI document and the wallet-bearer auth.
 */
export function buildAiPlugin(config: Pick<CoordinatorConfig, 'publicUrl' | 'contactEmail'>) {
  const app = config.publicUrl;
  return {
    schema_version: 'v1',
    name_for_human: 'gpumesh',
    name_for_model: 'gpumesh',
    description_for_human: 'Paid AI inference on an open GPU network; sign in with a wallet.',
    description_for_model:
      'gpumesh runs OpenAI-compatible inference (POST {router}/v1/chat/completions, /v1/completions, /v1/embeddings) ' +
      'paid from wallet-funded USD credits. Sign in: GET /api/auth/nonce?address=, sign the message (EIP-191), ' +
      'POST /api/auth/verify for a JWT; create an sk- key with POST /api/router/keys; fund credits by sending ' +
      'tokens to GET /api/keys/proxy then POST /api/user/topup. Full guide: /SKILLS.md; machine-readable: /api/skills.json.',
    auth: { type: 'user_http', authorization_type: 'bearer' },
    api: { type: 'openapi', url: `${app}/api/openapi.json`, is_user_authenticated: false },
    logo_url: `${app}/logo.svg`,
    contact_email: config.contactEmail,
    legal_info_url: `${app}/SKILLS.md`,
  };
}
