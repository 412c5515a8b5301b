import { setUp } from '../../support/global-setup';

/** The main suite's global setup (a PostgreSQL server, the template database, dist/), without the browser: no fault test drives one. */
export default async function globalSetup(): Promise<void> {
  await setUp({ browser: false });
}
