/** Orders test files for a run: the known-slow ones (test/projects.ts) first, then vitest's own order. */
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { SLOW_FILES_FIRST } from "../projects.js";

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const index = SLOW_FILES_FIRST.indexOf(relative(spec.project.config.root, spec.moduleId));
      return index === -1 ? SLOW_FILES_FIRST.length : index;
    };
    // Array.prototype.sort is stable: files not listed keep vitest's order after the listed ones.
    return ordered.sort((a, b) => rank(a) - rank(b));
  }
}
