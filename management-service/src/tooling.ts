/**
 * `@studio/management-service/tooling`: what the CLI's demo seed and the benches call without the HTTP app
 * (docs/design/workspaces.md): the class service (the seed writes classes with its rules), a page cursor (a deep page
 * in the `management` bench case), and the events feed's queries whose plans the `events-plan` case reads.
 */
export { createClass } from './classes/service';
export { findQuery, pageQuery } from './events/queries';
export { deleteBatch } from './events/retention';
export { signCursor } from './kit/pagination';
