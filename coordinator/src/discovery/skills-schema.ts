import { type Static, Type } from '@sinclair/typebox';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

/**
 * JSON Schema of /api/skills.json, published at /api/skills.schema.json. One source: the same
 * TypeBox object types the builder and validates the document in tests.
 */
export const SkillsSchema = Type.Object(
  {
    schemaVersion: Type.Literal(1),
    name: Type.String({ minLength: 1 }),
    description: Type.String({ minLength: 1 }),
    urls: Type.Object(
      {
        app: Type.String({ format: 'uri' }),
        router: Type.String({ format: 'uri', description: 'OpenAI-compatible base URL is router + /v1' }),
        tx: Type.String({ format: 'uri' }),
        openapi: Type.String({ format: 'uri' }),
        skillsMd: Type.String({ format: 'uri' }),
        quickstart: Type.String({ format: 'uri' }),
        schema: Type.String({ format: 'uri' }),
        rpc: Nullable(Type.String({ format: 'uri' })),
        explorer: Nullable(Type.String({ format: 'uri' })),
      },
      { additionalProperties: false },
    ),
    chain: Type.Object(
      {
        chainId: Type.Integer({ minimum: 1 }),
        gasPriceWei: Type.String({ pattern: '^[0-9]+$' }),
        transactionType: Type.Literal('legacy'),
        eip1559: Type.Literal(false),
        blockTimeMs: Type.Integer({ minimum: 1 }),
        nativeSymbol: Type.String({ minLength: 1 }),
        nativeDecimals: Type.Integer({ minimum: 0 }),
        nativeUsdPriceNano: Type.String({
          pattern: '^[0-9]+$',
          description: 'nanousd (1e-9 USD) per native token',
        }),
        tokens: Type.Array(
          Type.Object(
            {
              symbol: Type.String({ minLength: 1 }),
              address: Nullable(Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' })),
              decimals: Type.Integer({ minimum: 0 }),
            },
            { additionalProperties: false },
          ),
        ),
        topUpSources: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
      },
      { additionalProperties: false },
    ),
    auth: Type.Object(
      {
        signIn: Type.Array(
          Type.Object(
            {
              step: Type.Integer({ minimum: 1 }),
              method: Type.String(),
              path: Type.String(),
              description: Type.String(),
            },
            { additionalProperties: false },
          ),
          { minItems: 3 },
        ),
        messagePrefix: Type.String({ minLength: 1 }),
        signature: Type.Literal(
          'EIP-191 personal_sign (EIP-1271 for contract wallets when the chain is configured)',
        ),
        nonceTtlS: Type.Integer({ minimum: 1 }),
        jwtTtlS: Type.Integer({ minimum: 1 }),
        header: Type.String(),
      },
      { additionalProperties: false },
    ),
    keys: Type.Object(
      {
        maxActive: Type.Integer({ minimum: 1 }),
        format: Type.String(),
        header: Type.String(),
      },
      { additionalProperties: false },
    ),
    staking: Type.Object(
      {
        baseApyBps: Type.Integer({ minimum: 0 }),
        tiers: Type.Array(
          Type.Object(
            {
              name: Type.String(),
              minStake: Type.Integer({ minimum: 0 }),
              multiplierBps: Type.Integer({ minimum: 0 }),
            },
            { additionalProperties: false },
          ),
          { minItems: 1 },
        ),
        amountFormat: Type.String(),
        txMethods: Type.Array(
          Type.Object({ method: Type.String(), public: Type.Boolean() }, { additionalProperties: false }),
          { minItems: 1 },
        ),
      },
      { additionalProperties: false },
    ),
    platformFeeBps: Type.Integer({ minimum: 0 }),
    modelFamilies: Type.Array(Type.String(), { minItems: 1 }),
    limits: Type.Object(
      {
        bodyLimitBytes: Type.Integer({ minimum: 1 }),
        rateLimitWindowS: Type.Integer({ minimum: 1 }),
        signInPerIp: Type.Integer({ minimum: 1 }),
        perUser: Type.Integer({ minimum: 1 }),
        anonymousPerIp: Type.Integer({ minimum: 1 }),
        failedCredentialsPerIp: Type.Integer({ minimum: 1 }),
        /** Vision and voice (config media.*). */
        maxAudioBytes: Type.Integer({ minimum: 1 }),
        maxAudioSeconds: Type.Integer({ minimum: 1 }),
        maxImages: Type.Integer({ minimum: 1 }),
        maxImageBytes: Type.Integer({ minimum: 1 }),
      },
      { additionalProperties: false },
    ),
    errors: Type.Object(
      {
        shape: Type.String(),
        codes: Type.Array(
          Type.Object(
            { code: Type.String(), status: Type.Integer(), type: Type.String(), retryable: Type.Boolean() },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    ),
    endpoints: Type.Array(
      Type.Object(
        {
          method: Type.String({ pattern: '^(GET|POST|PUT|PATCH|DELETE)$' }),
          path: Type.String({ pattern: '^/' }),
          auth: Type.Union([Type.Literal('none'), Type.Literal('jwt'), Type.Literal('apiKey')]),
          summary: Type.String(),
        },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
  },
  {
    $id: 'https://gpumesh.dev/schemas/skills.json',
    title: 'gpumesh skills.json',
    additionalProperties: false,
  },
);

export type Skills = Static<typeof SkillsSchema>;

/** The schema as plain JSON (draft-07), as published. */
export function skillsJsonSchema(): Record<string, unknown> {
  return { $schema: 'http://json-schema.org/draft-07/schema#', ...JSON.parse(JSON.stringify(SkillsSchema)) };
}
