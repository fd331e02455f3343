/** `APIPromise`: what every ChatClient call returns; awaited it is the parsed result, and it also gives the raw answer. */

/** A parsed result with the answer's `x-request-id` as `_requestId` (not enumerable: JSON output is unchanged). */
export type WithRequestId<T> = T extends object ? T & { readonly _requestId?: string | undefined } : T;

/** What `withResponse()` gives: the parsed result, the raw `Response` and its request id. */
export interface APIResponse<T> {
  data: WithRequestId<T>;
  response: Response;
  requestId: string | undefined;
}

/**
 * The pending answer of one call, as openai-node's: `await` it for the parsed result (with `_requestId`),
 * `.withResponse()` for `{ data, response, requestId }`, `.asResponse()` for the raw `Response` with its body
 * unread. The body is parsed only when the result is asked for, and only once.
 */
export class APIPromise<T> extends Promise<WithRequestId<T>> {
  readonly #response: Promise<Response>;
  readonly #parse: (response: Response) => T | Promise<T>;
  #parsed: Promise<WithRequestId<T>> | undefined;

  constructor(response: Promise<Response>, parse: (response: Response) => T | Promise<T>) {
    // The executor's value is never read: then/catch/finally go to the parsed result.
    super((resolve) => resolve(undefined as WithRequestId<T>));
    this.#response = response;
    this.#parse = parse;
  }

  /** `then` and friends return plain promises, not APIPromises without a response. */
  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  /** The raw answer (a 2xx: errors still reject with the typed error), its body unread. */
  asResponse(): Promise<Response> {
    return this.#response;
  }

  /** The parsed result with the raw answer and its request id. */
  async withResponse(): Promise<APIResponse<T>> {
    const [data, response] = await Promise.all([this.#result(), this.#response]);
    return { data, response, requestId: response.headers.get("x-request-id") ?? undefined };
  }

  #result(): Promise<WithRequestId<T>> {
    this.#parsed ??= this.#response.then(async (response) =>
      withRequestId(await this.#parse(response.clone()), response.headers.get("x-request-id")),
    );
    return this.#parsed;
  }

  // Promise's own catch and finally call this then.
  // biome-ignore lint/suspicious/noThenProperty: a Promise subclass; awaiting it gives the parsed result.
  override then<R1 = WithRequestId<T>, R2 = never>(
    onfulfilled?: ((value: WithRequestId<T>) => R1 | PromiseLike<R1>) | null,
    // biome-ignore lint/suspicious/noExplicitAny: Promise's own signature, so callers' handlers type as they do there.
    onrejected?: ((reason: any) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#result().then(onfulfilled, onrejected);
  }

  /**
   * The APIPromise of a call made after some other work (a flow helper that reads the chat first): its answer is
   * the last call's.
   */
  static after<T>(last: Promise<{ call: APIPromise<T> }>): APIPromise<T> {
    // Wrapped in an object: a promise resolved with an APIPromise would await it, parsing it too early.
    const settled = last;
    return new APIPromise(
      settled.then(({ call }) => call.asResponse()),
      () => settled.then(({ call }) => call as PromiseLike<T>),
    );
  }
}

/** Puts `_requestId` on a parsed object, not enumerable, so JSON.stringify and spreading leave it out. */
export function withRequestId<T>(value: T, requestId: string | null | undefined): WithRequestId<T> {
  if (typeof value === "object" && value !== null && requestId && Object.isExtensible(value))
    Object.defineProperty(value, "_requestId", { value: requestId, enumerable: false, configurable: true });
  return value as WithRequestId<T>;
}
