// Shlink's own web UI (@shlinkio/shlink-web-component) as a Shlink user serves it: from an origin of
// its own, pointed at one server (`?server=<base URL>&key=<API key>`), default settings, the server's
// version as its health tells (what Shlink's web client does). No Tailwind build: the screens are
// unstyled (but for the modals' fade, which their closing waits for: fixture.css), their requests
// and answers are the real ones.
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import { ShlinkApiClient } from '@shlinkio/shlink-js-sdk';
import { FetchHttpClient } from '@shlinkio/shlink-js-sdk/fetch';
import { ShlinkWebComponent } from '@shlinkio/shlink-web-component';
import './fixture.css';

const params = new URLSearchParams(location.search);
const server = params.get('server') ?? sessionStorage.getItem('server');
const apiKey = params.get('key') ?? sessionStorage.getItem('key');
sessionStorage.setItem('server', server);
sessionStorage.setItem('key', apiKey);

const apiClient = new ShlinkApiClient(new FetchHttpClient(), { baseUrl: server, apiKey });
const root = createRoot(document.getElementById('root'));
apiClient.health().then(
  ({ version }) => root.render(createElement(ShlinkWebComponent, { serverVersion: version, apiClient })),
  (error) => root.render(createElement('p', { id: 'health-error' }, `health failed: ${error?.message ?? error}`)),
);
