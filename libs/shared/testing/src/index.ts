/** Integration suites read the stack's addresses from the env that deploy/local/.run/stack.env exports. */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: start the real stack (npm run stack:up) and source deploy/local/.run/stack.env`);
  }
  return value;
}
