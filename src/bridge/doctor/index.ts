/** `chat-mcp-bridge doctor`: why the bridge does or does not connect, as a checklist with the fix for each failure. */

export type { CheckStatus, DoctorCheck, DoctorDependencies, DoctorOptions, DoctorReport } from "./check.js";
export { diagnose, runDoctor } from "./diagnose.js";
