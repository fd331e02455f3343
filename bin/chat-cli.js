#!/usr/bin/env node
import "../dist/bin/chat-cli.js";
