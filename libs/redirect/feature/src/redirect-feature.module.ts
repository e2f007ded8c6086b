import { DynamicModule, Module } from '@nestjs/common';
import { Registry } from 'prom-client';
import type { AppConfig } from '@shortlink/config';
import { KeyedWindowLimiter } from '@shortlink/core';
import {
  CODE_SECRET,
  isTenantsChange,
  LINK_CHANGE_FEED,
  LINK_REPOSITORY,
  LINK_RESOLVER,
  LinkChangeFeed,
  LinkRepository,
  LinkResolver,
  PASSWORD_HASHER,
  PasswordHasher,
} from '@shortlink/links-domain';
import { LinkRules, PasswordCookies, QrScans, VISITOR_WINDOW_STORE, VisitorLimit, VisitorWindowStore } from '@shortlink/redirect-rules';
import {
  CACHE_STORE,
  CLICK_LEASE_STORE,
  ClickQuota,
  GlobalRateLimiter,
  PasswordAttempts,
  PasswordCheckGate,
  ReadPathModule,
  RedirectPipeline,
  SNAPSHOT_STORE,
} from '@shortlink/read-path';
import { CLICK_EVENT_SINK, ClickEventSink, ClickIds, VISITOR_SECRET } from '@shortlink/clicks-domain';
import { GEO_LOOKUP, GeoLocator } from '@shortlink/visitors-domain';
import { DOMAIN_SETTINGS_STORE, DomainSettingsDirectory, DomainSettingsStore, TENANT_STORE, TenantDirectory, TenantStore } from '@shortlink/tenants-domain';
import { AdminRoutes, APP_LOGGER, ClientAddressResolver, Lifecycle, METRICS_REGISTRY, PinoNestLogger } from '@shortlink/nest-platform';
import { BrokenLinkDirectory, SAFETY_STORE, SafetyStore, visitorReportIntake } from '@shortlink/safety-domain';
import { ClickRecorder } from './click-recorder';
import { DomainFiles } from './domain-files';
import { LinkChangeListener } from './link-changes';
import { RedirectHttpHandler } from './redirect-http.handler';
import { RedirectMetrics } from './redirect.metrics';
import { ShlinkRelay } from './shlink-relay';
import { PathNotFound } from './path-not-found';
import { tlsAllowedRoute } from './tls-allowed.route';
import { VisitorPages } from './visitor-pages';
import { VisitorReportRoute } from './visitor-reports';
import { TrackScriptRoute } from './track-script.route';

/** The ports the redirect app injects; the composition binds them (wiring, or a shared bridge). */
export const REDIRECT_PORTS: readonly symbol[] = [
  LINK_REPOSITORY,
  CACHE_STORE,
  CLICK_EVENT_SINK,
  SNAPSHOT_STORE,
  LINK_CHANGE_FEED,
  GEO_LOOKUP,
  VISITOR_SECRET,
  PASSWORD_HASHER,
  TENANT_STORE,
  DOMAIN_SETTINGS_STORE,
  VISITOR_WINDOW_STORE,
  CLICK_LEASE_STORE,
  CODE_SECRET,
  SAFETY_STORE,
];

/**
 * The redirect app: `GET|HEAD|POST /{code}` (RedirectHttpHandler) over the read path, the click
 * recorder, the change listener, the tenants' directory and the domains' settings (pages, robots.txt,
 * well-known files). Each object's start and stop are
 * registered where it is made; the read path (ReadPathModule) starts before and stops after them.
 */
