/** HTML for the reference server's pages: escaping and one plain layout with strict security headers. */

export function escapeHtml(value: unknown): string {
  return String(value)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** Tagged template that escapes every interpolated value unless it is already `Html`. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? "";
  values.forEach((value, index) => {
    out += renderValue(value) + (strings[index + 1] ?? "");
  });
  return new Html(out);
}

function renderValue(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(renderValue).join("");
  if (value === undefined || value === null || value === false) return "";
  return escapeHtml(value);
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#222}
.msg{border:1px solid #ddd;border-radius:6px;padding:.6rem .8rem;margin:.6rem 0}.user{background:#f6f8fa}
.meta{color:#666;font-size:.85em}.waits{border-left:4px solid #d9822b;padding:.4rem .8rem;background:#fff8f0}
pre{white-space:pre-wrap;background:#f4f4f4;padding:.5rem}label{display:block;margin:.4rem 0}
.error{color:#b00020}button{padding:.4rem 1rem}`;

/** Headers of every page: no scripts, no framing, no referrer (links may carry one-time tickets), no caching. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** The complete document of a page in the one plain layout. */
export function renderPage(title: string, body: Html): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Chat reference server</title>` +
    `<meta name="viewport" content="width=device-width,initial-scale=1"><style>${STYLE}</style></head>` +
    `<body>${body.text}</body></html>`
  );
}
