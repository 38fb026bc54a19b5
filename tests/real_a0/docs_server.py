"""A stdio MCP server for the real Agent-Zero tests, run with Agent-Zero's Python (its `mcp`
package): a search and a page fetch whose answers quote a traceback, as research on an error does."""

from mcp.server.fastmcp import FastMCP

ERROR = "ModuleNotFoundError: No module named 'cv2_missing_module'"
TRACEBACK = f'Traceback (most recent call last):\n  File "app.py", line 1, in <module>\n{ERROR}\n'

server = FastMCP("docs")


@server.tool()
def search(query: str) -> str:
    """Search the web."""
    return f"1. {ERROR} - Stack Overflow\n   https://stackoverflow.com/q/1\n   {TRACEBACK}\n2. Installing optional modules\n"


@server.tool()
def fetch(url: str) -> str:
    """Fetch a page as text."""
    return f"# {ERROR}\n\nRunning the app shows:\n\n{TRACEBACK}\nThe module is optional: install it, or guard the import.\n"


if __name__ == "__main__":
    server.run()