@Module({})
export class RedirectFeatureModule {
  static forRoot(config: AppConfig): DynamicModule {
    const r = config.redirect;
    return {
      module: RedirectFeatureModule,
      imports: [ReadPathModule.forRedirect(config)],
      // Shlink's REST API on the short domains: health here, the rest relayed to the generation app (docs/design.md, "Compatible APIs").
      // Then any other path: the domain's path-not-found redirect for a browser (Shlink's regular 404), else the framework's 404.
      controllers: [ShlinkRelay, PathNotFound],
      providers: [
        Lifecycle,
        { provide: RedirectMetrics, inject: [METRICS_REGISTRY], useFactory: (registry: Registry) => new RedirectMetrics(registry) },
        {
          provide: ClickRecorder,
          inject: [CLICK_EVENT_SINK, GEO_LOOKUP, VISITOR_SECRET, RedirectMetrics, Lifecycle],
          useFactory: (sink: ClickEventSink, geo: GeoLocator, visitorSecret: string, metrics: RedirectMetrics, lifecycle: Lifecycle) => {
            const recorder = new ClickRecorder(
              { sink, geo, visitorSecret, observer: { dropped: (n) => metrics.clicksDropped.inc(n), sendFailed: () => metrics.clickSendFailures.inc() } },
              config.clickBuffer,
            );
            metrics.readClickBufferSize(() => recorder.buffer.size);
            // Closed after the HTTP server (no more clicks) and before the bus: the buffer is flushed.
            lifecycle.manage({ start: () => recorder.buffer.start(), stop: () => recorder.buffer.close() });
            return recorder;
          },
        },
        {
          provide: DomainSettingsDirectory,
          inject: [DOMAIN_SETTINGS_STORE, Lifecycle, APP_LOGGER],
          useFactory: (store: DomainSettingsStore, lifecycle: Lifecycle, appLogger: PinoNestLogger) => {
            const logger = appLogger.scoped('DomainSettings');
            const directory = new DomainSettingsDirectory(store, {
              refreshMs: r.tenantRefreshMs,
              onOutage: (error) => logger.warn(`domain settings not refreshed, the last ones stay in use: ${(error as Error).message}`),
            });
            lifecycle.manage({ start: () => directory.start(), stop: () => directory.stop() });
            return directory;
          },
        },
        {
          provide: VisitorPages,
          inject: [DomainSettingsDirectory],
          useFactory: (directory: DomainSettingsDirectory) => new VisitorPages(directory, config.links.defaultDomain),
        },
        {
          provide: DomainFiles,
          inject: [DomainSettingsDirectory, LINK_REPOSITORY],
          useFactory: (directory: DomainSettingsDirectory, repository: LinkRepository) => new DomainFiles(directory, repository, r.l1.ttlMs),
        },
        {
          // Each tenant's choice for visitors of its broken links (docs/design.md, "Trust and safety"), read with the tenants.
          provide: BrokenLinkDirectory,
          inject: [SAFETY_STORE, Lifecycle, APP_LOGGER],
          useFactory: (store: SafetyStore, lifecycle: Lifecycle, appLogger: PinoNestLogger) => {
            const logger = appLogger.scoped('BrokenLinkSettings');
            const directory = new BrokenLinkDirectory(store, {
              refreshMs: r.tenantRefreshMs,
              onOutage: (error) => logger.warn(`broken-link settings not refreshed, the last ones stay in use: ${(error as Error).message}`),
            });
            lifecycle.manage({ start: () => directory.start(), stop: () => directory.stop() });
            return directory;
          },
        },
        {
          provide: LinkChangeListener,
          inject: [RedirectPipeline, LINK_CHANGE_FEED, RedirectMetrics, Lifecycle, APP_LOGGER, AdminRoutes, DomainFiles, TenantDirectory, BrokenLinkDirectory],
          useFactory: (
            pipeline: RedirectPipeline,
            feed: LinkChangeFeed,
            metrics: RedirectMetrics,
            lifecycle: Lifecycle,
            logger: PinoNestLogger,
            admin: AdminRoutes,
            files: DomainFiles,
            tenants: TenantDirectory,
            brokenLinks: BrokenLinkDirectory,
          ) => {
            // A change of the tenants (a suspension, broken-link settings) is read again at once, not only at the next refresh.
            const domains = {
              changed: async (change: Parameters<DomainFiles['changed']>[0]) => {
                if (isTenantsChange(change)) await Promise.all([tenants.refresh(), brokenLinks.refresh()]).catch(() => undefined);
                else await files.changed(change);
              },
              dropAll: () => files.dropAll(),
            };
            const listener = new LinkChangeListener({ pipeline, feed, observer: metrics, logger: logger.scoped('LinkChanges'), domains });
            admin.add('/internal/link-changes', listener.route());
            // Subscribed before the listener opens: edits made from now on reach this instance's L1.
            lifecycle.manage({ start: () => listener.start(), stop: () => listener.stop() });
            return listener;
          },
        },
        {
          provide: TenantDirectory,
          inject: [TENANT_STORE, Lifecycle, APP_LOGGER, AdminRoutes, METRICS_REGISTRY],
          useFactory: (store: TenantStore, lifecycle: Lifecycle, appLogger: PinoNestLogger, admin: AdminRoutes, registry: Registry) => {
            const logger = appLogger.scoped('TenantDirectory');
            const directory = new TenantDirectory(store, {
              refreshMs: r.tenantRefreshMs,
              onOutage: (error) => logger.warn(`tenant domains and suspensions not refreshed, the last ones stay in use: ${(error as Error).message}`),
            });
            // The TLS front's question before it obtains a certificate (docs/design.md, "Custom domains and TLS").
            admin.add('/internal/tls-allowed', tlsAllowedRoute(directory, registry));
            lifecycle.manage({ start: () => directory.start(), stop: () => directory.stop() });
            return directory;
          },
        },
        {
          provide: RedirectHttpHandler,
          inject: [
            LINK_RESOLVER,
            ClickRecorder,
            RedirectMetrics,
            GlobalRateLimiter,
            ClientAddressResolver,
            TenantDirectory,
            GEO_LOOKUP,
            ClickQuota,
            PasswordAttempts,
            PASSWORD_HASHER,
            PasswordCheckGate,
            VisitorPages,
            DomainFiles,
            VISITOR_WINDOW_STORE,
            APP_LOGGER,
            CODE_SECRET,
            Lifecycle,
            BrokenLinkDirectory,
          ],
          useFactory: (
            links: LinkResolver,
            recorder: ClickRecorder,
            metrics: RedirectMetrics,
            global: GlobalRateLimiter,
            addresses: ClientAddressResolver,
            tenants: TenantDirectory,
            geo: GeoLocator,
            quota: ClickQuota,
            attempts: PasswordAttempts,
            passwords: PasswordHasher,
            checks: PasswordCheckGate,
            pages: VisitorPages,
            files: DomainFiles,
            visitorWindows: VisitorWindowStore,
            appLogger: PinoNestLogger,
            codeSecret: string,
            lifecycle: Lifecycle,
            brokenLinks: BrokenLinkDirectory,
          ) => {
            const perIp = new KeyedWindowLimiter({ limit: r.rateLimit.perIpPerMinute, windowMs: 60_000 });
            metrics.readRateLimiter(() => perIp.usage);
            const logger = appLogger.scoped('VisitorLimit');
            const visitors = new VisitorLimit(visitorWindows, {
              syncIntervalMs: r.counterSyncMs,
              onFallback: (down, error) =>
                down
                  ? logger.warn(`per-link visitor limit decided on this instance's counts until the shared store answers: ${(error as Error)?.message}`)
                  : logger.log('per-link visitor limit shared again'),
            });
            // Merged every REDIRECT_COUNTER_SYNC_MS; at shutdown the last counts are sent. QR scans per visitor count in the same windows, under their own key.
            lifecycle.manage({ start: () => visitors.start(), stop: () => visitors.stop() });
            const scans = new QrScans(r.qrScansPerVisitorPerMinute, visitors);
            // The cookie key is derived from the code secret, which every instance shares (docs/design.md, "Link options").
            const cookies = new PasswordCookies(codeSecret);
            // The click ids' key too (docs/design.md, "Conversions"): the generation app opens them.
            const clickIds = new ClickIds(codeSecret);
            const options = { rules: new LinkRules(geo, quota, { visitors }), quota, attempts, passwords, checks, cookies, clickIds };
            return new RedirectHttpHandler({ links, recorder, metrics, perIp, global, addresses, config, options, tenants, pages, files, scans, brokenLinks });
          },
        },
        // `/sl-track.js` on every short domain: the first-party cookie script of conversion tracking (docs/analytics.md, "Conversions").
        { provide: TrackScriptRoute, useValue: new TrackScriptRoute() },
        {
          // `POST /r/report` on every short domain: the pages' "Report this link" (docs/design.md, "Trust and safety").
          provide: VisitorReportRoute,
          inject: [SAFETY_STORE, LINK_RESOLVER, ClientAddressResolver, VisitorPages, RedirectMetrics, RedirectHttpHandler, CODE_SECRET],
          useFactory: (
            store: SafetyStore,
            links: LinkResolver,
            addresses: ClientAddressResolver,
            pages: VisitorPages,
            metrics: RedirectMetrics,
            handler: RedirectHttpHandler,
            codeSecret: string,
          ) => {
            const intake = visitorReportIntake(store, config.safety.reportsPerVisitorPerHour, codeSecret);
            return new VisitorReportRoute({ intake, links, addresses, pages, metrics, domainOf: (req) => handler.servedDomainOf(req) });
          },
        },
      ],
    };
  }
}
