/** Types of scripts/node-release.mjs for the test setup that imports it. */
export function testCacheDir(): string;
export function ensureNode(major: number): string;
export function ensureNode24(): string;
