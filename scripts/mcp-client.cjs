#!/usr/bin/env node
// A client nobody here wrote: the official TypeScript MCP SDK over
// Streamable HTTP against Switchboard's POST /mcp. tests/mcp_node_test.go
// runs it against the dev binary, so make test runs it.
//
//   node scripts/mcp-client.cjs <url> <bearer token> <tool to call> <JSON args>
//
// It connects (initialize at the SDK's newest protocol version), lists the
// tools, calls the one named, and prints one JSON line: the negotiated
// version, the tool names, the call's isError, text and structured content.
// Exit status 1 on any protocol failure.
'use strict';
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

async function main() {
  const [url, token, tool, args] = process.argv.slice(2);
  if (!url || !token || !tool) {
    throw new Error('usage: mcp-client.cjs <url> <token> <tool> [<JSON args>]');
  }
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'switchboard-node-test', version: '1.0.0' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const res = await client.callTool({ name: tool, arguments: JSON.parse(args || '{}') });
  const out = {
    protocolVersion: transport.protocolVersion,
    tools: tools.map((t) => t.name),
    schemaOf: Object.fromEntries(tools.map((t) => [t.name, t.inputSchema])),
    isError: Boolean(res.isError),
    text: (res.content || []).filter((c) => c.type === 'text').map((c) => c.text),
    structured: res.structuredContent,
  };
  await client.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((err) => {
  process.stderr.write(`mcp-client: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
