import { redisClusterNodes } from '@shortlink/testing';
import { describeLinkChangeFeedContract } from '../contract/link-change-feed.contract';
import { RedisLinkChangeFeed } from './redis-link-change-feed';

// Runs against the Redis Cluster of `npm run stack:up` (deploy/local/.run/stack.env).
describeLinkChangeFeedContract('redis pub/sub', async () => new RedisLinkChangeFeed({ nodes: redisClusterNodes() }));
