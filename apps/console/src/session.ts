import type { Me, Scope } from './api/client';

/** What the installation tells the console (GET /console/settings.json). */
export interface ConsoleSettings {
  /** The analytics dashboard, which takes this session too. */
  dashboardUrl: string | null;
  /** The service's default domain: every tenant's links may be on it (the domains API lists it for operators only). */
  defaultDomain: string | null;
  /** The service's other domains every tenant's links may be on. */
  sharedDomains: string[];
}

/** Who is signed in, as every screen sees it (the app makes it once from GET /api/v1/me). */
export interface Session {
  me: Me;
  can(scope: Scope): boolean;
  /** The analytics dashboard (GET /console/settings.json), which takes this session too. */
  dashboardUrl: string | null;
  settings: ConsoleSettings;
}
