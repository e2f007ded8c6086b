import { join } from 'path';

/** The repository's root (where tools/register.js and the apps are). */
export const REPO_ROOT = join(__dirname, '..', '..', '..', '..');
