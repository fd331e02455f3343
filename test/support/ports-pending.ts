/** Unit test files that still open a port, each to move to the in-process server or to the integration project; the list only shrinks. */
export const PORTS_PENDING = new Set<string>([
  // bridge
]);
