// drizzle-kit CLI config: `npm run db:generate` writes SQL migrations into data/migrations.
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/tables.ts',
  out: './data/migrations',
  dbCredentials: { url: process.env.DATABASE_PATH ?? 'data/gateway.db' },
});
