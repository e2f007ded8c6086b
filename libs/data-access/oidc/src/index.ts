export { OpenidOidcClient, type OpenidOidcClientOptions } from './openid-oidc-client';
