"""KEP-2339 on the server side: registering this server's storage versions, the
write gate's state, the garbage collection of stale entries, and storage migration."""
