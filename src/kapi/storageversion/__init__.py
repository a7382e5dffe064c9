"""KEP-2339 on the server side: registering this server's storage versions, the
write gate's state, and the garbage collection of stale entries."""
