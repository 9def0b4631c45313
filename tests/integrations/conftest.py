"""The integration tests' fixtures: the event loop of each test is the root conftest's (``own_event_loop``)."""
