/** A promise bounded in time: rejects with the given message (or error) when it has not settled within the deadline. */
export function withinDeadline<T>(
  promise: Promise<T>,
  ms: number,
  message: string | (() => Error),
  { unref = false }: { unref?: boolean } = {},
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(typeof message === "string" ? new Error(message) : message()), ms);
    if (unref) timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
