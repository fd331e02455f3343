/** Every chat-cli command by name, with the summary the program's help lists; each module loads only when its command runs (as changesets does). */
import type { CommandDefinition } from "../define-command.js";

export interface CommandEntry {
  name: string;
  description: string;
  /** What the program's help shows after the name (commander's words, checked against the definition in a test). */
  usage: string;
  load(): Promise<CommandDefinition>;
}

export const COMMANDS: CommandEntry[] = [
  {
    name: "login",
    description:
      "sign in with your browser (OAuth), as a client with --client-credentials or --workload-token-file, or store a key from stdin with --with-token; the credentials are kept for this base URL",
    usage: "[options]",
    load: async () => (await import("./login.js")).loginCommand,
  },
  {
    name: "logout",
    description: "remove the stored credentials for this base URL",
    usage: "",
    load: async () => (await import("./logout.js")).logoutCommand,
  },
  {
    name: "whoami",
    description: "show the account or team of the token in use and where the token came from",
    usage: "",
    load: async () => (await import("./whoami.js")).whoamiCommand,
  },
  {
    name: "create",
    description: "create a chat from a prompt and show the assistant's answer state",
    usage: "[options] <prompt...>",
    load: async () => (await import("./create.js")).createCommand,
  },
  {
    name: "list",
    description: "list chats, newest-updated first",
    usage: "[options]",
    load: async () => (await import("./list.js")).listCommand,
  },
  {
    name: "get",
    description: "show a chat: URL, hosting project and what it waits for",
    usage: "[options] <chatId>",
    load: async () => (await import("./get.js")).getCommand,
  },
  {
    name: "messages",
    description: "list a chat's messages, newest first",
    usage: "[options] <chatId>",
    load: async () => (await import("./messages.js")).messagesCommand,
  },
  {
    name: "message",
    description: "show one message with its parts",
    usage: "<chatId> <messageId>",
    load: async () => (await import("./message.js")).messageCommand,
  },
  {
    name: "send",
    description: "send a message and show the assistant's reply (rejects any pending request)",
    usage: "<chatId> <text...>",
    load: async () => (await import("./send.js")).sendCommand,
  },
  {
    name: "pending",
    description: "show what the latest assistant message waits for, and whether the chat has a hostProjectId",
    usage: "<chatId>",
    load: async () => (await import("./pending.js")).pendingCommand,
  },
  {
    name: "resolve",
    description: "resolve what the chat waits for (with no flag on a terminal: show it and ask)",
    usage: "[options] <chatId>",
    load: async () => (await import("./resolve.js")).resolveCommand,
  },
  {
    name: "preview",
    description: "print the chat's preview URL",
    usage: "[options] <chatId>",
    load: async () => (await import("./preview.js")).previewCommand,
  },
  {
    name: "serve",
    description: "run the reference server locally and print its URLs, accounts and dev API keys",
    usage: "[options]",
    load: async () => (await import("./serve.js")).serveCommand,
  },
  {
    name: "completion",
    description: "print a completion script for bash, zsh or fish",
    usage: "<shell>",
    load: async () => (await import("./completion.js")).completionCommand,
  },
];
