/** Typo suggestions for subcommands: the closest known name within two edits, or none. */
import { describe, expect, it } from "vitest";
import { closestName } from "../../src/internal/closest-name.js";

const COMMANDS = ["login", "logout", "doctor"];

describe("closestName", () => {
  it.each([
    ["doctr", "doctor"],
    ["logut", "logout"],
    ["lgoin", "login"],
    ["Doctor", "doctor"],
    ["dcotor", "doctor"],
  ])("%s -> %s", (typo, expected) => {
    expect(closestName(typo, COMMANDS)).toBe(expected);
  });

  it.each(["doctor", "https://example.com/mcp", "relay", "x", "status"])("%s -> no suggestion", (word) => {
    expect(closestName(word, COMMANDS)).toBeUndefined();
  });
});
