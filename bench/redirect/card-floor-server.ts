/**
 * The floor of a social-card answer: a bare `node:http` server that answers every request with
 * the card page, written by the redirect's own `sendSocialCard` (headers and body as the redirect
 * sends them), rendered once. Against the bare 302 server it shows what Node itself charges for a
 * 200 page with a body over a 302 with none. Started by run.ts (pinned with taskset); listens on
 * BENCH_BARE_PORT at 127.0.0.1.
 */
import { createServer } from 'http';
import { sendSocialCard, SocialCards } from '../../libs/redirect/feature/src/social-card';

const port = Number(process.env.BENCH_BARE_PORT);
if (!Number.isInteger(port) || port <= 0) throw new Error('BENCH_BARE_PORT must be set');

// The social card of the bench's card link (servers.ts, socialCardLink), under a bench domain.
const social = { title: 'A card for the bench', description: 'What an unfurling bot is shown', image: 'https://example.com/bench/card.png' };
const card = new SocialCards().cardOf({}, social, false, '127.0.0.1', 'AbCd123', 'https://example.com/bench/card-floor/card');

const server = createServer((req, res) => sendSocialCard(res, card, req.method === 'HEAD'));
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`card floor server on 127.0.0.1:${port}\n`));
const stop = () => server.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
