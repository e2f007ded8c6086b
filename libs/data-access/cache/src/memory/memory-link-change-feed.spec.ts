import { describeLinkChangeFeedContract } from '../contract/link-change-feed.contract';
import { MemoryLinkChangeFeed } from './memory-link-change-feed';

describeLinkChangeFeedContract('in-process', async () => new MemoryLinkChangeFeed());
