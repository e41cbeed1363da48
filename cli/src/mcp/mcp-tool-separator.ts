/** The separator between a server's name and its tool's name in what the model sees: `everything__echo` (a module of its own: `kosong mcp` and the help load it without the MCP SDK). */
export const MCP_TOOL_SEPARATOR = '__';
