/** Cursor pages of the list endpoints: a page is async-iterable over every item of every page, and so is the promise of one. */
import type { ListPage } from "../wire/index.js";
import { APIPromise } from "./api-promise.js";

/** Fetches the page that starts at `cursor`. */
export type PageFetcher<T> = (cursor: string) => PromiseLike<Page<T>>;

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
  async getNextPage(): Promise<Page<T>> {
    if (this.nextCursor === null)
      throw new Error("No next page: check hasNextPage() before calling getNextPage().");
    return await this.#fetchPage(this.nextCursor);
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

/**
 * The pending first page of a list, an `APIPromise` (as openai-node's PagePromise): `await` it for the page,
 * `.withResponse()` / `.asResponse()` for the first page's answer, or `for await` it for every item of every page.
 */
export class PagePromise<T> extends APIPromise<Page<T>> implements AsyncIterable<T> {
  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    yield* await this;
  }
}
