/**
 * The domains a link may be on, as a select's options, the service's default one marked. With
 * `defaultAsEmpty` the default's value is '' (a create without a domain goes on the default one).
 */
export function DomainOptions({
  domains,
  defaultDomain,
  defaultAsEmpty = false,
}: {
  domains: readonly string[];
  defaultDomain: string | null;
  defaultAsEmpty?: boolean;
}) {
  return (
    <>
      {domains.map((d) => (
        <option key={d} value={defaultAsEmpty && d === defaultDomain ? '' : d}>
          {d}
          {d === defaultDomain ? ' (default)' : ''}
        </option>
      ))}
    </>
  );
}
