// query.mjs SQL: runs one SQL statement in an in-memory DuckDB and prints
// its rows as a JSON array of objects (DuckDB's JSON forms: lists as arrays,
// BIGINT and DOUBLE as numbers or strings as @duckdb/node-api gives them).
// scripts/duckdb.sh installs it beside its node_modules; the export tests
// read pds export's Parquet files back with it.
import { DuckDBInstance } from '@duckdb/node-api';

const sql = process.argv[2];
if (!sql) {
  console.error('usage: node query.mjs SQL');
  process.exit(2);
}
const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
const reader = await conn.runAndReadAll(sql);
process.stdout.write(JSON.stringify(reader.getRowObjectsJson()) + '\n');
