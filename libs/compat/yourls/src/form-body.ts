import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';

const FORM = 'application/x-www-form-urlencoded';
/** A form body of at most this many bytes (YOURLS requests are a few parameters). */
export const FORM_BODY_LIMIT = 64 * 1024;

/**
 * Fastify parses JSON only: form bodies (YOURLS clients POST `application/x-www-form-urlencoded`)
 * become an object of their fields, the last value of a repeated name winning. Registered once per
 * app, whichever module asks first.
 */
@Injectable()
export class FormBodyParser implements OnModuleInit {
  constructor(@Inject(HttpAdapterHost) private readonly host: HttpAdapterHost) {}

  onModuleInit(): void {
    const instance = this.host.httpAdapter?.getInstance<FastifyInstance>();
    if (!instance || instance.hasContentTypeParser(FORM)) return;
    instance.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
  }
}
