import { openapi } from '@elysiajs/openapi';

/**
 * The Storefront OpenAPI 3.1 document (`/openapi.json`) and docs page (`/docs`), built
 * from the route schemas. The gateway serves both on the public port; the page loads
 * the spec from the absolute path `/openapi.json`, which resolves on the gateway's origin.
 */
export const storefrontOpenApi = (publicUrl: string) =>
  openapi({
    path: '/docs',
    specPath: '/openapi.json',
    openapiVersion: '3.1.0',
    exclude: { paths: ['/healthz', '/readyz'] },
    scalar: { url: '/openapi.json' } as never,
    documentation: {
      info: {
        title: 'Studio API — Storefront',
        version: '1.0.0',
        description: 'Read-only public data of one studio, for its website. Authenticate with a publishable key: '
          + '`Authorization: Bearer svc_pk_…`. Every answer carries `ETag` and `Cache-Control: public, max-age=30`; '
          + `CORS is open to any origin. Errors are application/problem+json; codes are listed at ${publicUrl}/docs/problems.`,
      },
      servers: [{ url: publicUrl, description: 'Storefront surface' }],
      tags: [{ name: 'Storefront', description: 'Public, live data of the key\'s studio' }],
      security: [{ PublishableKeyAuth: [] }],
      components: {
        securitySchemes: {
          PublishableKeyAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'svc_pk_<PUBLISHABLE_KEY>', description: 'A publishable key (svc_pk_…): read-only, one studio, safe in browser code.' },
        },
      },
    },
  });
