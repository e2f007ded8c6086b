import type { Me, Scope } from './api/client';

/** Who is signed in, as every screen sees it (the app makes it once from GET /api/v1/me). */
export interface Session {
  me: Me;
  can(scope: Scope): boolean;
  /** The analytics dashboard (GET /console/settings.json), which takes this session too. */
  dashboardUrl: string | null;
}
