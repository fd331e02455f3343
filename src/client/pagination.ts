/** Cursor pages of the list endpoints: a page is async-iterable over every item of every page, and so is the promise of one. */
import type { ListPage } from "../wire/index.js";

/** Fetches the page that starts at `cursor`. */
export type PageFetcher<T> = (cursor: string) => Promise<Page<T>>;

/** One page of a list (`{ object, data, nextCursor }`), able to fetch the pages after it. */
export class Page<T> implements AsyncIterable<T> {
  readonly object = "list";
  readonly data: T[];
  readonly nextCursor: string | null;
  readonly #fetchPage: PageFetcher<T>;

  constructor(
    body: { data: T[]; nextCursor?: string | null },
    fetchPage: PageFetcher<T>,
    cursorOfThisPage?: string,
  ) {
    this.data = body.data;
    // A cursor that points back at this very page would loop forever: treat it as the end.
    this.nextCursor = body.nextCursor && body.nextCursor !== cursorOfThisPage ? body.nextCursor : null;
    this.#fetchPage = fetchPage;
  }

  hasNextPage(): boolean {
    return this.nextCursor !== null;
  }

  /** The next page; throws when there is none (check `hasNextPage()` first). */
  getNextPage(): Promise<Page<T>> {
    if (this.nextCursor === null) {
      return Promise.reject(new Error("No next page: check hasNextPage() before calling getNextPage()."));
    }
    return this.#fetchPage(this.nextCursor);
  }

  /** This page and every page after it, fetched one at a time as the loop asks for them. */
  async *iterPages(): AsyncGenerator<Page<T>, void, undefined> {
    let page: Page<T> = this;
    yield page;
    while (page.hasNextPage()) {
      page = await page.getNextPage();
      yield page;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.iterPages()) yield* page.data;
  }

  /** The wire shape, so `JSON.stringify(page)` prints exactly what the service sent. */
  toJSON(): ListPage<T> {
    return { object: this.object, data: this.data, nextCursor: this.nextCursor };
  }
}

/** The pending first page of a list: `await` it for the page, or `for await` it for every item of every page. */
export class PagePromise<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  readonly #page: Promise<Page<T>>;

  constructor(page: Promise<Page<T>>) {
    this.#page = page;
  }

  // biome-ignore lint/suspicious/noThenProperty: a thenable on purpose, so `await client.listChats()` gives the page.
  then<R1 = Page<T>, R2 = never>(
    onfulfilled?: ((page: Page<T>) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#page.then(onfulfilled, onrejected);
  }

  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<Page<T> | R> {
    return this.#page.catch(onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<Page<T>> {
    return this.#page.finally(onfinally);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    yield* await this.#page;
  }

  get [Symbol.toStringTag](): string {
    return "PagePromise";
  }
}
