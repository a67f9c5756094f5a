/** gpumesh node protocol v0. */
export const PROTOCOL_VERSION = 0;
