-- PUT (replace) one of a pool of pre-created ConfigMaps, unconditionally.
--
-- args: <collection path> <name prefix> <pool size> <data: a JSON object>
-- The body carries no metadata.resourceVersion, so kapi does an
-- unconditional update (as `kubectl replace` without a resourceVersion; the
-- ConfigMap strategy allows it): a read, a merge of system fields from the
-- stored object, and a write, with no 409.  A conditional PUT would need the
-- object's current resourceVersion, which wrk cannot track per connection
-- (one Lua state serves many connections).  The server's work is the same
-- either way, apart from one string comparison.
--
-- Every body differs (the "seq" key), because kapi skips the write of an
-- update that changes nothing and we want to measure real writes.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "threads.lua")

local path, prefix, pool, data_head
local headers = { ["Content-Type"] = "application/json" }
local n = 0

function init(args)
   path, prefix, pool = args[1], args[2], tonumber(args[3])
   -- The data object without its closing brace, to append the seq key.
   data_head = args[4]:sub(1, -2)
end

function request()
   n = n + 1
   local name = prefix .. "-" .. ((thread_id * 7919 + n) % pool)
   local body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"' .. name
      .. '","labels":{"app":"bench"}},"data":' .. data_head
      .. ',"seq":"' .. thread_id .. "-" .. n .. '"}}'
   return wrk.format("PUT", path .. "/" .. name, headers, body)
end
