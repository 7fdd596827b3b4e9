/** The MCP server's version, as `serverInfo` and the User-Agent say it; the package's. */
export const MCP_VERSION = '0.1.0';
