"""Tools for developers, not for the check path: the prefix doctor, token estimates, the caching emulator."""
