/** The demo's voice: numbered, timed steps with what was sent and what came back; colour only on a TTY. */

import { createStyle, type Style } from "../cli/io.js";

export { createStyle, type Style };

/** One finished step, for the summary. */
export interface StepRecord {
  id: string;
  title: string;
  ms: number;
}

/** A step that failed: names the step so the exit message says where the demo stopped. */
export class DemoStepError extends Error {
  override readonly name = "DemoStepError";
  constructor(
    readonly stepId: string,
    readonly stepTitle: string,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

/** What a step body uses to tell the reader what it sends and what it gets back. */
export interface StepVoice {
  sent(text: string): void;
  received(text: string): void;
  note(text: string): void;
  /** A shell command line the reader can run themselves. */
  command(text: string): void;
  /** Output of a command, indented under it (stderr dimmed). */
  output(text: string, stream?: "stdout" | "stderr"): void;
}

const INDENT = "     ";

export class Narrator {
  readonly style: Style;
  readonly steps: StepRecord[] = [];
  #write: (text: string) => void;

  constructor(write: (text: string) => void, color: boolean) {
    this.#write = write;
    this.style = createStyle(color);
  }

  line(text = ""): void {
    this.#write(`${text}\n`);
  }

  heading(text: string): void {
    this.line();
    this.line(this.style.bold(text));
  }

  /** A labelled fact, e.g. `Reference server  http://127.0.0.1:1234`. */
  fact(label: string, value: string): void {
    this.line(`  ${this.style.dim(label.padEnd(20))}${value}`);
  }

  note(text: string): void {
    this.line(`  ${this.style.dim(text)}`);
  }

  /** Runs one numbered step, timing it; a failure becomes a DemoStepError naming the step. */
  async step<T>(id: string, title: string, body: (voice: StepVoice) => Promise<T>): Promise<T> {
    const { style } = this;
    this.line();
    this.line(`${style.bold(style.cyan(id.padStart(3)))}  ${style.bold(title)}`);
    const started = performance.now();
    const voice: StepVoice = {
      sent: (text) => this.#block("→", style.yellow, text),
      received: (text) => this.#block("←", style.green, text),
      note: (text) => this.#block(" ", style.dim, text, style.dim),
      command: (text) => this.line(`${INDENT}${style.bold(`$ ${text}`)}`),
      output: (text, stream = "stdout") => {
        for (const row of text.replace(/\s+$/, "").split("\n")) {
          this.line(`${INDENT}  ${stream === "stderr" ? style.dim(row) : row}`);
        }
      },
    };
    try {
      const result = await body(voice);
      const ms = performance.now() - started;
      this.steps.push({ id, title, ms });
      this.line(`${INDENT}${style.green("✓")} ${style.dim(formatMs(ms))}`);
      return result;
    } catch (error) {
      this.line(`${INDENT}${style.red("✗ failed")}`);
      throw error instanceof DemoStepError ? error : new DemoStepError(id, title, error);
    }
  }

  #block(arrow: string, color: (text: string) => string, text: string, body = (row: string) => row): void {
    text.split("\n").forEach((row, index) => {
      this.line(`${INDENT}${index === 0 ? color(arrow) : " "} ${body(row)}`);
    });
  }
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** JSON for narration: whatever fits on a line stays on one, larger values are indented around it. */
export function showJson(value: unknown, indent = 0): string {
  const flat = JSON.stringify(value) ?? "undefined";
  if (flat.length + indent <= 96 || value === null || typeof value !== "object") return flat;
  const pad = " ".repeat(indent + 2);
  const close = " ".repeat(indent);
  if (Array.isArray(value)) {
    return `[\n${value.map((item) => pad + showJson(item, indent + 2)).join(",\n")}\n${close}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
  const body = entries.map(([key, item]) => `${pad}${JSON.stringify(key)}: ${showJson(item, indent + 2)}`);
  return `{\n${body.join(",\n")}\n${close}}`;
}

/** Shortens URLs' query strings (sign-in URLs carry `state` and PKCE values the reader does not need). */
export function elideQueries(text: string): string {
  return text.replace(/(https?:\/\/[^\s?#]+)\?[^\s#]+/g, "$1?…");
}
