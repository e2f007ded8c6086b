import { describeKeyAuthorityJourney } from './key-authority-journey';
import { useRealStackGenerations } from './support';

/**
 * Keys within the role of their person (docs/design.md, "Security model") on the real stack: two
 * generation instances over MariaDB (keys, members, the audit log) and Redis Cluster; a demotion,
 * a removal or a hand-over made on one instance reaches the keys checked on the other within a second.
 */
describe('real stack: a key never outranks its person, on two generation instances', () => {
  const bases = useRealStackGenerations(2);
  describeKeyAuthorityJourney(() => [bases()[0], bases()[1]]);
});
