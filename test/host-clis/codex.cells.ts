/** codex's cells (test/host-clis/cells.ts), in its own loopback-only namespace: `npm run test:hosts`. */
import { describeHostCells } from "./cells.js";

describeHostCells("codex");
