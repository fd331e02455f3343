/** `chat-mcp-bridge doctor`: why the bridge does or does not connect, as a checklist with the fix for each failure. */

export type { CheckStatus, DoctorCheck, DoctorOptions } from "./check.js";
export { type DoctorDependencies, type DoctorReport, diagnose, runDoctor } from "./diagnose.js";
