import { useRealStackGenerations } from './support';
import { describeUrlPolicyJourney } from './url-policy-journey';

/**
 * Domain and URL-policy items on the real stack: two generation instances on the MariaDB
 * meta database and shards; a tenant domain added through one is refused as a target by the other
 * within REDIRECT_TENANT_REFRESH_MS.
 */
describe('real stack: domains and the URL policy across two generation instances', () => {
  const bases = useRealStackGenerations(2);

  describeUrlPolicyJourney(
    () => bases()[0],
    () => bases()[1],
  );
});
