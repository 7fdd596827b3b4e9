/**
 * `@studio/dashboard/tooling`: the activity page's queries, as the page sends them, for the plans bench
 * (`bun run bench:activity-plan`, docs/design/workspaces.md).
 */
export { chartQuery } from './activity/chart';
export { entryQuery, pageRoundQuery } from './activity/service';
