/** What is wrong with one field of a JSON value chat-cli read, as a sentence that names the field: never zod's own wording. */

/** The parts of a zod issue the sentence is made from. */
export interface FieldIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: unknown;
  keys?: string[];
  values?: unknown[];
  minimum?: unknown;
  maximum?: unknown;
  origin?: unknown;
  format?: unknown;
}

/** `"a.0.b"`, or `whole` when the issue is about the value itself. */
export function fieldName(issue: FieldIssue | undefined, whole: string): string {
  return issue?.path.length ? `"${issue.path.map(String).join(".")}"` : whole;
}

/** The value at the issue's path in `value`, or undefined when any step is absent. */
function at(value: unknown, path: PropertyKey[]): unknown {
  let current = value;
  for (const step of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[step];
  }
  return current;
}

const article = (word: string) => `${/^[aeiou]/.test(word) ? "an" : "a"} ${word}`;

/** What is wrong, after the field's name: "is missing", "must be a string", "must not be empty", ... */
export function fieldProblem(issue: FieldIssue | undefined, value: unknown): string {
  if (!issue) return "is not valid";
  const bound = (limit: unknown, word: string) => {
    const unit = issue.origin === "string" ? "characters" : issue.origin === "array" ? "entries" : "";
    return `must ${unit ? "have" : "be"} ${word} ${String(limit)}${unit ? ` ${unit}` : ""}`;
  };
  switch (issue.code) {
    case "invalid_type":
      if (issue.path.length > 0 && at(value, issue.path) === undefined) return "is missing";
      return typeof issue.expected === "string" ? `must be ${article(issue.expected)}` : "has the wrong type";
    case "unrecognized_keys":
      return `has a field it does not know: ${(issue.keys ?? []).map((key) => `"${key}"`).join(", ")}`;
    case "too_small":
      return issue.minimum === 1 && issue.origin !== "number"
        ? "must not be empty"
        : bound(issue.minimum, "at least");
    case "too_big":
      return bound(issue.maximum, "at most");
    case "invalid_value":
      return `must be one of ${(issue.values ?? []).map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_format":
      return typeof issue.format === "string" ? `must be ${article(issue.format)}` : "is not valid";
    // A refinement's message is chat-cli's own sentence.
    case "custom":
      return issue.message;
    default:
      return "is not valid";
  }
}
