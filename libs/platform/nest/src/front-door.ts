import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { IncomingMessage, ServerResponse } from 'http';
import type { FrontHandler } from './http-server';
import type { PinoNestLogger } from './logging';

/** A route answered at the node:http level, in front of Fastify (docs/design.md, "Redirect read path"). */
export interface FrontRouteDefinition {
  readonly methods: readonly string[];
  /** The route as a reader writes it (`/{code}`), for the logs and the docs. */
  readonly path: string;
  /** What the request target must match; the match is handed to the handler. */
  readonly pattern: RegExp;
}

/** A front route's method: answers the request and returns true, or returns false to leave it to Fastify. */
export type FrontRouteMethod = (req: IncomingMessage, res: ServerResponse, match: RegExpExecArray) => boolean;

const FRONT_ROUTES = Symbol('FRONT_ROUTES');

/**
 * Declares a method of a provider as a front route: requests whose method and target match are
 * answered by it before Fastify and Nest see them (the framework's per-request hooks cost the hot
 * route about half its throughput). Everything else goes on to Fastify.
 */
export function FrontRoute(route: FrontRouteDefinition): MethodDecorator {
  return (target, key) => {
    const routes: Array<{ route: FrontRouteDefinition; key: string | symbol }> = Reflect.getMetadata(FRONT_ROUTES, target.constructor) ?? [];
    Reflect.defineMetadata(FRONT_ROUTES, [...routes, { route, key }], target.constructor);
  };
}

/** The front routes an object declares, as one handler for the HTTP server (null: it declares none). */
export function frontHandlerOf(instance: object): FrontHandler | null {
  const declared: Array<{ route: FrontRouteDefinition; key: string | symbol }> = Reflect.getMetadata(FRONT_ROUTES, instance.constructor) ?? [];
  const routes = declared.map(({ route, key }) => ({
    methods: new Set(route.methods),
    pattern: route.pattern,
    handle: ((instance as Record<string | symbol, FrontRouteMethod>)[key] as FrontRouteMethod).bind(instance),
  }));
  if (routes.length === 0) return null;
  if (routes.length === 1) {
    // The usual case (the redirect's one route), without a loop on the hot path.
    const [{ methods, pattern, handle }] = routes;
    return (req, res) => {
      if (!methods.has(req.method!)) return false;
      const match = pattern.exec(req.url ?? '');
      return match !== null && handle(req, res, match);
    };
  }
  return (req, res) => {
    for (const route of routes) {
      if (!route.methods.has(req.method!)) continue;
      const match = route.pattern.exec(req.url ?? '');
      if (match && route.handle(req, res, match)) return true;
    }
    return false;
  };
}

/** The requests an app answers at the node:http level; the server reads `handle` per request. */
export class FrontDoor {
  handle: FrontHandler | null = null;

  constructor(private readonly logger?: PinoNestLogger) {}

  /** The routes of every object given (in order), as one handler. */
  install(instances: readonly object[]): void {
    for (const instance of instances) {
      for (const { route } of (Reflect.getMetadata(FRONT_ROUTES, instance.constructor) ?? []) as Array<{ route: FrontRouteDefinition }>) {
        this.logger?.log(`Mapped {${route.path}, ${route.methods.join('|')}} in front of Fastify (${instance.constructor.name})`, 'FrontRoutes');
      }
    }
    const handlers = instances.map(frontHandlerOf).filter((h): h is FrontHandler => h !== null);
    this.handle = handlers.length === 0 ? null : handlers.length === 1 ? handlers[0] : (req, res) => handlers.some((h) => h(req, res));
  }
}

/** Finds the @FrontRoute methods of the app's providers once they are built, and puts them in front of Fastify. */
@Injectable()
export class FrontRoutes implements OnModuleInit {
  constructor(
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(FrontDoor) private readonly frontDoor: FrontDoor,
  ) {}

  onModuleInit(): void {
    const instances = new Set(this.discovery.getProviders().flatMap(({ instance }) => (instance && typeof instance === 'object' ? [instance as object] : [])));
    this.frontDoor.install([...instances].filter((instance) => frontHandlerOf(instance) !== null));
  }
}
