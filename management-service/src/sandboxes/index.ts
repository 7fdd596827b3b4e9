/**
 * `@studio/management-service/sandboxes`: test mode's sandboxes (docs/design/test-mode.md) for the dashboard and the
 * CLI, which create, list, rename, reset and delete them as the Management API resets one; and the demo seed
 * `seed:demo` makes a studio from.
 */
export { seedStudio } from './seed';
export {
  checkedSandboxName,
  createSandbox,
  createSandboxIn,
  DEFAULT_SANDBOX,
  deleteSandboxes,
  ensureDefaultSandbox,
  evictKeysOfStudios,
  findSandbox,
  listSandboxes,
  liveStudioOf,
  MAX_SANDBOXES,
  renameSandbox,
  resetSandbox,
  type SandboxRow,
  sandboxById,
  sandboxNamed,
} from './service';
