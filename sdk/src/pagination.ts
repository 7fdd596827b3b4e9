/** Cursor pages (docs/design/pagination.md): a page knows how to fetch the next one; a list call walks them lazily. */
import type { RequestOptions } from './types.js';

/**
 * A list call: `await` it for the first page, `for await` it for every record across pages (following
 * `next_cursor`), or walk `.pages()`.
 */
export interface PagePromise<T> extends PromiseLike<Page<T>>, AsyncIterable<T> {
  catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<Page<T> | B>;
  finally(onfinally?: (() => void) | null): Promise<Page<T>>;
  /** Every page, the first included, fetched one at a time as you go. */
  pages(): AsyncIterable<Page<T>>;
}

type Fetcher<T> = (cursor: string | undefined) => Promise<{ data: T[]; next_cursor: string | null }>;

/** One page of a list: its records, and the cursor of the next (null on the last). */
export class Page<T> {
  constructor(
    readonly data: T[],
    /** Pass it as `cursor` to continue later (it carries the list's filters); null on the last page. */
    readonly nextCursor: string | null,
    private readonly fetcher: Fetcher<T>,
  ) {}

  hasNextPage(): boolean {
    return this.nextCursor !== null;
  }

  /** The next page, or null after the last. */
  async next(): Promise<Page<T> | null> {
    if (this.nextCursor === null) return null;
    return pageOf(this.fetcher, this.nextCursor);
  }
}

async function pageOf<T>(fetcher: Fetcher<T>, cursor: string | undefined): Promise<Page<T>> {
  const answer = await fetcher(cursor);
  return new Page(answer.data, answer.next_cursor, fetcher);
}

/** What a paginated method returns: nothing is fetched until it is awaited or iterated. */
export class PageList<T> implements PagePromise<T> {
  private first: Promise<Page<T>> | undefined;

  constructor(
    private readonly fetcher: Fetcher<T>,
    private readonly cursor: string | undefined,
  ) {}

  // biome-ignore lint/suspicious/noThenProperty: a list call is awaited for its first page, as Stripe's and OpenAI's are
  then<A = Page<T>, B = never>(
    onfulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    this.first ??= pageOf(this.fetcher, this.cursor);
    return this.first.then(onfulfilled, onrejected);
  }

  catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<Page<T> | B> {
    return this.then(undefined, onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<Page<T>> {
    return this.then().finally(onfinally);
  }

  async *pages(): AsyncGenerator<Page<T>> {
    let page: Page<T> | null = await this;
    while (page) {
      yield page;
      page = await page.next();
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for await (const page of this.pages()) yield* page.data;
  }
}

/** A paginated method's call: its query's `cursor` starts the walk there. */
export function listOf<T>(
  get: (query: Record<string, unknown>, options?: RequestOptions) => Promise<{ data: T[]; next_cursor: string | null }>,
  query: Record<string, unknown> = {},
  options?: RequestOptions,
): PageList<T> {
  const { cursor, ...rest } = query;
  // a cursor carries its filters: the next pages send the cursor alone with the limit
  return new PageList<T>(
    (c) =>
      get(c === undefined ? query : { cursor: c, ...(rest.limit === undefined ? {} : { limit: rest.limit }) }, options),
    cursor as string | undefined,
  );
}
