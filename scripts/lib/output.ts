/**
 * A child's output, read as it comes until `until` is in it, the stream ends, or `ms` pass (checked between chunks);
 * the text so far. The reader stays the caller's: to release, or to keep draining.
 */
export async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  until: string | RegExp,
  ms: number,
): Promise<string> {
  let out = '';
  const found = () => (typeof until === 'string' ? out.includes(until) : until.test(out));
  const deadline = Date.now() + ms;
  while (!found() && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  return out;
}
