import { DomainError, ErrorCode } from '@shortlink/core';
import { Link, ShortUrlIdentifier } from './link';
import { LinkChangeHooks } from './link-change-hooks';
import { LinkCommands } from './link-commands';
import { aTestLink } from './testing/links';

const link = (code: string, version = 1): Link => aTestLink(code, { version });

/** Every event in the order it came, as `kind:who:code`. */
function recording(): { events: string[]; hooks: LinkChangeHooks<string> } {
  const events: string[] = [];
  const on = (kind: string) => async (who: string, subject: unknown) => {
    const code = (subject as Link).code ?? (subject as { after?: Link }).after?.code;
    events.push(`${kind}:${who}:${code ?? ''}`);
  };
  return {
    events,
    hooks: {
      created: on('created'),
      edited: on('edited'),
      deleted: async (who, _tenant, id: ShortUrlIdentifier) => void events.push(`deleted:${who}:${id.code}`),
      batch: async (who, _tenant, counts) => void events.push(`batch:${who}:${counts.count}/${counts.failed}`),
      bulk: async (who, _tenant, edit, counts) => void events.push(`bulk:${who}:${edit ? 'edit' : 'delete'}:${counts.count}`),
      moderated: on('moderated'),
    },
  };
}

const stale = () => new DomainError(ErrorCode.PRECONDITION_FAILED, 'stale', {});

describe('LinkCommands', () => {
  const service = {
    create: jest.fn(async (input: { alias?: unknown }) => link(String(input.alias))),
    updateWithPrevious: jest.fn(async (_t: string, id: ShortUrlIdentifier, _e: unknown, ifMatch: number | null) => {
      if (ifMatch === 9) throw stale();
      return { before: link(id.code), after: link(id.code, 2) };
    }),
    remove: jest.fn(async (_t: string, _id: ShortUrlIdentifier, ifMatch: number | null) => {
      if (ifMatch === 9) throw stale();
    }),
    moderateWithPrevious: jest.fn(async (id: ShortUrlIdentifier) => ({ before: link(id.code), after: { ...link(id.code, 2), moderation: 'banned' as const } })),
  };

  it('follows each acknowledged change with its event, naming who asked', async () => {
    const { events, hooks } = recording();
    const commands = new LinkCommands(service, hooks);
    const created = await commands.create('alice', { tenantId: 't1', url: 'https://example.com/a', alias: 'a1' });
    expect(created.code).toBe('a1');
    expect((await commands.edit('bob', 't1', { domain: 'sho.rt', code: 'a1' }, { title: 'x' }, 1)).after.version).toBe(2);
    await commands.moderate('operator', { domain: 'sho.rt', code: 'a1' }, 'banned', 'phishing');
    await commands.remove('alice', 't1', { domain: 'sho.rt', code: 'a1' }, null);
    await commands.batchEnded('ci', 't1', { count: 3, failed: 1 });
    await commands.bulkEnded('ci', 't1', null, { count: 2, failed: 0 }, { tag: 'old' });
    expect(events).toEqual(['created:alice:a1', 'edited:bob:a1', 'moderated:operator:a1', 'deleted:alice:a1', 'batch:ci:3/1', 'bulk:ci:delete:2']);
  });

  it('emits nothing for a change the service refused', async () => {
    const { events, hooks } = recording();
    const commands = new LinkCommands(service, hooks);
    await expect(commands.edit('bob', 't1', { domain: 'sho.rt', code: 'a1' }, { title: 'x' }, 9)).rejects.toThrow('stale');
    await expect(commands.remove('bob', 't1', { domain: 'sho.rt', code: 'a1' }, 9)).rejects.toThrow('stale');
    service.create.mockRejectedValueOnce(new DomainError(ErrorCode.ALIAS_TAKEN, 'taken', {}));
    await expect(commands.create('bob', { tenantId: 't1', url: 'https://example.com/b', alias: 'b1' })).rejects.toThrow('taken');
    expect(events).toEqual([]);
  });
});
