// A user's code reading messages: known parts narrow on `type`, parts of other types stay readable.
import {
  asUnknownPart,
  type ChatClient,
  type FinishReason,
  type Message,
  type MessagePart,
} from "chat-mcp-bridge";

export function requested(message: Message): string[] {
  const names: string[] = [];
  for (const part of message.parts) {
    if (part.type === "agent-action") names.push(...(part.data?.requestedIntegrations ?? []));
    else if (part.type === "tool-call")
      names.push(...(part.suggestedPermissions ?? []).map((p) => p.toolName));
    else if (part.type === "text") names.push(part.text ?? "");
    const other = asUnknownPart(part);
    if (other) names.push(other.type);
  }
  return names;
}

export function describePart(part: MessagePart): string {
  switch (part.type) {
    case "text":
      return part.text ?? "";
    case "agent-action":
      return part.name;
    case "tool-call":
      return String(part.name);
  }
}

export function isBlocked(reason: FinishReason | undefined): boolean {
  // Known reasons complete; any other string is still allowed.
  const known: FinishReason[] = ["stop", "tool-calls", "error", null, "length"];
  return reason === "tool-calls" && known.length > 0;
}

export async function flow(client: ChatClient, chatId: string) {
  const message = await client.getMessage(chatId, "msg_1");
  const parts: MessagePart[] = message.parts;
  const finish: FinishReason | undefined = message.finishReason;
  return { parts, finish, id: message._requestId };
}
