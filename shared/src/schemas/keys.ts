import { type Static, Type as t } from '@sinclair/typebox';
import { IdOut, Nullable, Timestamp } from './fields';

/**
 * What a key is (`GET /v1/key` on either surface): the SDK, the MCP server and integrations check a key with it at
 * start-up, whatever its scopes. Never the key's text.
 */
export const KeyInfo = t.Object({
  id: IdOut('key_…'),
  name: t.String({ maxLength: 100 }),
  kind: t.Union([t.Literal('publishable'), t.Literal('secret')]),
  mode: t.Union([t.Literal('live'), t.Literal('test')], {
    description: "`test`: a sandbox's key (docs/design/test-mode.md), which never reaches live data",
  }),
  studio: t.Object({
    id: IdOut('std_…: the studio the key reaches (a sandbox, for a test key)'),
    name: t.String({ maxLength: 120 }),
  }),
  sandbox: Nullable(
    t.Object({
      name: t.String({ maxLength: 40, description: '`default`, or the name it was given' }),
      liveStudioId: IdOut('std_…: its live studio'),
    }),
  ),
  scopes: t.Array(t.String({ maxLength: 32 }), {
    maxItems: 32,
    description: 'What a secret key may call; a publishable key has none (it reads the Storefront)',
  }),
  expiresAt: Nullable(Timestamp),
  allowedOrigins: Nullable(
    t.Array(t.String({ maxLength: 2048 }), {
      maxItems: 50,
      description: 'A publishable key restricted to its sites: the origins a browser may call from; null for any',
    }),
  ),
});
export type KeyInfo = Static<typeof KeyInfo>;
