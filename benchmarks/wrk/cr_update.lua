-- PUT (replace) custom resources of a pool, conditionally, with bodies from a file.
--
-- args: <collection path> <bodies file> <objects file> <threads> <tag>
--
-- <bodies file>: one body per line, cut into four pieces by tabs around its
-- three holes: name, resourceVersion, and a sequence string (JSON never
-- holds a raw tab).  <objects file>: "name resourceVersion variant" per
-- line, as the objects are stored now; variant is the line of the bodies
-- file the stored object was last written from.
--
-- A custom resource cannot be replaced without its resourceVersion, so the
-- script tracks them: every 200 answer carries the object with its new one
-- (the first "resourceVersion" of the body; kapi writes metadata's name and
-- resourceVersion before managedFields).  Thread t of n serves the objects
-- t, t+n, t+2n, ... so no two Lua states share an object, and it cycles
-- through its objects in order: with a pool far larger than the connections
-- a thread holds, an object's next request is built after the answer to
-- its previous one.
--
-- With one body, each update changes only the sequence string; with two,
-- each update also switches the object to the other body (every field of
-- the benchmark's two variants differs).  The tag (unique per measurement)
-- keeps the sequence string different from what is stored.

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "threads.lua")

local path, tag
local headers = { ["Content-Type"] = "application/json" }
local bodies = {}
local names, rv, variant = {}, {}, {}
local n = 0

local function pieces(line)
   local out = {}
   for piece in (line .. "\t"):gmatch("([^\t]*)\t") do
      out[#out + 1] = piece
   end
   assert(#out == 4, "a body needs exactly three holes")
   return out
end

function init(args)
   path, tag = args[1], args[5]
   for line in io.lines(args[2]) do
      bodies[#bodies + 1] = pieces(line)
   end
   local nthreads, i = tonumber(args[4]), 0
   for line in io.lines(args[3]) do
      local name, version, v = line:match("^(%S+) (%S+) (%d+)$")
      if i % nthreads == thread_id then
         names[#names + 1] = name
         rv[name], variant[name] = version, tonumber(v)
      end
      i = i + 1
   end
end

function request()
   n = n + 1
   local name = names[(n - 1) % #names + 1]
   local v = variant[name]
   if #bodies > 1 then
      v = (v + 1) % #bodies
      variant[name] = v
   end
   local p = bodies[v + 1]
   local body = p[1] .. name .. p[2] .. rv[name] .. p[3] .. tag .. "-" .. thread_id .. "-" .. n
      .. p[4]
   return wrk.format("PUT", path .. "/" .. name, headers, body)
end

function response(status, headers, body)
   if status == 200 then
      local name = body:match('"metadata":{"name":"([^"]+)"')
      local version = body:match('"resourceVersion":"(%d+)"')
      if name and version then
         rv[name] = version
      end
   end
end
