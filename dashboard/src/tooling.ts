/**
 * `@studio/dashboard/tooling`: the activity page's queries, as the page sends them, for the plans bench
 * (the `activity-plan` case of `bun run bench`, docs/design/workspaces.md).
 */
export { chartQuery } from './activity/chart';
export { entryQuery, pageRoundQuery } from './activity/queries';
