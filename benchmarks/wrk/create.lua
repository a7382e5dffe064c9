-- POST a ConfigMap whose name no other request of the whole run uses.
--
-- args: <collection path> <name prefix> <data: a JSON object>
-- The prefix is unique per measurement (run.py puts the round and client
-- count in it) and each wrk thread adds its own id, so names never collide
-- across threads, measurements or rounds: every POST is a real create
-- (201), never a 409.  The same script drives the bare app's POST, so both
-- servers read exactly the same request bytes.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "threads.lua")

local path, prefix, data
local headers = { ["Content-Type"] = "application/json" }
local n = 0

function init(args)
   path, prefix, data = args[1], args[2], args[3]
end

function request()
   n = n + 1
   local name = prefix .. "-" .. thread_id .. "-" .. n
   local body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"' .. name
      .. '","labels":{"app":"bench"}},"data":' .. data .. '}'
   return wrk.format("POST", path, headers, body)
end
