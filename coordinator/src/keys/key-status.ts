/** States of an API key: created active; DELETE moves it to revoked, for good. */
export const KEY_STATUS = { active: 'active', revoked: 'revoked' } as const;
export type KeyStatus = (typeof KEY_STATUS)[keyof typeof KEY_STATUS];
