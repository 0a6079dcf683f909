"""A test-only app for the live tasks tests: a task tool whose end the test controls."""
