import { sql } from 'kysely';
import { afterAll, expect, test } from 'vitest';
import { describeBackends, type TestDatabase } from '../testing/index.js';
import { migrate } from './migrate.js';

describeBackends('migrate', (backend) => {
  const opened: TestDatabase[] = [];
  afterAll(async () => {
    for (const store of opened) await store.close();
  });

  test('default: idempotent, and stores side by side do not see each other', async () => {
    const [a, b] = await Promise.all([backend.open('mig'), backend.open('mig')]);
    opened.push(a!, b!);
    await Promise.all([migrate(a!.db), migrate(b!.db)]);
    await a!.db.insertInto('users').values({ id: 'u1', address: '0xA', created_at: 1 }).execute();
    expect(await b!.db.selectFrom('users').selectAll().execute()).toEqual([]);
    const tables = await sql`select 1 from users`.execute(a!.db);
    expect(tables.rows).toHaveLength(1);
  });
});
