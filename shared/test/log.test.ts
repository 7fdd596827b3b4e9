import { afterEach, beforeEach, expect, spyOn, test } from 'bun:test';
import { type LogLevel, log, setLogLevel } from '@studio/shared';

// each test starts at info and leaves the level as it found it (the suite runs at warn: test/preload.ts)
let before: LogLevel;
beforeEach(() => (before = setLogLevel('info')));
afterEach(() => setLogLevel(before));

test('LOG_LEVEL is honoured: lines below the level are not written; warnings and errors go to stderr', () => {
  const out = spyOn(console, 'log').mockImplementation(() => {});
  const err = spyOn(console, 'error').mockImplementation(() => {});
  try {
    setLogLevel('warn');
    log('debug', 'd');
    log('info', 'i');
    log('warn', 'w');
    log('error', 'e');
    expect(out).not.toHaveBeenCalled();
    expect(err.mock.calls.map(([line]) => JSON.parse(String(line)).msg)).toEqual(['w', 'e']);
    expect(setLogLevel('debug')).toBe('warn'); // and says what it replaced, so a test can put it back
    log('debug', 'd2', { requestId: 'req_1' });
    expect(JSON.parse(String(out.mock.calls[0]![0]))).toMatchObject({ level: 'debug', msg: 'd2', requestId: 'req_1' });
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
});
