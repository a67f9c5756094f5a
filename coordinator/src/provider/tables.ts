import type { ColumnType } from 'kysely';

/** A node's owner wallet (lowercase address), from its owner proof. */
export interface NodeOwnersTable {
  node_id: string;
  owner: string;
  linked_at: ColumnType<string | number | bigint, number, number>;
}

export interface ProviderTables {
  node_owners: NodeOwnersTable;
}
