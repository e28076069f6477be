"""Test helpers shared by the store tests and later adapter tests (MCP, A2A)."""
