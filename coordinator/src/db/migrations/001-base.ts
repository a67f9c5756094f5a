import type { Kysely, Migration } from 'kysely';

/** Users, sign-in nonces, revoked JWTs, kept secrets, wallets, API keys. */
export const base001: Migration & { name: string } = {
  name: '001-base',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('address', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('auth_nonces')
      .addColumn('nonce', 'text', (c) => c.primaryKey())
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('auth_nonces_expires_at').on('auth_nonces').column('expires_at').execute();
    await db.schema
      .createTable('revoked_tokens')
      .addColumn('jti', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('app_secrets')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('wallets')
      .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id'))
      .addColumn('proxy_address', 'text', (c) => c.notNull().unique())
      .addColumn('proxy_key_enc', 'text', (c) => c.notNull())
      .addColumn('native_account', 'text', (c) => c.notNull().unique())
      .addColumn('native_public_key', 'text', (c) => c.notNull())
      .addColumn('native_key_enc', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .addColumn('last_used_at', 'bigint')
      .addColumn('spend_nano', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex('api_keys_user_status')
      .on('api_keys')
      .columns(['user_id', 'status'])
      .execute();
  },
};
