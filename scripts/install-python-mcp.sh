#!/usr/bin/env bash
# Installs the official MCP Python SDK (PyPI `mcp`, pinned) into .tools/python-mcp-venv, for
# test/integration/python-sdk.test.ts, which drives the gateway with the SDK's own client
# (test/fixtures/python-mcp-client.py). Prints the venv's python on stdout (install-python-venv.sh).
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/install-python-venv.sh" python-mcp-venv mcp 2.3.0
