#!/usr/bin/env bash
# Installs the Python MCP servers the stdio tests run through the gateway (issue 26): `mcp-server-time`
# from PyPI (pinned) into .tools/python-stdio-venv, for test/integration/stdio-python-server.test.ts,
# whose catalog entry runs `<venv>/bin/python -m mcp_server_time`. Prints the venv's python on stdout
# (install-python-venv.sh).
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/install-python-venv.sh" python-stdio-venv mcp-server-time 2026.10.19
