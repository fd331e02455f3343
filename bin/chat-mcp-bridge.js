#!/usr/bin/env node
import "../dist/bin/chat-mcp-bridge.js";
