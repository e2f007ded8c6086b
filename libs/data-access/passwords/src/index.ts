export { Argon2PasswordHasher } from './argon2-password-hasher';
