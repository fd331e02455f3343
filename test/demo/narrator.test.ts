/** The demo's narration: steps are numbered and timed, a failure names its step, and sign-in URLs lose their queries. */
import { describe, expect, it } from "vitest";
import { DemoStepError, elideQueries, Narrator, showJson } from "../../src/demo/narrator.js";

function capture(color = false) {
  let text = "";
  return { narrator: new Narrator((chunk) => (text += chunk), color), text: () => text };
}

describe("a step that succeeds", () => {
  it("prints its id and title, what was sent and received, and is recorded for the summary", async () => {
    const { narrator, text } = capture();
    const value = await narrator.step("A3", "Create a chat", async (say) => {
      say.sent('create_chat {"message":"hi"}');
      say.received("chat chat_1");
      return 42;
    });
    expect(value).toBe(42);
    expect(text()).toMatch(/A3 {2}Create a chat/);
    expect(text()).toContain('→ create_chat {"message":"hi"}');
    expect(text()).toContain("← chat chat_1");
    expect(narrator.steps.map((step) => step.id)).toEqual(["A3"]);
  });
});

describe("a step that fails", () => {
  it("throws a DemoStepError naming the step, with the cause's message", async () => {
    const { narrator } = capture();
    const failing = narrator.step("B3", "Confirm the integrations", async () => {
      throw new Error("chat-cli resolve exited with code 3");
    });
    await expect(failing).rejects.toMatchObject({
      name: "DemoStepError",
      stepId: "B3",
      stepTitle: "Confirm the integrations",
      message: "chat-cli resolve exited with code 3",
    });
    await failing.catch((error: unknown) => expect(error).toBeInstanceOf(DemoStepError));
    expect(narrator.steps).toEqual([]);
  });
});

describe("colour", () => {
  it("has no escape codes when colour is off (not a TTY)", async () => {
    const { narrator, text } = capture(false);
    narrator.heading("A. Through the bridge");
    await narrator.step("A1", "Sign in", async (say) => say.note("…"));
    expect(text()).not.toContain("\u001b[");
  });

  it("uses escape codes when colour is on", () => {
    const { narrator, text } = capture(true);
    narrator.heading("A. Through the bridge");
    expect(text()).toContain("\u001b[1m");
  });
});

describe("what the narration shows", () => {
  it("drops query strings from URLs (state and PKCE values of sign-in URLs)", () => {
    expect(elideQueries("visit http://127.0.0.1:9/authorize?state=s3cret&code_challenge=x now")).toBe(
      "visit http://127.0.0.1:9/authorize?… now",
    );
  });

  it("keeps short JSON on one line and indents long JSON", () => {
    expect(showJson({ chatId: "c1", limit: 5 })).toBe('{"chatId":"c1","limit":5}');
    const long = {
      chatId: "c".repeat(40),
      task: { type: "confirmed-permissions", permissions: [{ a: "b".repeat(60) }] },
    };
    const shown = showJson(long);
    expect(shown.split("\n").length).toBeGreaterThan(1);
    expect(JSON.parse(shown)).toEqual(long);
  });
});
