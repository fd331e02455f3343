#!/usr/bin/env bash
# Installs the current LTS Node binary (npm package node@24) under .ci/node24 for the second test run.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .ci/node24/node_modules/node/bin/node ]; then
  npm install --prefix .ci/node24 --no-save --no-package-lock node@24 >/dev/null
fi
.ci/node24/node_modules/node/bin/node --version
