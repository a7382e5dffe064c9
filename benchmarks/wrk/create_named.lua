-- POST any object whose name no other request of the whole run uses.
--
-- args: <collection path> <name prefix> <body head> <body tail>
-- The body sent is head .. name .. tail: the caller splits a JSON manifest
-- at its metadata.name (workload_bench.py does it for a Deployment).  Names
-- are made unique as in create.lua (prefix, wrk thread id, counter), so every
-- POST is a real create (201), never a 409.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "threads.lua")

local path, prefix, head, tail
local headers = { ["Content-Type"] = "application/json" }
local n = 0

function init(args)
   path, prefix, head, tail = args[1], args[2], args[3], args[4]
end

function request()
   n = n + 1
   return wrk.format("POST", path, headers, head .. prefix .. "-" .. thread_id .. "-" .. n .. tail)
end
