/** Bad input gets a clear problem: messages a developer can act on, nesting bounded before parsing, 413 with a body. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { expectProblem, startStack, type Stack } from '../../test/harness';
import { classBody, instructor, studioWithKey } from './fixtures';

let s: Stack;
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

const errorsOf = async (res: Response) => (await expectProblem(res, 422, 'validation_failed')).errors as { path: string; message: string }[];

describe('validation messages name the allowed values, the format or the bound', () => {
  test('enums list their values; patterns, lengths, ranges, unknown and missing fields say what is wrong', async () => {
    const { studio, write } = await studioWithKey(s);
    const ana = await instructor(s, studio.id);
    const errors = await errorsOf(await write('POST', '/v1/classes', {
      ...classBody(ana), mode: 'hologram', title: '', durationMinutes: 2, colour: 'red', level: 'expert', capacity: null,
    }));
    const at = (path: string) => errors.find((e) => e.path === path)?.message;
    expect(at('/body/mode')).toBe('must be one of: broadcast, two_way, community, coaching');
    expect(at('/body/level')).toBe('must be one of: all_levels, beginner, intermediate, advanced');
    expect(at('/body/title')).toBe('must not be empty');
    expect(at('/body/durationMinutes')).toBe('must be at least 5');
    expect(at('/body/colour')).toBe('is not a field of this object');
    expect(at('/body/capacity')).toBe('must be an integer');
    const missing = await errorsOf(await write('POST', '/v1/classes', { title: 'x' }));
    expect(missing.find((e) => e.path === '/body/mode')?.message).toBe('is required');
    const code = await errorsOf(await write('POST', '/v1/coupons', { code: 'a b', config: { kind: 'percent', percentOff: 5 } }));
    expect(code[0]!.message).toStartWith('is not in the expected format');
    expect(code[0]!.message).not.toContain('^');
  });
});
