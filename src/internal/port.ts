/** A TCP port given on a command line: digits only, up to 65535; 0 ("any free port") only where listening allows it. */
export function portNumber(value: string, { allowZero }: { allowZero: boolean }): number | undefined {
  const port = Number(value);
  return /^\d+$/.test(value) && port <= 65_535 && (allowZero || port >= 1) ? port : undefined;
}
