"""kplane's asyncio client: a REST client for any resource, the start of client-go in Python."""
