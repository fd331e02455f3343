/** Types of scripts/node24.mjs for the test setup that imports it. */
export function testCacheDir(): string;
export function ensureNode24(): string;
